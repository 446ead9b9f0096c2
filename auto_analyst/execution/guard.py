"""An audit hook (PEP 578) that refuses, to generated code, what a data analysis never needs.

This is a second layer, not the boundary: in-process Python can in principle reach around any
hook, which is why the real isolation is the process, its rlimits, the network namespace and
the dropped capabilities (see :mod:`.limits`). The hook turns the common cases into a clear
``PermissionError`` in the script's traceback instead of a confusing low-level failure:
network calls, new processes, signals to other processes, raising rlimits, writing, renaming,
deleting or chmod-ing the data files, reading other processes' environment, and reaching the
same libc functions through ctypes.

The hook is installed once in the zygote (unarmed, so the workers' own machinery works) and
armed in each run child just before the script; it stays armed in the state process a
successful run becomes, so threads a script left behind stay bound by it.
"""

from __future__ import annotations

import os
import re
import sys
from typing import Any, Callable

__all__ = ["install", "arm", "trust", "is_armed"]

_BLOCKED_EVENTS = {
    "socket.connect": "network access",
    "socket.bind": "network access",
    "socket.getaddrinfo": "network access",
    "socket.gethostbyname": "network access",
    "socket.gethostbyname_ex": "network access",
    "socket.gethostbyaddr": "network access",
    "socket.getnameinfo": "network access",
    "socket.sendto": "network access",
    "socket.sendmsg": "network access",
    "subprocess.Popen": "starting processes",
    "os.system": "starting processes",
    "os.exec": "starting processes",
    "os.posix_spawn": "starting processes",
    "os.spawn": "starting processes",
    "os.fork": "starting processes",
    "os.forkpty": "starting processes",
    "pty.spawn": "starting processes",
    "os.kill": "signalling processes",
    "os.killpg": "signalling processes",
    "resource.setrlimit": "changing resource limits",
    "resource.prlimit": "changing resource limits",
    "sys.remote_exec": "attaching to processes",
}

# Events whose first argument is a path that must not be one of the data files.
_PATH_EVENTS = {"os.chmod", "os.chown", "os.remove", "os.rename", "os.truncate", "os.link", "os.utime", "shutil.rmtree"}

# libc functions that would bypass the above through ctypes.
_BLOCKED_SYMBOLS = {
    "fork", "vfork", "clone", "clone3", "execve", "execv", "execvp", "execvpe", "execl", "execlp", "execle",
    "fexecve", "system", "popen", "posix_spawn", "posix_spawnp", "syscall", "kill", "killpg", "tgkill", "tkill",
    "socket", "socketpair", "connect", "bind", "sendto", "sendmsg", "getaddrinfo", "gethostbyname", "unshare",
    "setns", "ptrace", "setrlimit", "setrlimit64", "prlimit", "prlimit64", "chmod", "fchmod", "fchmodat",
    "unlink", "unlinkat", "rename", "renameat", "renameat2", "truncate", "truncate64", "prctl", "setuid",
    "setgid", "setresuid", "setresgid", "capset", "mount", "umount", "chroot", "process_vm_readv",
    "process_vm_writev", "dlopen", "dlsym", "dlmopen",
}

_PROC_SECRET = re.compile(r"^/proc/(\d+)/(task/\d+/)?(environ|cmdline|mem)$")
_WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_APPEND | os.O_CREAT | os.O_TRUNC

_state: dict[str, Any] = {"installed": False, "armed": False, "protected": frozenset(), "trusted": frozenset()}


def _deny(what: str, detail: str = "") -> None:
    raise PermissionError(f"the sandbox does not allow {what}{': ' + detail if detail else ''}")


def _real(path: Any) -> str | None:
    if isinstance(path, int):
        return None
    try:
        p = os.fsdecode(path)
    except TypeError:
        return None
    return os.path.realpath(p)


def _check_open(args: tuple) -> None:
    path, mode, flags = (tuple(args) + (None, None, None))[:3]
    if isinstance(path, int):
        return
    try:
        raw = os.fsdecode(path)
    except TypeError:
        return
    m = _PROC_SECRET.match(os.path.normpath(raw) if raw.startswith("/proc/") else "")
    if m and int(m.group(1)) != os.getpid():
        _deny("reading other processes' environment or memory", raw)
    writing = (isinstance(mode, str) and any(c in mode for c in "wax+")) or (
        mode is None and isinstance(flags, int) and flags & _WRITE_FLAGS
    )
    if writing and _state["protected"] and _real(raw) in _state["protected"]:
        _deny("writing to a data file", raw)


def _hook(event: str, args: tuple) -> None:
    st = _state
    if not st["armed"]:
        return
    if event == "open":
        _check_open(args)
        return
    why = _BLOCKED_EVENTS.get(event)
    if why is not None:
        if sys._getframe(1).f_code in st["trusted"]:
            return
        _deny(why, event)
    if event in _PATH_EVENTS:
        if st["protected"] and any(_real(a) in st["protected"] for a in args[:2] if isinstance(a, (str, bytes, os.PathLike))):
            _deny("changing a data file", event)
        return
    if event in ("ctypes.dlsym", "ctypes.dlsym/handle") and len(args) > 1 and isinstance(args[1], str) and args[1] in _BLOCKED_SYMBOLS:
        _deny(f"calling libc {args[1]}() through ctypes")


def install() -> None:
    """Install the hook (unarmed) in this process; idempotent. Hooks cannot be removed again."""
    if not _state["installed"]:
        sys.addaudithook(_hook)
        _state["installed"] = True


def trust(*functions: Callable[..., Any]) -> None:
    """Let these functions (the worker's own fork and kill) call blocked operations when armed."""
    _state["trusted"] = frozenset(f.__code__ for f in functions) | _state["trusted"]


def arm(protected_paths: list[str] | tuple[str, ...] = ()) -> None:
    """Start refusing (for good in this process); ``protected_paths`` are the data files."""
    _state["protected"] = frozenset(os.path.realpath(p) for p in protected_paths)
    _state["armed"] = True


def is_armed() -> bool:
    return bool(_state["armed"])
