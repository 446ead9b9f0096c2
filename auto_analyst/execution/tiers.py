"""Which wall holds generated code here: the full one, the namespace-free one, or none (docs/sandbox.md, "Two tiers").

* ``full`` – bubblewrap (:mod:`.wall`, :mod:`.sessionns`): the worker's whole file system view is built
  from nothing, and every session has its own mount, PID, network and IPC namespaces.
* ``namespace-free`` – where no namespace can be made (Docker's default seccomp profile, many Kubernetes
  clusters): Landlock (:mod:`.landwall`: read-only libraries, the session's own work folder, nothing of the
  state folder), the seccomp filter (:mod:`.syscalls`: no programs, sockets, ptrace, namespaces), a uid of
  its own per session when the server is root (:mod:`.privdrop`), rlimits and a clean environment.
* ``none`` – neither can be built: code runs only with ``allow_unsandboxed`` (unsafe).

The setting ``sandbox_wall`` (``auto`` or ``full``) can demand the full wall: then the namespace-free tier
is not used and code is refused where bubblewrap cannot start.
"""

from __future__ import annotations

import functools
import os
import subprocess
import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from auto_analyst.config import Settings

__all__ = ["FULL", "NAMESPACE_FREE", "NONE", "namespace_free", "in_force"]

FULL, NAMESPACE_FREE, NONE = "full", "namespace-free", "none"
_CAP_SETGID, _CAP_SETUID, _CAP_SETPCAP = 6, 7, 8


def _effective_caps() -> int:
    try:
        with open("/proc/self/status") as fh:
            return next(int(line.split()[1], 16) for line in fh if line.startswith("CapEff:"))
    except (OSError, StopIteration, ValueError):
        return 0


def _can_unshare_mounts() -> bool:
    """Whether a process of this server can make a mount namespace (a fresh interpreter tries; ~20 ms)."""
    code = "import ctypes, sys; sys.exit(ctypes.CDLL(None, use_errno=True).unshare(0x20000) != 0)"
    try:
        return subprocess.run([sys.executable, "-I", "-S", "-c", code], capture_output=True, timeout=20).returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        return False


@functools.lru_cache(maxsize=1)
def namespace_free() -> tuple[bool, str]:
    """Whether the namespace-free tier can hold here: (usable, one sentence why not).

    It needs Landlock and the seccomp filter; as root also CAP_SETUID/CAP_SETGID/CAP_SETPCAP (each session
    takes a uid of its own; a root worker would own the machine) and a Python installation that other uids
    can reach (without a mount namespace the session's uid sees paths as they are: a Python under root's
    0700 home cannot be imported from).
    """
    from auto_analyst.execution import landwall, privdrop, syscalls

    for ok, why in (landwall.available(), syscalls.available()):
        if not ok:
            return False, why
    if os.geteuid() == 0:
        need = (1 << _CAP_SETUID) | (1 << _CAP_SETGID) | (1 << _CAP_SETPCAP)
        if _effective_caps() & need != need:
            return False, ("the server is root without CAP_SETUID/CAP_SETGID/CAP_SETPCAP, so sessions cannot get a uid "
                           "of their own; run it as an ordinary user")
        blocked = [p for p in privdrop.python_paths() if privdrop._mask_point(p, []) is not None]
        if blocked and not _can_unshare_mounts():
            return False, (f"the Python installation ({blocked[0]}) is not reachable by other users and no mount "
                           "namespace can be made to show it; install Python outside root's home, or run the "
                           "server as an ordinary user")
    return True, ""


def in_force(settings: Settings | None = None) -> tuple[str, str]:
    """(tier, why the full wall is not in force or ""): the tier a server started now gets, given ``settings``.

    ``sandbox_wall = "full"`` leaves only ``full`` or ``none``.
    """
    from auto_analyst.execution import wall

    ok, why = wall.probe()
    if ok:
        return FULL, ""
    if settings is not None and settings.sandbox_wall == "full":
        return NONE, why
    nf_ok, nf_why = namespace_free()
    if nf_ok:
        return NAMESPACE_FREE, why
    return NONE, f"{why}; and the namespace-free tier: {nf_why}"
