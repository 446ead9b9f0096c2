"""OS-level limits and isolation for the worker processes (Linux; each step degrades gracefully).

Why each layer exists:

* **clean environment** – the worker starts from a handful of variables, so API keys and anything
  else in the server's environment never reach generated code.
* **PR_SET_DUMPABLE=0** (in the caller) – a process of the same user could otherwise read
  ``/proc/<server pid>/environ``; for a non-dumpable process that needs CAP_SYS_PTRACE.
* **dropping capabilities** (when started as root) – measured here: root *with*
  CAP_SYS_PTRACE still reads a non-dumpable process's environ, and CAP_DAC_OVERRIDE lets root
  write read-only (0444) data files. The zygote keeps only what it needs to hand each session
  its own uid (:mod:`.privdrop`); session processes have none at all.
* **a new network namespace** (``unshare(CLONE_NEWNET)``, needs CAP_SYS_ADMIN, so done before
  the capabilities go) – no interface but a down loopback: no network even through ctypes.
* **rlimits per run** – CPU seconds, address space, processes, open files and file size bound
  what one script can take from the machine; the wall-clock timeout is enforced by the parent.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import resource
import sys
import tempfile
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from auto_analyst.config import Settings

__all__ = [
    "Limits",
    "clean_env",
    "set_dumpable",
    "isolate_current_process",
    "apply_run_limits",
    "lift_cpu_limit",
    "vm_size_bytes",
]

_PR_SET_DUMPABLE = 4
_PR_CAPBSET_DROP = 24
_PR_SET_NO_NEW_PRIVS = 38
_PR_CAP_AMBIENT = 47
_PR_CAP_AMBIENT_CLEAR_ALL = 4
_CLONE_NEWNET = 0x40000000
_LINUX_CAPABILITY_VERSION_3 = 0x20080522
_CAP_SETGID, _CAP_SETUID, _CAP_SETPCAP, _CAP_SYS_ADMIN = 6, 7, 8, 21
# What the zygote (which never runs scripts) keeps to give each session its own uid and mount namespace.
ZYGOTE_CAPS = (_CAP_SETGID, _CAP_SETUID, _CAP_SETPCAP, _CAP_SYS_ADMIN)
_MIB = MIB = 1024 * 1024

_libc: Any = None


def _get_libc() -> Any:
    global _libc
    if _libc is None:
        _libc = ctypes.CDLL(ctypes.util.find_library("c") or None, use_errno=True)
    return _libc


@dataclass(frozen=True)
class Limits:
    """The limits of one script run, taken from :class:`~auto_analyst.config.Settings`.

    Attributes:
        timeout: wall-clock seconds a run may take; the state process kills the run's process
            group after it (kind ``timeout``). CPU limits alone miss a script that sleeps or waits.
        cpu_seconds: RLIMIT_CPU soft limit, CPU seconds; SIGXCPU stops a busy loop even if the
            parent is slow to notice.
        memory_mb: MiB of address space beyond the preloaded libraries and loaded tables
            (RLIMIT_AS = the state process's size at the first run + this). It is a hard limit,
            so it also bounds what the session's variables grow to over later runs. Allocations
            past it raise MemoryError instead of waking the kernel's OOM killer on the machine.
        max_processes: RLIMIT_NPROC (processes+threads of the worker's user). Root ignores it,
            so process creation is also refused by the audit hook and the group is killed.
        max_open_files: RLIMIT_NOFILE, so a script cannot exhaust the host's descriptors.
        max_file_mb: RLIMIT_FSIZE, MiB; the largest file a script may write (also caps the
            captured C-level output), so it cannot fill the disk.
        max_output_bytes: bytes of printed output kept; the rest is replaced by "[output cut]".
        max_table_rows: rows kept of each shown table (``n_rows`` keeps the full count).
        disk_mb: MiB the session's work folder may hold (files plus 4 KiB per entry); checked every
            0.2 s during a run and at its end; past it the run stops with kind ``disk`` and the files
            it made are removed.
        tmp_mb: MiB of the session's private tmpfs behind /tmp, /var/tmp and /dev/shm (kernel-enforced).
        keep_memory_mb: MiB a successful run may add to the worker's resident memory and still
            become the session's state; past it the run's result is returned but its variables are
            dropped and the state from before the run carries on (so memory goes back to baseline).
    """

    timeout: float = 30.0
    cpu_seconds: int = 60
    memory_mb: int = 2048
    max_processes: int = 64
    max_open_files: int = 256
    max_file_mb: int = 200
    max_output_bytes: int = 1_000_000
    max_table_rows: int = 50
    disk_mb: int = 1024
    tmp_mb: int = 256
    keep_memory_mb: int = 512

    @classmethod
    def from_settings(cls, settings: Settings) -> "Limits":
        """Build the limits from a Settings object (``run_*``, ``max_table_rows``, ``max_file_mb``)."""
        return cls(
            timeout=float(settings.run_timeout),
            cpu_seconds=int(settings.run_cpu_seconds),
            memory_mb=int(settings.run_memory_mb),
            max_processes=int(settings.run_max_processes),
            max_open_files=int(settings.run_max_open_files),
            # Scripts legitimately write exports about as large as the data they were given.
            max_file_mb=max(int(settings.max_file_mb), 64),
            max_output_bytes=int(settings.run_max_output_bytes),
            max_table_rows=int(settings.max_table_rows),
            disk_mb=int(settings.run_disk_mb),
            tmp_mb=int(settings.run_tmp_mb),
            keep_memory_mb=int(settings.run_keep_memory_mb),
        )

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def clean_env(home: Path) -> dict[str, str]:
    """The whole environment of the worker: nothing of the caller's except what is listed here.

    Thread counts are pinned to 1 because RLIMIT_NPROC counts threads and a run should not
    spread over every core of a shared server. OPENBLAS_CORETYPE/L2_SIZE (and NVPL's CPU type) are passed
    through: on some processors older BLAS builds compute wrong results or crash without them.
    """
    env = {
        "PATH": "/usr/local/bin:/usr/bin:/bin",
        "HOME": str(home),
        "TMPDIR": str(home),
        "LANG": "C.UTF-8",
        "LC_ALL": "C.UTF-8",
        "MPLBACKEND": "Agg",
        "MPLCONFIGDIR": str(home / "matplotlib"),
        "PYTHONDONTWRITEBYTECODE": "1",
        "PYTHONHASHSEED": "0",
        "OPENBLAS_NUM_THREADS": "1",
        "OMP_NUM_THREADS": "1",
        "MKL_NUM_THREADS": "1",
        "NUMEXPR_NUM_THREADS": "1",
        "VECLIB_MAXIMUM_THREADS": "1",
        "LITELLM_LOCAL_MODEL_COST_MAP": "True",
        # Only the forking thread survives a fork: Arrow's jemalloc must not start its background
        # thread in the zygote, and Arrow's allocations use the same malloc as everything else.
        "JE_ARROW_MALLOC_CONF": "background_thread:false",
        "ARROW_DEFAULT_MEMORY_POOL": "system",
    }
    for name in ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE", "NVPL_BLAS_DEBUG_CPU_TYPE"):
        if os.environ.get(name):
            env[name] = os.environ[name]
    # The worker imports this package by path even when it is not installed (a source checkout).
    env["PYTHONPATH"] = str(Path(__file__).resolve().parents[2])
    return env


def set_dumpable(flag: bool) -> bool:
    """prctl(PR_SET_DUMPABLE): with 0, other processes of this user cannot read our /proc files.

    Returns True when the call succeeded (False off Linux or where libc refuses).
    """
    try:
        return _get_libc().prctl(_PR_SET_DUMPABLE, 1 if flag else 0, 0, 0, 0) == 0
    except (OSError, AttributeError):
        return False


def _unshare_net() -> bool:
    try:
        return _get_libc().unshare(_CLONE_NEWNET) == 0
    except (OSError, AttributeError):
        return False


def _drop_capabilities(keep: tuple[int, ...] = ()) -> bool:
    """Empty the capability sets except ``keep`` (effective+permitted+bounding), and set no_new_privs."""
    libc = _get_libc()
    try:
        for cap in range(64):
            if cap in keep:
                continue
            if libc.prctl(_PR_CAPBSET_DROP, cap, 0, 0, 0) != 0 and ctypes.get_errno() == 22:  # EINVAL: past the last cap
                break
        libc.prctl(_PR_CAP_AMBIENT, _PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0)
        header = (ctypes.c_uint32 * 2)(_LINUX_CAPABILITY_VERSION_3, 0)
        data = (ctypes.c_uint32 * 6)()
        for cap in keep:  # layout: [eff, perm, inh] for caps 0-31, then the same for 32-63
            base = 0 if cap < 32 else 3
            data[base] |= 1 << (cap % 32)
            data[base + 1] |= 1 << (cap % 32)
        ok = libc.capset(ctypes.byref(header), ctypes.byref(data)) == 0
        # No exec may regain privileges (setuid binaries, file capabilities).
        libc.prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0)
        return ok
    except (OSError, AttributeError):
        return False


def drop_bounding_set() -> None:
    """Drop every capability from the bounding set (best effort; needs CAP_SETPCAP, dropped last)."""
    libc = _get_libc()
    for cap in [c for c in range(64) if c != _CAP_SETPCAP] + [_CAP_SETPCAP]:
        try:
            libc.prctl(_PR_CAPBSET_DROP, cap, 0, 0, 0)
        except (OSError, AttributeError):
            return


def has_capabilities() -> bool:
    return _effective_caps() != 0


def isolate_current_process(walled: bool = False, userns: bool = False) -> dict[str, bool]:
    """Isolate the calling (zygote) process for good: new network namespace, capabilities dropped.

    As root it keeps only ZYGOTE_CAPS, which each session's state process gives up with its uid
    (see :mod:`.privdrop`); ``privdrop`` says whether that is possible. ``walled`` (inside
    bubblewrap's user namespace, as an ordinary user) it keeps only CAP_SYS_ADMIN of that
    namespace, to build each session's mounts (:mod:`.sessionns`). Each step is tried and
    silently skipped where not permitted (an ordinary user may not unshare); the returned flags
    say what took effect.
    """
    info = {"netns": False, "caps_dropped": False, "privdrop": False}
    if sys.platform.startswith("linux"):
        set_dumpable(False)
        info["netns"] = _unshare_net()
        if has_capabilities():
            keep = (_CAP_SYS_ADMIN,) if userns else (ZYGOTE_CAPS if os.geteuid() == 0 else ())
            # a container's root lacks some (Docker: CAP_SYS_ADMIN): keep those of them it has
            keep = tuple(c for c in keep if _effective_caps() & (1 << c))
            info["caps_dropped"] = _drop_capabilities(keep) and _effective_caps() == sum(1 << c for c in keep)
            info["privdrop"] = (not userns and os.geteuid() == 0 and info["caps_dropped"]
                                and {_CAP_SETUID, _CAP_SETGID, _CAP_SETPCAP} <= set(keep))
        else:
            info["caps_dropped"] = True
    return info


def _effective_caps() -> int:
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("CapEff:"):
                return int(line.split()[1], 16)
    except OSError:
        pass
    return -1


def vm_size_bytes() -> int:
    """Current virtual memory size (VmSize) of this process, bytes; 0 when unknown."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmSize:"):
                return int(line.split()[1]) * 1024
    except (OSError, ValueError):
        pass
    return 0


def rss_bytes() -> int:
    """Resident memory of this process (VmRSS, includes mapped shared memory), bytes; 0 when unknown."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    except (OSError, ValueError):
        pass
    return 0


def trim_heap() -> None:
    """Give free heap pages back to the system (glibc ``malloc_trim``); best effort."""
    try:
        _get_libc().malloc_trim(0)
    except (OSError, AttributeError):
        pass


def _lower(which: int, value: int, keep_hard: bool = False) -> None:
    soft, hard = resource.getrlimit(which)
    if hard != resource.RLIM_INFINITY:
        value = min(value, hard)
    try:
        resource.setrlimit(which, (value, hard if keep_hard else value))
    except (ValueError, OSError):
        pass


def apply_run_limits(limits: Limits, base_vm: int) -> None:
    """Set the rlimits of a run child (call in the child, after fork, before the script).

    Hard limits equal soft ones, so not even a script that slips past the audit hook can raise
    them; only RLIMIT_CPU keeps its hard limit so that a successful run, which becomes the
    session's state process, can lift the soft limit again (its CPU counter keeps running).
    """
    _lower(resource.RLIMIT_CORE, 0)  # SIGXCPU would otherwise dump a core of the whole state
    _lower(resource.RLIMIT_CPU, max(1, limits.cpu_seconds), keep_hard=True)
    if limits.memory_mb > 0:
        _lower(resource.RLIMIT_AS, (base_vm or vm_size_bytes()) + limits.memory_mb * _MIB)
    _lower(resource.RLIMIT_NPROC, max(1, limits.max_processes))
    _lower(resource.RLIMIT_NOFILE, max(16, limits.max_open_files))
    _lower(resource.RLIMIT_FSIZE, max(1, limits.max_file_mb) * _MIB)


def lift_cpu_limit() -> None:
    """Raise RLIMIT_CPU's soft limit back to its hard limit (a committed run becoming the state)."""
    soft, hard = resource.getrlimit(resource.RLIMIT_CPU)
    try:
        resource.setrlimit(resource.RLIMIT_CPU, (hard, hard))
    except (ValueError, OSError):
        pass


def make_private_dir(prefix: str) -> Path:
    """A new 0700 temporary directory."""
    return Path(tempfile.mkdtemp(prefix=prefix))
