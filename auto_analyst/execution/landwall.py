"""The namespace-free tier's file-system wall: Landlock (see docs/sandbox.md, "Two tiers").

Where no namespace can be made (Docker's default seccomp profile, many Kubernetes clusters), bubblewrap
cannot start. Landlock needs none: an unprivileged process restricts itself and every process it forks,
for good. Each session's state process, right after the zygote forks it, gets a ruleset allowing

* reading (files and listings) the Python runtime and its libraries, this package, ``/usr`` and the
  ``/bin``, ``/lib*`` links, the few files of ``/etc`` that libraries read, ``/proc``, ``/dev/zero``,
  ``/dev/full``, ``/dev/(u)random`` and ``/sys/devices/system/cpu``; reading and writing ``/dev/null``;
* everything in its own work folder; reading its DuckDB folder;
* listing (not reading) each ``sys.path`` folder, so the import system still finds this package there;

and nothing else: not the server's HOME, the state folder (uploads, other sessions, history, config),
``/tmp``, ``/dev/shm`` or another session's folders. With Landlock ABI 4 (Linux 6.7) TCP bind/connect is
refused too, and with ABI 6 (Linux 6.12) signals and abstract Unix sockets cannot reach any process outside
the session (the server, the zygote, other sessions), even of the same uid. Ptrace of processes outside the
domain is refused at every ABI. Landlock also forbids mounts to a restricted process.

Why not the PyPI ``landlock`` package's ``Ruleset``: it handles file-system rights only (no TCP, no
scopes) and its error check reads ``errno`` after successful calls too (ctypes keeps a stale one), so
the three system calls are made here; the package's ``FSAccess`` flags name the rights.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import functools
import os

__all__ = ["abi", "available", "ruleset", "restrict"]

_SYS_CREATE, _SYS_ADD_RULE, _SYS_RESTRICT = 444, 445, 446  # the same number on every architecture since 5.13
_CREATE_RULESET_VERSION = 1
_RULE_PATH_BENEATH = 1
_NET_BIND_TCP, _NET_CONNECT_TCP = 1, 2
_SCOPE_ABSTRACT_UNIX_SOCKET, _SCOPE_SIGNAL = 1, 2
_PR_SET_NO_NEW_PRIVS = 38
# Files of /etc that libraries read (the same list the full wall shows).
_ETC = ("ld.so.cache", "ld.so.conf", "ld.so.conf.d", "localtime", "timezone", "fonts", "passwd", "group",
        "nsswitch.conf", "mime.types", "matplotlibrc", "alternatives")
_SYSTEM_READ = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/proc", "/sys/devices/system/cpu",
                "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom")


class _RulesetAttr(ctypes.Structure):
    _fields_ = [("handled_access_fs", ctypes.c_uint64), ("handled_access_net", ctypes.c_uint64),
                ("scoped", ctypes.c_uint64)]


class _PathBeneath(ctypes.Structure):
    _pack_ = 1  # the kernel's struct is packed: 12 bytes
    _fields_ = [("allowed_access", ctypes.c_uint64), ("parent_fd", ctypes.c_int32)]


@functools.lru_cache(maxsize=1)
def _libc():
    return ctypes.CDLL(ctypes.util.find_library("c") or None, use_errno=True)


def _syscall(*args) -> int:
    ctypes.set_errno(0)
    ret = _libc().syscall(*[ctypes.c_long(a) if isinstance(a, int) else a for a in args])
    if ret < 0:
        err = ctypes.get_errno()
        raise OSError(err, f"landlock: {os.strerror(err)}")
    return ret


@functools.lru_cache(maxsize=1)
def abi() -> int:
    """The kernel's Landlock ABI version: 0 when Landlock is missing or disabled (or the call is refused)."""
    try:
        return _syscall(_SYS_CREATE, None, ctypes.c_size_t(0), ctypes.c_uint32(_CREATE_RULESET_VERSION))
    except (OSError, AttributeError):
        return 0


