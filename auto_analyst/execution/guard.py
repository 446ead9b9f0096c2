"""An audit hook (PEP 578) that refuses, to generated code, what a data analysis never needs.

This is a second layer, not the boundary: in-process Python can in principle reach around any
hook (ctypes memory writes, frame walking), which is why the real isolation is the process, its
own uid (:mod:`.privdrop`), its rlimits, the network namespace and the dropped capabilities (see
:mod:`.limits`). The hook turns the common cases into a clear ``PermissionError`` in the script's
traceback instead of a confusing low-level failure: network calls, new processes, signals,
raising rlimits, writing, renaming, deleting or chmod-ing the data files, reading other
processes' environment, reaching the same libc functions through ctypes, and the gc/frame
introspection that would find the hook's own state.

Why it is shaped like this (an adversarial test switched an earlier, module-level flag off):

* nothing is armed until :func:`arm`, which *adds* a new hook whose whole configuration is
  frozen (frozensets, ints) in its closure. No module attribute can switch it off, hooks cannot
  be removed, and the only handles on the hook function (``gc.get_objects``/``get_referrers``/
  ``get_referents``) are refused while armed. Arming again adds protected paths, never removes.
* the worker's own process management (fork, kill, rlimits) is allowed only when the *whole*
  call stack is the worker's code: the calling thread is the one that armed, the immediate
  caller is one of the trusted helpers, and every frame below it is a code object collected from
  the worker modules when :func:`trust` ran. A script importing ``run.kill_group`` and calling
  it has its own frame on the stack and is refused; so is a thread the script started.
"""

from __future__ import annotations

import _thread
import os
import re
import sys
import types
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

# Introspection that would hand a script the hook (and so its frozen configuration).
_INTROSPECTION = {"gc.get_objects", "gc.get_referrers", "gc.get_referents"}

# Set only by the worker before arming; read-only copies go into each armed hook.
_trusted: dict[str, frozenset] = {"helpers": frozenset(), "stack": frozenset()}
_armed: list[frozenset] = []  # the protected-path sets of the hooks added so far (informational)


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


def _check_open(args: tuple, protected: frozenset) -> None:
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
    if writing and protected and _real(raw) in protected:
        _deny("writing to a data file", raw)


def _make_hook(protected: frozenset, helpers: frozenset, stack: frozenset, thread: int) -> Callable[[str, tuple], None]:
    """An armed hook; everything it consults is immutable and captured here."""
    getframe = sys._getframe
    get_ident = _thread.get_ident

    def trusted_caller() -> bool:
        if get_ident() != thread:
            return False
        # Frames: [0] trusted_caller, [1] hook, [2] the Python frame that made the audited call.
        f = getframe(2)
        if f.f_code not in helpers:
            return False
        f = f.f_back
        while f is not None:
            if f.f_code not in stack:
                return False
            f = f.f_back
        return True

    def hook(event: str, args: tuple) -> None:
        if event == "open":
            _check_open(args, protected)
            return
        why = _BLOCKED_EVENTS.get(event)
        if why is not None:
            if trusted_caller():
                return
            _deny(why, event)
        if event in _INTROSPECTION:
            _deny("inspecting the interpreter's objects", event)
        if event in _PATH_EVENTS:
            if protected and any(_real(a) in protected for a in args[:2] if isinstance(a, (str, bytes, os.PathLike))):
                _deny("changing a data file", event)
            return
        if event in ("ctypes.dlsym", "ctypes.dlsym/handle") and len(args) > 1 and isinstance(args[1], str) and args[1] in _BLOCKED_SYMBOLS:
            _deny(f"calling libc {args[1]}() through ctypes")

    return hook


def _codes(obj: Any, out: set) -> None:
    code = getattr(obj, "__code__", None)
    stack = [code] if isinstance(code, types.CodeType) else []
    while stack:
        c = stack.pop()
        if c in out:
            continue
        out.add(c)
        stack.extend(k for k in c.co_consts if isinstance(k, types.CodeType))


def install() -> None:
    """Kept for the worker's start-up order; the hook itself is added by :func:`arm`."""


def trust(helpers: tuple[Callable[..., Any], ...], modules: tuple[types.ModuleType, ...]) -> None:
    """Let ``helpers`` (the worker's fork/kill/rlimit functions) do blocked operations when armed, but
    only when called by the worker itself: every frame below them must be code of ``modules`` or a
    frame on the current stack (the interpreter's start-up). Call once, before any arm; later calls
    (from a script) are ignored."""
    if _armed or _trusted["helpers"]:
        return
    h: set = set()
    for f in helpers:
        _codes(f, h)
    st: set = set(h)
    for m in modules:
        for v in vars(m).values():
            if isinstance(v, types.FunctionType) and v.__module__ == m.__name__:
                _codes(v, st)
            elif isinstance(v, type) and v.__module__ == m.__name__:
                for attr in vars(v).values():
                    _codes(attr, st)
    f = sys._getframe(1)
    while f is not None:
        st.add(f.f_code)
        f = f.f_back
    _trusted["helpers"] = frozenset(f.__code__ for f in helpers)
    _trusted["stack"] = frozenset(st)


def arm(protected_paths: list[str] | tuple[str, ...] = ()) -> None:
    """Start refusing, for good in this process; ``protected_paths`` are the data files.

    Adds a hook (hooks cannot be removed); arming again only adds protected paths.
    """
    protected = frozenset(os.path.realpath(p) for p in protected_paths)
    if _armed and protected <= _armed[-1]:
        return
    protected = protected | (_armed[-1] if _armed else frozenset())
    sys.addaudithook(_make_hook(protected, _trusted["helpers"], _trusted["stack"], _thread.get_ident()))
    _armed.append(protected)


def is_armed() -> bool:
    """Whether :func:`arm` ran in this process (informational: no value here switches a hook off)."""
    return bool(_armed)
