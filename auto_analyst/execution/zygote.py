"""The warm fork server ("zygote") that every :class:`~auto_analyst.execution.sandbox.Sandbox` of this process shares."""

from __future__ import annotations

import atexit
import os
import shutil
import socket
import subprocess
import sys
import threading
from pathlib import Path

from auto_analyst.errors import SandboxError
from auto_analyst.execution import tiers, wall
from auto_analyst.execution.limits import clean_env, make_private_dir
from auto_analyst.execution.protocol import ChannelClosed, FrameTooLarge, recv, send

__all__ = ["Zygote"]

_ZYGOTE_START_TIMEOUT = 120.0  # seconds; imports take ~2.5 s, but a cold disk cache or busy CI is much slower


class Zygote:
    """The warm fork server: two per caller process (a lean and a full one), shared by every :class:`Sandbox`.

    The full zygote has every analysis library of :data:`.preload.LATER` imported; the lean one only
    :data:`.preload.CORE` (numpy, pandas, pyarrow). Fork and exit cost kernel time in proportion to the
    anonymous memory mapped (one page-table entry and page reference per 4 KiB, copied at the fork and
    dropped at the exit): measured here, 54 MB for the core against 181 MB for everything, 3.4 ms
    against 21 ms of kernel time per fork + exit, and each run of a session pays one of each. A session
    starts on the lean zygote and moves to the full one before its first run if that run imports one of
    the later libraries (:meth:`Sandbox.run`). Use :meth:`get`; it (re)starts the server when needed.
    Thread-safe.
    """

    _instances: "dict[bool, Zygote]" = {}
    _class_lock = threading.Lock()

    def __init__(self, lean: bool = False) -> None:
        self.lean = lean
        self.home = make_private_dir("aa-worker-")
        (self.home / "matplotlib").mkdir()
        ours, theirs = socket.socketpair()
        self._lock = threading.Lock()
        self.ctrl = ours
        self.tier, self.unwalled_reason = tiers.in_force()
        self.walled = self.tier == tiers.FULL
        self.guarded = self.tier == tiers.NAMESPACE_FREE
        module_args = ["-m", "auto_analyst.execution.child", str(theirs.fileno())]
        lean_arg = ["lean"] if lean else []
        if self.walled:
            # Inside bubblewrap the zygote's own temp folder is the sandbox's /tmp (see wall.py).
            env = clean_env(Path("/tmp"))
            argv = wall.zygote_argv(sys.executable, [*module_args, wall.mode_arg(), *lean_arg])
        else:  # the namespace-free tier walls each session when the zygote forks it (child.py, landwall.py)
            mode = ["guarded" if self.guarded else ""] if lean_arg or self.guarded else []
            env, argv = clean_env(self.home), [sys.executable, *module_args, *mode, *lean_arg]
        log = open(self.home / "zygote.log", "wb")  # noqa: SIM115 - the child keeps it open
        try:
            self.proc = subprocess.Popen(
                argv, env=env, cwd=self.home, pass_fds=[theirs.fileno()], stdin=subprocess.DEVNULL,
                stdout=log, stderr=log, start_new_session=True, close_fds=True,
            )
        finally:
            theirs.close()
            log.close()
        try:
            self.info, _ = recv(self.ctrl, timeout=_ZYGOTE_START_TIMEOUT)
            self.info["walled"] = self.walled
            self.info["tier"] = self.tier
        except (ChannelClosed, FrameTooLarge):
            tail = (self.home / "zygote.log").read_text(errors="replace")[-2000:]
            self.close()
            raise SandboxError(f"The sandbox worker did not start. Its log ends with:\n{tail}") from None

    @classmethod
    def get(cls, lean: bool = False) -> "Zygote":
        """The running zygote (the lean one with ``lean``), started (or restarted after a crash) as needed.

        Raises:
            SandboxError: the worker process could not be started.
        """
        with cls._class_lock:
            zygote = cls._instances.get(lean)
            if zygote is None or not zygote.alive():
                if zygote is not None:
                    zygote.close()
                zygote = cls._instances[lean] = Zygote(lean)
                started = True
            else:
                started = False
        if started and lean:
            cls.prestart()  # the full one too, in the background: a session moving to it then finds it running
        return zygote

    @classmethod
    def prestart(cls) -> None:
        """Start the zygote in the background now (its imports take seconds), so that it is warm by the
        first question; returns at once. A failure shows at the first :meth:`get`."""
        def warm() -> None:
            try:
                cls.get(lean=True)  # first: new sessions start on it
                cls.get()
            except SandboxError:
                pass

        threading.Thread(target=warm, name="aa-zygote-prestart", daemon=True).start()

    def alive(self) -> bool:
        return self.proc.poll() is None

    def spawn(self, uid: int = 0, workdir: Path | None = None, tmp_mb: int = 256,
              duck_dir: Path | None = None) -> tuple[socket.socket, int, int]:
        """A new session state process: (connected socket, pid, pidfd or -1).

        Walled (bubblewrap), the session gets its own namespaces (:mod:`.sessionns`) with ``workdir``
        on ``/session``; the pidfd refers to the session's init (PID 1 of its PID namespace), and
        killing it ends every process of the session; pids inside mean nothing here, so the pid is 0.
        Not walled, with ``uid`` (only when ``info["privdrop"]``), the state process runs as that
        uid/gid in its own mount namespace (:mod:`.privdrop`); in the namespace-free tier it is also walled by
        Landlock (:mod:`.landwall`). The work dir goes as a descriptor
        opened here, so the session process can check it binds that very folder. ``duck_dir`` (the session's
        DuckDB table files) is bound read-only on ``/duckdb`` the same way (not walled: made reachable at its path).

        Raises:
            SandboxError: the zygote did not answer.
        """
        send_fd = workdir is not None and (self.walled or self.guarded or uid)
        fd = os.open(workdir, os.O_RDONLY | os.O_DIRECTORY) if send_fd else -1
        duck_fd = os.open(duck_dir, os.O_RDONLY | os.O_DIRECTORY) if send_fd and duck_dir is not None else -1
        msg = {"op": "spawn", "uid": uid, "workdir": str(workdir or ""), "tmp_mb": int(tmp_mb), "fd": fd >= 0}
        if duck_fd >= 0:  # only then: a session without DuckDB tables is spawned exactly as before
            msg["duck"] = str(duck_dir)
        with self._lock:
            try:
                send(self.ctrl, msg)
                if fd >= 0:
                    socket.send_fds(self.ctrl, [b"W"], [fd] + ([duck_fd] if duck_fd >= 0 else []))
                reply, _ = recv(self.ctrl, timeout=30)
                _, fds, _, _ = socket.recv_fds(self.ctrl, 1, 2)
            except (ChannelClosed, FrameTooLarge, OSError) as e:
                raise SandboxError(f"The sandbox worker did not start a session: {e}") from None
            finally:
                for f in (fd, duck_fd):
                    if f >= 0:
                        os.close(f)
        if not reply.get("ok", True) or not fds:
            for f in fds:
                os.close(f)
            raise SandboxError(f"The sandbox worker could not start a session: {reply.get('error') or 'no connection'}")
        for f in fds:
            os.set_inheritable(f, False)  # received descriptors are inheritable; no exec of ours needs them
        pidfd = fds[1] if len(fds) > 1 else -1
        return socket.socket(fileno=fds[0]), int(reply.get("pid") or 0), pidfd

    def close(self) -> None:
        """Stop the zygote. Sessions it already started keep running until their Sandbox closes them."""
        try:
            self.ctrl.close()
            self.proc.wait(timeout=5)
        except (OSError, subprocess.TimeoutExpired):
            self.proc.kill()
            self.proc.wait()
        shutil.rmtree(self.home, ignore_errors=True)

    @classmethod
    def shutdown(cls) -> None:
        with cls._class_lock:
            for zygote in cls._instances.values():
                zygote.close()
            cls._instances.clear()


atexit.register(Zygote.shutdown)
