"""A seccomp filter (libseccomp through ``pyseccomp``) for the processes that run scripts.

It refuses (EPERM) system calls an analysis never needs and that would reach around the other
layers: ``socket`` (no network even without a network namespace), SysV IPC, ``execve``/``execveat`` (a script never needs to start a program, and the audit hook's refusal of
new processes can be reached around, e.g. by ``_posixsubprocess.fork_exec``), ``memfd_create`` (anonymous memory files that no rlimit counts: the work folder and the
temp tmpfs are the places to write), ``ptrace``/``process_vm_*``, making or joining namespaces
and mounts, ``bpf``, ``perf_event_open``, ``userfaultfd``, ``io_uring`` (which runs system calls
past the audit hook), the kernel keyring, module loading and ``kexec``.

Filters stack and are inherited across fork, so it is installed once per process chain
(:func:`install` is a no-op when this process already has it).
"""

from __future__ import annotations

import errno
import functools

__all__ = ["DENIED", "available", "install"]

DENIED = (
    "execve", "execveat", "memfd_create", "memfd_secret", "ptrace", "process_vm_readv", "process_vm_writev", "mount", "umount2", "pivot_root",
    "chroot", "unshare", "setns", "mount_setattr", "open_tree", "move_mount", "fsopen", "fsmount", "fsconfig",
    "fspick", "bpf", "perf_event_open", "userfaultfd", "io_uring_setup", "io_uring_enter", "io_uring_register",
    "keyctl", "add_key", "request_key", "init_module", "finit_module", "delete_module", "kexec_load",
    "kexec_file_load", "open_by_handle_at", "swapon", "swapoff", "reboot", "acct", "quotactl",
    # no new sockets (socketpair stays: the worker's own channels) and no SysV IPC, which no rlimit counts and which,
    # without namespaces (the namespace-free tier), would be shared with every process of the machine
    "socket", "shmget", "shmat", "msgget", "msgsnd", "msgrcv", "semget", "semop", "semtimedop",
)
_CLONE_NEWUSER = 0x10000000
_state = {"installed": False}


@functools.lru_cache(maxsize=1)
def available() -> tuple[bool, str]:
    """(usable, why not): pyseccomp imports and libseccomp loads."""
    try:
        import pyseccomp  # noqa: F401 - the import itself is the check
    except Exception as e:  # noqa: BLE001 - missing package or missing libseccomp.so
        return False, f"pyseccomp/libseccomp is not available ({type(e).__name__}: {e})"
    return True, ""


def install() -> bool:
    """Load the filter into this process (and so every process it forks); True when it is in place."""
    if _state["installed"]:
        return True
    if not available()[0]:
        return False
    import pyseccomp as sc

    f = sc.SyscallFilter(defaction=sc.ALLOW)
    for name in DENIED:
        try:
            f.add_rule(sc.ERRNO(errno.EPERM), name)
        except (ValueError, OSError, RuntimeError):
            pass  # a call this kernel/libseccomp does not know
    try:
        # clone3 passes its flags in memory the filter cannot read: refuse it (glibc then uses clone)
        # and refuse clone with CLONE_NEWUSER.
        f.add_rule(sc.ERRNO(errno.ENOSYS), "clone3")
        f.add_rule(sc.ERRNO(errno.EPERM), "clone", sc.Arg(0, sc.MASKED_EQ, _CLONE_NEWUSER, _CLONE_NEWUSER))
    except (ValueError, OSError, RuntimeError):
        pass
    try:
        f.load()
    except (OSError, RuntimeError):
        return False
    _state["installed"] = True
    return True
