"""The web process's side of a queued sandbox: the same calls as a local Sandbox, each one a job on the queue.

:func:`queue_sandbox_factory` is the Runtime's sandbox factory when ``queue_url`` is set. A
:class:`QueueSandbox` sends each call to the worker that holds the session (:mod:`.routing`) and waits
for its reply; after a call that changed the session's state succeeds, it is appended to the replay
log (:mod:`.replay`), from which any other worker rebuilds the session if its worker is lost.

The work folder and figures folder are paths under ``settings.home``, which web processes and workers
share (as they already share the uploaded files whose paths the history database keeps): a worker
writes the figures where this process reads them.
"""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path
from typing import Any

from auto_analyst.errors import BadInputError, SandboxError
from auto_analyst.extras import require
from auto_analyst.queue import routing
from auto_analyst.queue.connection import PREFIX, redis_for, session_key
from auto_analyst.queue.replay import ReplayLog
from auto_analyst.results import ErrorInfo, RunResult

EXECUTE = "auto_analyst.queue.worker.execute"
"""The worker's entry point, named by path: RQ imports it in the worker, so callers never import the worker."""

__all__ = ["QueueSandbox", "queue_sandbox_factory", "WORKER_LOST"]

WORKER_LOST = "worker_lost"
_LOST_MESSAGE = ("The worker running this script was lost (stopped or killed) before it finished; the session "
                 "goes on on another worker with its tables and variables rebuilt. Ask again.")
_OP_TIMEOUT = 120.0  # seconds a non-run call may take, queueing included (rebuilding a session replays its runs)
_RESULT_TTL = 600  # seconds RQ keeps a reply; the caller reads it within a second of its arrival


def queue_sandbox_factory(settings: Any):
    """(work dir, figures dir) → a :class:`QueueSandbox` on ``settings.queue_url``."""

    def build(work_dir: Path, figures_dir: Path) -> QueueSandbox:
        return QueueSandbox(settings, work_dir, figures_dir)

    return build


