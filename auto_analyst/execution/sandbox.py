"""The caller's side of the sandbox: :class:`Sandbox` (one per session) and the shared zygote.

Generated code never runs in this process, and nothing a script made is unpickled here: results
arrive as JSON (tables as capped records) plus raw figure bytes, which are written to
``figures_dir`` under fresh names. See :mod:`.worker` for the process tree and :mod:`.limits`
for why each limit exists.
"""

from __future__ import annotations

import os
import signal
import socket
import threading
import time
from pathlib import Path
from typing import Any

from auto_analyst.errors import BadInputError, SandboxError
from auto_analyst.execution.inprocess import run_in_process
from auto_analyst.execution.limits import Limits, set_dumpable
from auto_analyst.execution.privdrop import claim_uid, release_uid
from auto_analyst.execution.protocol import ChannelClosed, FrameTooLarge, readable, recv, send
from auto_analyst.execution import duckns, preload
from auto_analyst.execution.incoming import FORGED as _FORGED
from auto_analyst.execution.incoming import pidfd_pid as _pidfd_pid
from auto_analyst.execution.incoming import to_run_result
from auto_analyst.execution.protections import refusal
from auto_analyst.execution.zygote import Zygote
from auto_analyst.results import ErrorInfo, RunResult

__all__ = ["Sandbox", "Zygote", "run_in_process"]

_OP_TIMEOUT = 60.0  # seconds for a non-run request (loading a large Parquet file is the slowest)
_BACKSTOP = 10.0  # seconds past run_timeout before the caller stops trusting the state process
_RESTART_NOTE = "[sandbox restarted: the session's worker had stopped; the tables were reloaded, variables from earlier runs are lost]\n"


