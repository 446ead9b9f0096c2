"""Make this process (and what it starts) a place where no namespace can be made, as in a Docker container.

Docker's default seccomp profile refuses ``unshare``, ``setns``, ``mount``/``umount2``, ``pivot_root`` and
``clone`` with any CLONE_NEW* flag to a container without CAP_SYS_ADMIN, and answers ``clone3`` with
ENOSYS (so that glibc falls back to ``clone``, whose flags a filter can read). This installs the same
refusals (a filter outlives ``execve``), so bubblewrap cannot start and the sandbox must use its
namespace-free tier. Unlike ``sysctl user.max_user_namespaces=0`` it touches nothing outside this process
tree, so other sandboxes on the machine are unaffected.

``python no_userns.py PROGRAM ARGS...`` runs PROGRAM so.
"""

from __future__ import annotations

import ctypes
import errno
import os
import sys

_CLONE_NEW = {"NEWNS": 0x20000, "NEWCGROUP": 0x02000000, "NEWUTS": 0x04000000, "NEWIPC": 0x08000000,
              "NEWUSER": 0x10000000, "NEWPID": 0x20000000, "NEWNET": 0x40000000, "NEWTIME": 0x80}


def refuse_namespaces() -> None:
    import pyseccomp as sc

    f = sc.SyscallFilter(defaction=sc.ALLOW)
    for name in ("unshare", "setns", "mount", "umount2", "pivot_root", "fsopen", "fsmount", "move_mount", "open_tree"):
        f.add_rule(sc.ERRNO(errno.EPERM), name)
    for flag in _CLONE_NEW.values():
        f.add_rule(sc.ERRNO(errno.EPERM), "clone", sc.Arg(0, sc.MASKED_EQ, flag, flag))
    f.add_rule(sc.ERRNO(errno.ENOSYS), "clone3")
    ctypes.CDLL(None, use_errno=True).prctl(38, 1, 0, 0, 0)  # no_new_privs: an ordinary user may then load it
    f.load()


if __name__ == "__main__":
    refuse_namespaces()
    os.execvp(sys.argv[1], sys.argv[1:])
