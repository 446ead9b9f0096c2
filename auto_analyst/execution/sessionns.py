"""A session's own namespaces inside the zygote's bubblewrap sandbox (see :mod:`.wall`).

The zygote forks one process per session, which calls :func:`enter` and then forks the session's
"init" (PID 1 of a new PID namespace, :func:`become_init`); the init drops every capability (and
as root takes the session's own uid) and forks the state process. So each session has:

* its own mount namespace: its work folder on ``/session`` (bound from the host view the zygote
  has at ``/.host``, which is then covered), a private tmpfs of ``tmp_mb`` MiB shared by ``/tmp``,
  ``/var/tmp`` and ``/dev/shm``, a read-only ``/dev``, and a ``/proc`` of its own PID namespace;
* its own PID namespace (it cannot see, signal or trace any other session's processes; when its
  init ends, the kernel kills whatever a script left behind), network namespace (no interface but
  a down loopback) and IPC namespace (no shared SysV memory with anyone).
"""

from __future__ import annotations

import ctypes
import os

from auto_analyst.execution import limits as lim
from auto_analyst.execution.wall import HOST, SESSION_DIR, STAGE, read_only_paths, under_temp

__all__ = ["enter", "become_init"]

_CLONE_NEWNS, _CLONE_NEWUTS, _CLONE_NEWIPC, _CLONE_NEWPID, _CLONE_NEWNET = 0x20000, 0x4000000, 0x8000000, 0x20000000, 0x40000000
_MS_RDONLY, _MS_NOSUID, _MS_NODEV, _MS_NOEXEC, _MS_REMOUNT, _MS_BIND, _MS_REC, _MS_PRIVATE = 1, 2, 4, 8, 32, 4096, 16384, 1 << 18
_MNT_DETACH = 2
# statvfs f_flag bits -> mount flags that a bind remount must repeat (the kernel refuses to clear locked ones).
_ST_FLAGS = {1: _MS_RDONLY, 2: _MS_NOSUID, 4: _MS_NODEV, 8: _MS_NOEXEC}


def _libc():
    return lim._get_libc()


def _mount(src: str | None, target: str, fstype: str | None, flags: int, data: str | None = None) -> None:
    enc = (lambda s: None if s is None else s.encode())
    if _libc().mount(enc(src), enc(target), enc(fstype), ctypes.c_ulong(flags), enc(data)) != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"mount {src} -> {target}: {os.strerror(err)}")


def _remount_bind(target: str, extra: int) -> None:
    """Add ``extra`` flags to the bind mount at ``target`` (keeping the flags it already has)."""
    have = os.statvfs(target).f_flag
    flags = sum(m for bit, m in _ST_FLAGS.items() if have & bit)
    _mount(None, target, None, _MS_REMOUNT | _MS_BIND | flags | extra)


def _cover(path: str) -> None:
    """Make ``path`` (a mount) unreachable: unmount it, or (where it is locked) mount an empty read-only tmpfs over it."""
    if _libc().umount2(path.encode(), _MNT_DETACH) == 0:
        return
    _mount("tmpfs", path, "tmpfs", _MS_NOSUID | _MS_NODEV | _MS_NOEXEC | _MS_RDONLY, "size=4k,mode=000")


def enter(workdir: str, workdir_fd: int, tmp_mb: int) -> None:
    """Give this process (forked from the zygote) the session's own namespaces and mounts.

    Args:
        workdir: the work folder's real path on the host.
        workdir_fd: a descriptor of it opened by the caller; the bound folder must be that very one.
        tmp_mb: size of the private tmpfs behind ``/tmp``, ``/var/tmp`` and ``/dev/shm``, MiB.

    Raises:
        OSError: a namespace or mount could not be made; this process must then not serve the session.
    """
    libc = _libc()
    if libc.unshare(_CLONE_NEWNS | _CLONE_NEWPID | _CLONE_NEWNET | _CLONE_NEWIPC | _CLONE_NEWUTS) != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"unshare: {os.strerror(err)}")
    _mount(None, "/", None, _MS_REC | _MS_PRIVATE)
    src = HOST + os.path.realpath(workdir)
    _mount(src, SESSION_DIR, None, _MS_BIND)
    a, b = os.stat(SESSION_DIR), os.fstat(workdir_fd)
    if (a.st_dev, a.st_ino) != (b.st_dev, b.st_ino):
        raise OSError("the session's work folder changed while the worker started")
    _remount_bind(SESSION_DIR, _MS_NOSUID | _MS_NODEV)
    _cover(HOST)
    _mount("tmpfs", STAGE, "tmpfs", _MS_NOSUID | _MS_NODEV, f"size={max(1, int(tmp_mb))}m,mode=0755")
    libraries = under_temp(read_only_paths())
    for name, target in (("tmp", "/tmp"), ("var_tmp", "/var/tmp"), ("shm", "/dev/shm")):
        os.mkdir(f"{STAGE}/{name}")
        os.chmod(f"{STAGE}/{name}", 0o1777)
        for lib in libraries.get(target, []):  # the interpreter or this package under /tmp: read-only again
            inside = f"{STAGE}/{name}{lib[len(target):]}"
            os.makedirs(inside, mode=0o755, exist_ok=True)
            _mount(lib, inside, None, _MS_BIND | _MS_REC)
            _remount_bind(inside, _MS_RDONLY | _MS_NOSUID | _MS_NODEV)
        _mount(f"{STAGE}/{name}", target, None, _MS_BIND | _MS_REC)
    _cover(STAGE)
    _remount_bind("/dev", _MS_RDONLY | _MS_NOSUID)


def become_init(uid: int) -> None:
    """In PID 1 of the session's PID namespace: its own ``/proc``, then no capabilities (and ``uid`` when > 0).

    Raises:
        OSError: privileges could not be dropped.
    """
    _mount("proc", "/proc", "proc", _MS_NOSUID | _MS_NODEV | _MS_NOEXEC)
    if uid:
        from auto_analyst.execution.privdrop import drop_to

        drop_to(uid)
    else:
        lim._drop_capabilities(())
    if lim.has_capabilities():
        raise OSError("the session's worker could not drop its capabilities")
    os.chdir(SESSION_DIR)