def available() -> tuple[bool, str]:
    """(usable, why not)."""
    if abi() < 1:
        return False, "Landlock is not available (Linux 5.13 or later with Landlock enabled at boot; or refused here)"
    try:
        from landlock import FSAccess  # noqa: F401 - the flags' names
    except ImportError:
        return False, "the PyPI package landlock is not installed (reinstall auto-analyst)"
    return True, ""


def _rights(level: int) -> tuple[int, int, int]:
    """(every file-system right this ABI handles, the rights of a file, of reading)."""
    from landlock import FSAccess as F

    file_rights = F.EXECUTE | F.WRITE_FILE | F.READ_FILE | (F.TRUNCATE if level >= 3 else 0)
    every = file_rights | F.READ_DIR | F.REMOVE_DIR | F.REMOVE_FILE | F.MAKE_CHAR | F.MAKE_DIR | F.MAKE_REG | \
        F.MAKE_SOCK | F.MAKE_FIFO | F.MAKE_BLOCK | F.MAKE_SYM | (F.REFER if level >= 2 else 0)
    # IOCTL_DEV (ABI 5) is left unhandled: reads of /dev/urandom and isatty() on /dev/null keep working.
    return int(every), int(file_rights), int(F.READ_FILE | F.READ_DIR)


def _add(fd_ruleset: int, fd: int, access: int, file_rights: int) -> None:
    import stat

    if not stat.S_ISDIR(os.fstat(fd).st_mode):
        access &= file_rights  # a file takes file rights only (else EINVAL)
    if access:
        attr = _PathBeneath(access, fd)
        _syscall(_SYS_ADD_RULE, fd_ruleset, ctypes.c_int(_RULE_PATH_BENEATH), ctypes.byref(attr), ctypes.c_uint32(0))


def ruleset(workdir_fd: int, read_paths: list[str], list_paths: list[str], duck_fd: int = -1) -> int:
    """Build (not yet apply) a session's ruleset; returns its descriptor for :func:`restrict`.

    Args:
        workdir_fd: a descriptor of the session's work folder: every right beneath it.
        read_paths: folders (or files) to read beneath, besides the system ones listed above.
        list_paths: folders whose entries may be listed, not read (``sys.path`` folders).
        duck_fd: a descriptor of the session's DuckDB folder (read only), or -1.

    Call before dropping privileges (the paths are opened here). Raises OSError when Landlock refuses.
    """
    from landlock import FSAccess as F

    level = abi()
    every, file_rights, read = _rights(level)
    attr = _RulesetAttr(every, (_NET_BIND_TCP | _NET_CONNECT_TCP) if level >= 4 else 0,
                        (_SCOPE_ABSTRACT_UNIX_SOCKET | _SCOPE_SIGNAL) if level >= 6 else 0)
    size = 24 if level >= 6 else 16 if level >= 4 else 8
    rs = _syscall(_SYS_CREATE, ctypes.byref(attr), ctypes.c_size_t(size), ctypes.c_uint32(0))
    try:
        wanted: list[tuple[str, int]] = [(p, read) for p in _SYSTEM_READ]
        wanted += [(f"/etc/{name}", read) for name in _ETC]
        wanted += [(p, read) for p in read_paths]
        wanted += [(p, int(F.READ_DIR)) for p in list_paths]
        wanted += [("/dev/null", int(F.READ_FILE | F.WRITE_FILE | (F.TRUNCATE if level >= 3 else 0)))]
        for path, access in wanted:
            try:
                fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
            except OSError:
                continue  # not on this system (/lib32, a missing /etc file)
            try:
                _add(rs, fd, access, file_rights)
            finally:
                os.close(fd)
        _add(rs, workdir_fd, every, file_rights)
        if duck_fd >= 0:
            _add(rs, duck_fd, read, file_rights)
    except BaseException:
        os.close(rs)
        raise
    return rs


def restrict(ruleset_fd: int) -> None:
    """Apply the ruleset to this process (and everything it forks from now on), for good; closes it.

    Raises:
        OSError: the kernel refused; this process must then not serve the session.
    """
    try:
        _libc().prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0)
        _syscall(_SYS_RESTRICT, ctypes.c_int(ruleset_fd), ctypes.c_uint32(0))
    finally:
        os.close(ruleset_fd)