class Sandbox:
    """Runs generated scripts for one session in isolated worker processes, keeping the session's variables.

    The script's namespace has ``pd``, ``np``, each table under its name, ``df`` (the active
    table), ``tables`` (name -> DataFrame) and ``show(obj, name=None, title=None)``. Names a
    script creates are there for the next :meth:`run`; a run that fails, times out or is killed
    leaves the state from before it untouched. Every method is thread-safe (calls are serialised).
    A DuckDB table (a ``.duckdb`` file in the session's ``duck`` folder beside ``workdir``) is a DuckDB
    relation instead, and the run also gets ``con``, a read-only DuckDB connection (:mod:`.duckns`).

    Args:
        settings: the limits come from ``run_timeout``, ``run_cpu_seconds``, ``run_memory_mb``,
            ``run_max_processes``, ``run_max_open_files``, ``run_max_output_bytes``,
            ``max_table_rows`` and ``max_file_mb``.
        workdir: the scripts' working directory (created if missing); files they write land here.
        figures_dir: where figure files (``<uuid>.json`` for plotly, ``<uuid>.png``) are written.
    """

    def __init__(self, settings: Any, workdir: Path, figures_dir: Path):
        self.settings = settings
        self.limits = Limits.from_settings(settings)
        self.workdir = Path(workdir)
        self.figures_dir = Path(figures_dir)
        self._lock = threading.RLock()
        self._sock: socket.socket | None = None
        self._state_pid = 0
        self._pidfd = -1  # the session's init (walled) or state process: killing it ends the session's processes
        self._refused: str | None = None
        self._tables: dict[str, str] = {}
        self._sent: dict[str, list] = {}  # table -> (path, size, mtime) the current state process has
        self._active = ""
        self._uid = 0
        self._closed = False
        self._ever_started = False
        self.duck_dir = self.workdir.parent / duckns.FOLDER  # bound into the worker when it exists at start
        self._duck_bound = False
        # A session starts on the lean zygote (cheaper forks, see zygote.Zygote) and moves to the full one for
        # good when a script imports a later library; it moves only while no script ran in its state process
        # (their variables would be lost), else the state imports the library itself.
        self._lean, self._state_lean, self._ran = True, False, False

    # -- lifecycle ----------------------------------------------------------------------------

    def start(self) -> None:
        """Start this session's state process (idempotent).

        Raises:
            SandboxError: the worker could not be started, or the closed sandbox was reused.
        """
        with self._lock:
            if self._closed:
                raise SandboxError("This sandbox was closed; create a new one.")
            if self._sock is not None or self._refused:
                return
            self._refused = refusal(self.settings)
            if self._refused:
                return
            # Our own /proc/<pid>/environ (API keys) must not be readable by the workers.
            set_dumpable(False)
            self.workdir.mkdir(parents=True, exist_ok=True)
            self.figures_dir.mkdir(parents=True, exist_ok=True)
            if Zygote.get(self._lean).info.get("privdrop"):
                # The session's own uid owns its work dir (only the top: chown-ing what a script left
                # inside, as root, could be steered through symlinks).
                self._uid = self._uid or claim_uid(os.path.realpath(self.workdir))
                os.chown(self.workdir, self._uid, self._uid)
            self.workdir.chmod(0o700)
            duck = duckns.share_folder(self.duck_dir, self._uid)
            try:
                sock, pid, pidfd = Zygote.get(self._lean).spawn(self._uid, self.workdir.resolve(), self.limits.tmp_mb, duck)
            except SandboxError:
                # get() restarts a zygote that died meanwhile
                sock, pid, pidfd = Zygote.get(self._lean).spawn(self._uid, self.workdir.resolve(), self.limits.tmp_mb, duck)
            self._duck_bound, self._state_lean = duck is not None, self._lean
            self._sock, self._state_pid, self._pidfd = sock, pid, pidfd
            if pidfd >= 0:
                self._state_pid = _pidfd_pid(pidfd) or pid
            self._ever_started = True
            try:
                self._request({"op": "init", "cwd": str(self.workdir.resolve()), "limits": self.limits.to_dict()}, retry=False)
                if self._tables:
                    self._send_tables(retry=False)
            except SandboxError:
                self._drop()
                raise

    def close(self) -> None:
        """End the session's worker processes. Idempotent; the sandbox cannot be started again.

        A run in progress in another thread is waited for (set its ``cancel`` event to end it first).
        """
        with self._lock:
            self._close_state()
            self._closed = True
            release_uid(self._uid, os.path.realpath(self.workdir))

    def __enter__(self) -> "Sandbox":
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _close_state(self) -> None:
        if self._sock is not None:
            try:
                send(self._sock, {"op": "close"})
            except ChannelClosed:
                pass
        self._drop()

    def _drop(self) -> None:
        if self._sock is not None:
            self._sock.close()
        if self._pidfd >= 0:
            os.close(self._pidfd)
        self._sock, self._state_pid, self._pidfd = None, 0, -1
        self._sent, self._ran = {}, False

    # -- requests -----------------------------------------------------------------------------

    def _request(self, msg: dict[str, Any], timeout: float = _OP_TIMEOUT, retry: bool = True,
                 blobs: list[bytes] | None = None) -> dict[str, Any]:
        """Send one non-run request and wait for its reply.

        A state process found dead is restarted (tables reloaded) and the request sent once more;
        if that fails too, SandboxError.
        """
        assert self._sock is not None
        try:
            send(self._sock, msg, blobs)
            reply, _ = recv(self._sock, timeout=timeout)
        except (ChannelClosed, FrameTooLarge, ValueError) as e:
            self._kill_state()
            why = _FORGED if isinstance(e, (FrameTooLarge, ValueError)) else str(e)
            if not retry or msg.get("op") == "init":
                raise SandboxError(f"The session's worker stopped answering ({why}).") from None
            self.start()  # a restart sends every table again
            if msg.get("op") == "load":
                return {"ok": True}
            return self._request(msg, timeout, retry=False)
        if not isinstance(reply, dict):
            self._kill_state()
            raise SandboxError(f"The session's worker sent a malformed reply ({_FORGED}).")
        if not reply.get("ok"):
            err = reply.get("error") if isinstance(reply.get("error"), dict) else {}
            if err.get("kind") == "KeyError":
                raise BadInputError(err.get("message", "unknown table"))
            raise SandboxError(err.get("message", "the worker refused the request"))
        return reply

    def _kill_state(self, *pids: int) -> None:
        if self._pidfd >= 0:  # the session's init: its PID namespace, and every process in it, ends with it
            try:
                signal.pidfd_send_signal(self._pidfd, signal.SIGKILL)
            except OSError:
                pass
            pids, self._state_pid = (), 0  # a bare pid could by now be another process's
        for pid in (*pids, self._state_pid):
            if pid > 0:
                for kill in (os.killpg, os.kill):
                    try:
                        kill(pid, signal.SIGKILL)
                    except (ProcessLookupError, PermissionError):
                        pass
        self._drop()

    def load_tables(self, tables: dict[str, Path], active: str) -> None:
        """Make Parquet files the session's tables (call again after adding a table).

        Each file is made read-only for its owner only (0o400): this process reads it and sends
        the bytes, so the workers (another uid when running as root) need no access to it at all.
        A table already loaded from the same unchanged file keeps its in-session object. A ``.duckdb``
        file is a DuckDB table instead: not sent, read by the worker in place (read-only, see
        :func:`.duckns.share_file`).

        Args:
            tables: table name -> Parquet (or ``.duckdb``) file written by the caller. Names that are Python
                identifiers also become variables.
            active: the table bound to ``df``.

        Raises:
            BadInputError: ``active`` is not among ``tables``, or a file does not exist.
            SandboxError: the worker could not read a file (also when the session's memory,
                ``run_memory_mb`` beyond the libraries, cannot hold it).
        """
        if active not in tables:
            raise BadInputError(f"The active table {active!r} is not among the tables ({', '.join(tables)}).")
        paths: dict[str, str] = {}
        for name, path in tables.items():
            p = Path(path).resolve()
            if not p.is_file():
                raise BadInputError(f"Table file {p} does not exist.")
            if p.suffix != ".duckdb":
                p.chmod(0o400)
            paths[str(name)] = str(p)
        with self._lock:
            self.start()
            old = dict(self._tables), self._active
            self._tables.update(paths)
            self._active = active
            if self._refused:
                return
            try:
                self._send_tables()
            except BaseException:
                self._tables, self._active = old
                raise

    def _send_tables(self, retry: bool = True) -> None:
        """Send the Parquet bytes of every table the current state process does not have yet."""
        spec, blobs, keys = {}, [], {}
        for name, path in self._tables.items():
            try:
                st = os.stat(path)
                key = [path, st.st_size, st.st_mtime_ns]
                keys[name] = key
                if path.endswith(".duckdb"):
                    seen = duckns.share_file(path, self.duck_dir if self._duck_bound else None, self._uid,
                                             Zygote.get(self._lean).walled)
                    spec[name] = {"key": key, "blob": None, "duckdb": seen}
                elif self._sent.get(name) == key:
                    spec[name] = {"key": key, "blob": None}
                else:
                    blobs.append(Path(path).read_bytes())
                    spec[name] = {"key": key, "blob": len(blobs) - 1}
            except OSError as e:
                raise SandboxError(f"Table file {path} could not be read: {e}") from None
        msg = {"op": "load", "tables": spec, "active": self._active, "protect": list(self._tables.values())}
        self._request(msg, retry=retry, blobs=blobs)
        self._sent = keys

    def set_active(self, name: str) -> None:
        """Bind ``df`` to the table ``name``.

        Raises:
            BadInputError: no table of that name.
        """
        with self._lock:
            if name not in self._tables:
                raise BadInputError(f"No table named {name!r}; known: {', '.join(self._tables) or 'none'}.")
            self.start()
            if not self._refused:
                self._request({"op": "active", "name": name})
            self._active = name

    def variables(self) -> dict[str, str]:
        """User-visible names of the session -> short description, e.g. ``"DataFrame 12x3 [a, b, c]"``.

        Raises:
            SandboxError: the worker could not be reached.
        """
        with self._lock:
            self.start()
            if self._refused:
                return {}
            variables = self._request({"op": "vars"}, timeout=30).get("variables")
            return {str(k): str(v) for k, v in variables.items()} if isinstance(variables, dict) else {}

    # -- running ------------------------------------------------------------------------------

    def run(self, code: str, cancel: threading.Event | None = None) -> RunResult:
        """Run ``code`` in a fresh child of the session's state; never raises for the script's sake.

        Args:
            code: the Python script.
            cancel: set it to stop the run (checked every 50 ms); the result's kind is ``cancelled``.

        Returns:
            RunResult with ``ok``; on failure ``error.kind`` is the exception class name or one of
            ``timeout`` (wall clock ``run_timeout`` or CPU ``run_cpu_seconds``), ``memory``,
            ``killed``, ``cancelled``, ``output_limit`` or ``sandbox`` (the worker itself broke).
        """
        with self._lock:
            t0 = time.monotonic()
            note = _RESTART_NOTE if self._sock is None and self._ever_started else ""
            try:
                self.start()
            except SandboxError as e:
                return self._fail("sandbox", str(e), t0)
            if self._refused:
                return self._fail("sandbox", self._refused, t0)
            if self._state_lean and preload.needs_later(code):
                self._lean = False
                if not self._ran:
                    self._close_state()
                    try:
                        self.start()  # on the full zygote, with the tables sent again
                    except SandboxError as e:
                        return self._fail("sandbox", str(e), t0)
                    t0 = time.monotonic()  # the script's time (and the backstop) start now
            result = self._run_once(code, cancel, t0)
            self._ran = True
            if note:
                result.stdout = note + result.stdout
            return result

    def _run_once(self, code: str, cancel: threading.Event | None, t0: float, retry: bool = True) -> RunResult:
        assert self._sock is not None
        sock = self._sock
        try:
            send(sock, {"op": "run", "code": code, "timeout": self.limits.timeout})
        except ChannelClosed:
            # It died while idle (e.g. the OOM killer): start afresh and run there.
            self._kill_state()
            if not retry:
                return self._fail("sandbox", "the session's worker died right after starting", t0)
            try:
                self.start()
            except SandboxError as e:
                return self._fail("sandbox", str(e), t0)
            result = self._run_once(code, cancel, t0, retry=False)
            result.stdout = _RESTART_NOTE + result.stdout
            return result
        backstop = t0 + self.limits.timeout + _BACKSTOP
        run_pid = 0
        cancel_sent = False
        while True:
            if cancel is not None and cancel.is_set() and not cancel_sent:
                try:
                    send(sock, {"op": "cancel"})
                except ChannelClosed:
                    pass
                cancel_sent = True
            if time.monotonic() > backstop:
                self._kill_state(run_pid)
                return self._fail("timeout", f"TimeoutError: the worker did not stop the script after {self.limits.timeout:g} s; it was killed", t0)
            if not readable([sock], 0.05):
                continue
            try:
                msg, blobs = recv(sock, timeout=_OP_TIMEOUT)
            except (FrameTooLarge, ValueError):  # undecodable bytes: only a script writes those
                self._kill_state(run_pid)
                return self._fail("sandbox", f"{_FORGED}; the session's worker was stopped (the next run restarts it)", t0)
            except ChannelClosed:
                self._kill_state(run_pid)
                return self._fail("killed", "the session's worker died during the run; the next run restarts it", t0)
            if not isinstance(msg, dict):
                self._kill_state(run_pid)
                return self._fail("sandbox", f"{_FORGED}; the session's worker was stopped", t0)
            if msg.get("event") == "started":
                if self._pidfd < 0:  # pids are only meaningful here when the worker shares our PID namespace
                    run_pid = int(msg.get("pid") or 0)
                continue
            try:
                if msg.get("ok") and msg.get("keep", True) and msg.get("state_pid") and self._pidfd < 0:
                    self._state_pid = int(msg["state_pid"])
                return to_run_result(msg, blobs, self.figures_dir, t0)
            except (ValueError, TypeError, AttributeError, KeyError):  # pydantic's ValidationError is a ValueError
                # Only a script writing to the worker's connection itself could produce this.
                self._kill_state(run_pid)
                return self._fail("sandbox", f"{_FORGED} (a malformed result); the session's worker was stopped", t0)
            except OSError as e:
                return self._fail("sandbox", f"a figure could not be saved in {self.figures_dir}: {e}", t0)

    def _fail(self, kind: str, message: str, t0: float) -> RunResult:
        return RunResult(ok=False, error=ErrorInfo(kind=kind, message=message), seconds=round(time.monotonic() - t0, 4))
