"""Turning a freshly forked session state process (still root) into an unprivileged one of its own.

Why: without capabilities, root still *owns* most of the machine: it could write /root/.bashrc,
read root's 0600 files (the web app's secret key, other sessions' tables and uploads) and kill
or ptrace the server. The audit hook (:mod:`.guard`) only asks politely; the kernel enforces uids.
So when the caller is root, every session's worker runs as its own uid/gid (``UID_BASE`` + a
number derived from the session's work dir, no passwd entry): no file of root's is writable or
0600-readable, RLIMIT_NPROC counts (per uid), and kill/ptrace of the server or of another
session's worker fail with EPERM.

Before the uid changes, while still privileged, the state process gets its own mount namespace:

* fresh, size-capped tmpfs over the world-writable directories (``/tmp``, ``/var/tmp``,
  ``/dev/shm``, ``/run/lock``), so a script cannot leave files for, or read files of, anyone else;
* the directories it must read or write but whose ancestors an unprivileged uid may not traverse
  (Python itself lives under ``/root/.pyenv`` on our CI; the work dir may live under ``/root`` or
  pytest's 0700 temp dir) are made reachable *at the same path*: a tmpfs (mode 0711) over the first
  blocked ancestor, then a bind mount of only the needed directory into it. Nothing else under that
  ancestor is visible. The work dir comes as a descriptor opened by the caller, so the zygote
  itself never needs to reach it.
"""

from __future__ import annotations

import ctypes
import hashlib
import os
import sys
import threading
from pathlib import Path

from auto_analyst.errors import SandboxError
from auto_analyst.execution import limits as lim

__all__ = ["UID_BASE", "UID_SPAN", "TMP_SIZE_MB", "claim_uid", "python_paths", "enter_session", "drop_to", "release_uid"]

# Far above the usual /etc/subuid allocations (100000 + 65536 per user) and below 2**31, which
# some tools still treat as signed. Change here if the host maps containers into this range.
UID_BASE = 1_000_000_000
UID_SPAN = 1 << 24
TMP_SIZE_MB = 512  # each private tmpfs; tmpfs pages count against the machine's memory

_CLONE_NEWNS = 0x00020000
_MS_NOSUID, _MS_NODEV, _MS_BIND, _MS_REC, _MS_PRIVATE = 2, 4, 4096, 16384, 1 << 18
_TMP_DIRS = ("/tmp", "/var/tmp", "/dev/shm", "/run/lock")


def python_paths() -> list[str]:
    """Directories the worker must read from (the interpreter, its libraries, this package)."""
    found = {sys.prefix, sys.base_prefix, sys.exec_prefix, str(Path(__file__).resolve().parents[2])}
    found.update(p for p in sys.path if p and os.path.isdir(p))
    here = os.path.realpath(os.getcwd())  # the zygote's private dir (``python -m`` puts it on sys.path)
    return sorted({os.path.realpath(p) for p in found if os.path.isdir(p)} - {here})


def _mount(src: str | None, target: str, fstype: str | None, flags: int, data: str | None = None) -> None:
    libc = lim._get_libc()
    enc = (lambda s: None if s is None else s.encode())
    if libc.mount(enc(src), enc(target), enc(fstype), ctypes.c_ulong(flags), enc(data)) != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"mount {src} -> {target}: {os.strerror(err)}")


def _others_can_traverse(path: str) -> bool:
    try:
        return bool(os.stat(path).st_mode & 0o001)
    except OSError:
        return False


def _under(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip("/") + "/")


def _mask_point(path: str, fresh: list[str]) -> str | None:
    """Where ``path`` must be re-exposed from: a fresh tmpfs it lies under, or its first ancestor others
    cannot traverse; None when an unprivileged uid reaches it as it is."""
    for t in fresh:
        if _under(path, t) and path != t:
            return t
    parts = Path(path).parts
    for i in range(1, len(parts) - 1):
        anc = str(Path(*parts[: i + 1]))
        if not _others_can_traverse(anc):
            return anc
    return None


