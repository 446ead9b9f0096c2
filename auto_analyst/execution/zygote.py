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
from auto_analyst.execution.limits import clean_env, make_private_dir
from auto_analyst.execution.protocol import ChannelClosed, FrameTooLarge, recv, send

__all__ = ["Zygote"]

_ZYGOTE_START_TIMEOUT = 120.0  # seconds; imports take ~2.5 s, but a cold disk cache or busy CI is much slower


class Zygote:
    """The warm fork server: one per caller process, shared by every :class:`Sandbox`.

    Use :meth:`get`; it (re)starts the server when needed. Thread-safe.
    """

    _instance: "Zygote | None" = None
    _class_lock = threading.Lock()

    def __init__(self) -> None:
        self.home = make_private_dir("aa-worker-")
        (self.home / "matplotlib").mkdir()
        ours, theirs = socket.socketpair()
        self._lock = threading.Lock()
        self.ctrl = ours
        log = open(self.home / "zygote.log", "wb")  # noqa: SIM115 - the child keeps it open
        try:
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "auto_analyst.execution.worker", str(theirs.fileno())],
                env=clean_env(self.home), cwd=self.home, pass_fds=[theirs.fileno()], stdin=subprocess.DEVNULL,
                stdout=log, stderr=log, start_new_session=True, close_fds=True,
            )
        finally:
            theirs.close()
            log.close()
        try:
            self.info, _ = recv(self.ctrl, timeout=_ZYGOTE_START_TIMEOUT)
        except (ChannelClosed, FrameTooLarge):
            tail = (self.home / "zygote.log").read_text(errors="replace")[-2000:]
            self.close()
            raise SandboxError(f"The sandbox worker did not start. Its log ends with:\n{tail}") from None

    @classmethod
    def get(cls) -> "Zygote":
        """The running zygote, started (or restarted after a crash) as needed.

        Raises:
            SandboxError: the worker process could not be started.
        """
        with cls._class_lock:
            if cls._instance is None or not cls._instance.alive():
                if cls._instance is not None:
                    cls._instance.close()
                cls._instance = Zygote()
            return cls._instance

    def alive(self) -> bool:
        return self.proc.poll() is None

    def spawn(self, uid: int = 0, workdir: Path | None = None) -> tuple[socket.socket, int]:
        """A new session state process: (connected socket, pid).

        With ``uid`` (only when ``info["privdrop"]``), the state process runs as that uid/gid in
        its own mount namespace, with ``workdir`` (which it gets as a descriptor opened here, so
        neither the zygote nor the session needs a path to it) as its cwd.

        Raises:
            SandboxError: the zygote did not answer.
        """
        fd = os.open(workdir, os.O_RDONLY | os.O_DIRECTORY) if uid and workdir is not None else -1
        with self._lock:
            try:
                send(self.ctrl, {"op": "spawn", "uid": uid if fd >= 0 else 0, "workdir": str(workdir or "")})
                if fd >= 0:
                    socket.send_fds(self.ctrl, [b"W"], [fd])
                reply, _ = recv(self.ctrl, timeout=30)
                _, fds, _, _ = socket.recv_fds(self.ctrl, 1, 1)
            except (ChannelClosed, FrameTooLarge, OSError) as e:
                raise SandboxError(f"The sandbox worker did not start a session: {e}") from None
            finally:
                if fd >= 0:
                    os.close(fd)
        if not fds:
            raise SandboxError("The sandbox worker sent no session connection.")
        os.set_inheritable(fds[0], False)  # received descriptors are inheritable; no exec of ours needs it
        return socket.socket(fileno=fds[0]), int(reply["pid"])

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
            if cls._instance is not None:
                cls._instance.close()
                cls._instance = None


atexit.register(Zygote.shutdown)