class QueueSandbox:
    """A session's sandbox in an ``auto-analyst worker`` process, reached through the Redis queue.

    Same methods and errors as :class:`auto_analyst.execution.sandbox.Sandbox`; :meth:`run` also returns
    ``error.kind == "worker_lost"`` when the worker died during the run.

    Args:
        settings: ``queue_url``, ``database_url`` (the replay log), ``run_timeout``.
        work_dir, figures_dir: the session's folders (under the shared ``settings.home``).
    """

    def __init__(self, settings: Any, work_dir: Path, figures_dir: Path):
        from auto_analyst.storage import database_url

        self.settings = settings
        self.key = session_key(work_dir)
        self.spec = {"work_dir": str(Path(work_dir).absolute()), "figures_dir": str(Path(figures_dir).absolute())}
        self.redis = redis_for(settings.queue_url)
        require("rq")  # said now, not at the first run
        self.log = ReplayLog(database_url(settings))
        self._lock = threading.RLock()
        self._closed = False
        self.worker = ""  # the worker the last call went to (tests, diagnostics)

    # -- lifecycle -------------------------------------------------------------------------------
    def start(self) -> None:
        """Nothing to start here: the worker starts the session's sandbox on its first call.

        Raises:
            SandboxError: the sandbox was closed.
        """
        if self._closed:
            raise SandboxError("This sandbox was closed; create a new one.")

    def close(self) -> None:
        """Let go of the session (idempotent). Its sandbox stays on its worker, whose least-recently-used
        limit (``worker_sessions``) closes it: another web process may still be serving the same session."""
        self._closed = True

    def forget(self) -> None:
        """Stop the session's sandbox on its worker and forget its state (a deleted conversation)."""
        with self._lock:
            try:
                self._call("close", {}, timeout=15.0)
            except (SandboxError, BadInputError):
                pass  # a worker that is gone has nothing to close
            finally:
                self.log.clear(self.key)
                routing.forget_route(self.redis, self.key)
                self._closed = True

    def __enter__(self) -> QueueSandbox:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- state -----------------------------------------------------------------------------------
    def load_tables(self, tables: dict[str, Path], active: str) -> None:
        """Make Parquet files the session's tables (see ``Sandbox.load_tables``).

        Raises:
            BadInputError: ``active`` is not among ``tables``, or a file does not exist.
            SandboxError: the worker could not load them, or no worker is running.
        """
        if active not in tables:
            raise BadInputError(f"The active table {active!r} is not among the tables ({', '.join(tables)}).")
        payload = {"tables": {str(n): str(Path(p).resolve()) for n, p in tables.items()}, "active": active}
        with self._lock:
            self._call("load", payload)
            self.log.append(self.key, "load", payload)

    def set_active(self, name: str) -> None:
        """Bind ``df`` to the table ``name``.

        Raises:
            BadInputError: no table of that name.
        """
        with self._lock:
            self._call("active", {"name": name})
            self.log.append(self.key, "active", {"name": name})

    def variables(self) -> dict[str, str]:
        """The session's user-visible names -> short description (see ``Sandbox.variables``)."""
        with self._lock:
            return dict(self._call("vars", {}))

    # -- running ---------------------------------------------------------------------------------
    def run(self, code: str, cancel: threading.Event | None = None) -> RunResult:
        """Run ``code`` on the session's worker; never raises for the script's sake (see ``Sandbox.run``).

        Returns:
            The worker's RunResult; ``error.kind`` ``worker_lost`` when the worker died before replying,
            ``sandbox`` when no worker is running.
        """
        t0 = time.monotonic()
        with self._lock:
            try:
                value = self._call("run", {"code": code}, timeout=float(self.settings.run_timeout) * 4 + 300.0,
                                   cancel=cancel, retry=False)
            except _WorkerLost:
                return RunResult(ok=False, error=ErrorInfo(kind=WORKER_LOST, message=_LOST_MESSAGE),
                                 seconds=round(time.monotonic() - t0, 4))
            except SandboxError as exc:
                return RunResult(ok=False, error=ErrorInfo(kind="sandbox", message=str(exc)),
                                 seconds=round(time.monotonic() - t0, 4))
            result = RunResult.model_validate(value)
            if result.ok:
                self.log.append(self.key, "run", {"code": code})
            return result

    # -- the queue -------------------------------------------------------------------------------
    def _call(self, op: str, payload: dict[str, Any], timeout: float = _OP_TIMEOUT,
              cancel: threading.Event | None = None, retry: bool = True) -> Any:
        """Send one call to the session's worker and return its value.

        A worker found dead is replaced (the new one rebuilds the session from the replay log) and the
        call sent once more when ``retry``; otherwise :class:`_WorkerLost`.
        """
        from rq import Queue
        from rq.job import JobStatus

        worker, _ = routing.route(self.redis, self.key)
        self.worker = worker
        job = Queue(routing.queue_name(worker), connection=self.redis).enqueue_call(
            EXECUTE, args=(self.key, self.spec, op, payload), timeout=int(timeout) + 60, result_ttl=_RESULT_TTL,
            failure_ttl=_RESULT_TTL)
        deadline = time.monotonic() + timeout
        cancel_sent = False
        while True:
            res = job.latest_result(timeout=1)
            if res is not None:
                return _reply(res)
            if cancel is not None and cancel.is_set() and not cancel_sent:
                self.redis.set(f"{PREFIX}cancel:{job.id}", "1", ex=600)
                cancel_sent = True
            if not routing.alive(self.redis, worker):
                routing.forget_route(self.redis, self.key)
                started = job.get_status(refresh=True) not in (JobStatus.QUEUED, JobStatus.DEFERRED)
                job.cancel()
                if retry or not started:  # a call still waiting in the dead worker's queue never ran: resend it
                    return self._call(op, payload, timeout, cancel, retry=False)
                raise _WorkerLost(worker)
            if time.monotonic() > deadline:
                job.cancel()
                raise SandboxError(f"The worker did not answer a {op!r} call within {timeout:.0f} s.")


class _WorkerLost(Exception):
    """The worker holding the session died before replying."""


def _reply(res: Any) -> Any:
    from rq.results import Result

    if res.type != Result.Type.SUCCESSFUL:
        last = (res.exc_string or "").strip().splitlines()[-1:] or ["no detail"]
        raise SandboxError(f"The worker failed the call: {last[0][:300]}")
    reply = json.loads(res.return_value)
    if not reply.get("ok"):
        err = reply.get("error") or {}
        if err.get("kind") == "bad_input":
            raise BadInputError(err.get("message", "bad input"))
        raise SandboxError(err.get("message", "the worker refused the call"))
    return reply.get("value")