def _expose(needed: dict[str, int], fresh: list[str]) -> None:
    """Make each needed path (-> an open descriptor of it) reachable at its own path, nothing more."""
    points: dict[str, list[str]] = {}
    for path in needed:
        point = _mask_point(path, fresh)
        if point is not None:
            points.setdefault(point, []).append(path)
    for point, paths in sorted(points.items()):
        if point not in fresh:
            _mount("tmpfs", point, "tmpfs", _MS_NOSUID | _MS_NODEV, "mode=0711,size=1m")
        for path in sorted(paths):
            rel = Path(path).relative_to(point)
            cur = Path(point)
            for part in rel.parts:
                cur = cur / part
                if not cur.exists():
                    cur.mkdir(mode=0o711)
            _mount(f"/proc/self/fd/{needed[path]}", path, None, _MS_BIND | _MS_REC)


def _nest_free(paths: list[str]) -> list[str]:
    out: list[str] = []
    for p in sorted(set(paths)):
        if not any(_under(p, q) for q in out):
            out.append(p)
    return out


def enter_session(uid: int, workdir_fd: int, workdir: str, read_paths: list[str]) -> dict[str, bool]:
    """Give this (root) process its own mount namespace and then the session's uid/gid, for good.

    ``workdir_fd`` is the caller's open descriptor of the session's work dir (owned by ``uid``); it
    becomes the cwd and is bind-mounted at ``workdir``. Raises OSError if the uid cannot be taken:
    the caller must then not run scripts in this process.
    """
    libc = lim._get_libc()
    info = {"mountns": False, "uid": False}
    fds: dict[str, int] = {}
    try:
        if libc.unshare(_CLONE_NEWNS) == 0:
            _mount(None, "/", None, _MS_REC | _MS_PRIVATE)
            for p in _nest_free(read_paths):
                if not _under(p, workdir):
                    fds[p] = os.open(p, os.O_PATH | os.O_DIRECTORY)
            # A bind source must be a mount of this namespace: reopen the work dir by path here, and
            # check it is the very directory the caller opened.
            fds[workdir] = os.open(workdir, os.O_PATH | os.O_DIRECTORY)
            a, b = os.fstat(fds[workdir]), os.fstat(workdir_fd)
            if (a.st_dev, a.st_ino) != (b.st_dev, b.st_ino):
                raise OSError("the session's work dir changed while the worker started")
            fresh = []
            for d in _TMP_DIRS:
                real = os.path.realpath(d)
                if os.path.isdir(real) and real not in fresh and os.stat(real).st_mode & 0o002:
                    _mount("tmpfs", real, "tmpfs", _MS_NOSUID | _MS_NODEV, f"mode=1777,size={TMP_SIZE_MB}m")
                    fresh.append(real)
            _expose(fds, fresh)
            info["mountns"] = True
    finally:
        for fd in fds.values():
            os.close(fd)
    drop_to(uid)
    os.fchdir(workdir_fd)  # as its owner: root without CAP_DAC_* may not enter a 0700 dir of the uid
    os.close(workdir_fd)
    info["uid"] = True
    return info


def drop_to(uid: int) -> None:
    """Become ``uid``/``uid`` with no groups and no capabilities, for good (a root process only).

    Raises:
        OSError: the ids could not be changed or a capability is left.
    """
    lim.drop_bounding_set()
    os.setgroups([])
    os.setresgid(uid, uid, uid)
    os.setresuid(uid, uid, uid)  # clears every capability: no SECBIT_KEEP_CAPS
    lim._get_libc().prctl(38, 1, 0, 0, 0)  # PR_SET_NO_NEW_PRIVS: no exec may regain privileges
    if os.getresuid() != (uid, uid, uid) or lim.has_capabilities():
        raise OSError("the session's worker could not drop its privileges")


_UIDS: dict[int, str] = {}  # session uids in use by this process -> their work dir
_UIDS_LOCK = threading.Lock()


def claim_uid(key: str) -> int:
    """A session's own uid: derived from ``key`` (its work dir's real path), so it is the same after a restart (and
    the files earlier runs wrote stay the session's), unique among this process's sessions.

    Raises:
        SandboxError: every uid of the span is taken.
    """
    h = int.from_bytes(hashlib.sha256(key.encode()).digest()[:8], "big")
    with _UIDS_LOCK:
        for i in range(UID_SPAN):
            uid = UID_BASE + (h + i) % UID_SPAN
            if _UIDS.get(uid) in (None, key):
                _UIDS[uid] = key
                return uid
    raise SandboxError("no free session uid")


def release_uid(uid: int, key: str) -> None:
    """Give back ``uid`` when ``key`` still holds it (0: nothing was claimed)."""
    with _UIDS_LOCK:
        if uid and _UIDS.get(uid) == key:
            del _UIDS[uid]
