"""The ``auto-analyst worker`` process: takes jobs from its own RQ queue and keeps the sessions' sandboxes.

An RQ ``SimpleWorker`` runs each job in this process (RQ's default worker forks a child per job, which
would lose the sandboxes between jobs). Sandboxes are the ones the Runtime's sandbox factory makes
(:func:`auto_analyst.runtime.sandbox_factory`), so a queued run is exactly the run ``ask`` makes
without a queue. A session this worker does not hold (new, moved here from a lost worker, or closed
here for room) is rebuilt from the replay log (:mod:`.replay`) before the call runs.
"""

from __future__ import annotations

import json
import logging
import os
import secrets
import socket
import threading
from collections import OrderedDict
from pathlib import Path
from typing import Any

from auto_analyst.errors import BadInputError, SandboxError

__all__ = ["WorkerHost", "execute", "run_worker"]

log = logging.getLogger(__name__)

_HOST: WorkerHost | None = None
"""The sessions of this worker process. RQ calls :func:`execute` by name, so the function finds them here;
only ``auto-analyst worker`` sets it, and no web or CLI process ever has one."""


class WorkerHost:
    """The sandboxes of one worker process, by session key, least recently used first.

    Args:
        settings: ``worker_sessions`` (how many sandboxes stay live) and what the sandbox factory reads.
        make_sandbox: (work dir, figures dir) → a Sandbox; default the Runtime's factory for ``settings``.
    """

    def __init__(self, settings: Any, make_sandbox: Any = None):
        from auto_analyst.queue.replay import ReplayLog
        from auto_analyst.storage import database_url

        self.settings = settings
        self.make_sandbox = make_sandbox or _local_sandbox(settings)
        self.log = ReplayLog(database_url(settings))
        self.sandboxes: OrderedDict[str, Any] = OrderedDict()
        self.replayed = 0  # scripts replayed to rebuild sessions (tests, diagnostics)

    def sandbox(self, key: str, spec: dict[str, str]) -> Any:
        """The session's sandbox, rebuilt from its replay log when this worker does not hold it."""
        box = self.sandboxes.get(key)
        if box is not None:
            self.sandboxes.move_to_end(key)
            return box
        box = self.make_sandbox(Path(spec["work_dir"]), Path(spec["figures_dir"]))
        box.start()
        self._replay(key, box)
        self.sandboxes[key] = box
        while len(self.sandboxes) > max(1, int(self.settings.worker_sessions)):
            _, old = self.sandboxes.popitem(last=False)
            old.close()  # its log stays: it is rebuilt by replay when used again
        return box

    def _replay(self, key: str, box: Any) -> None:
        for op, payload in self.log.ops(key):
            try:
                if op == "load":
                    box.load_tables({n: Path(p) for n, p in payload["tables"].items()}, payload["active"])
                elif op == "active":
                    box.set_active(payload["name"])
                elif op == "run":
                    result = box.run(payload["code"])
                    self.replayed += 1
                    for f in result.figures:  # the replayed run's output was shown already
                        Path(f.path).unlink(missing_ok=True)
            except BadInputError as exc:  # e.g. a table file deleted since: rebuild what can be rebuilt
                log.warning("session %s: replaying %s failed (%s)", key, op, exc)

    def execute(self, key: str, spec: dict[str, str], op: str, payload: dict[str, Any], job_id: str = "",
                redis: Any = None) -> dict[str, Any]:
        """Carry out one call; returns ``{"ok": True, "value": ...}`` or ``{"ok": False, "error": {kind, message}}``."""
        try:
            if op == "close":
                box = self.sandboxes.pop(key, None)
                if box is not None:
                    box.close()
                return {"ok": True, "value": None}
            box = self.sandbox(key, spec)
            if op == "load":
                box.load_tables({n: Path(p) for n, p in payload["tables"].items()}, payload["active"])
                return {"ok": True, "value": None}
            if op == "active":
                box.set_active(payload["name"])
                return {"ok": True, "value": None}
            if op == "vars":
                return {"ok": True, "value": box.variables()}
            if op == "run":
                cancel = threading.Event()
                stop = threading.Event()
                if redis is not None and job_id:
                    threading.Thread(target=_watch_cancel, args=(redis, job_id, cancel, stop), daemon=True).start()
                try:
                    return {"ok": True, "value": box.run(payload["code"], cancel=cancel).model_dump(mode="json")}
                finally:
                    stop.set()
            return {"ok": False, "error": {"kind": "sandbox", "message": f"unknown call {op!r}"}}
        except BadInputError as exc:
            return {"ok": False, "error": {"kind": "bad_input", "message": str(exc)}}
        except SandboxError as exc:
            self.sandboxes.pop(key, None)
            return {"ok": False, "error": {"kind": "sandbox", "message": str(exc)}}

    def close(self) -> None:
        while self.sandboxes:
            _, box = self.sandboxes.popitem()
            try:
                box.close()
            except Exception:  # noqa: BLE001 - stopping: close the others anyway
                log.exception("closing a sandbox failed")


def _watch_cancel(redis: Any, job_id: str, cancel: threading.Event, stop: threading.Event) -> None:
    from auto_analyst.queue.connection import PREFIX

    while not stop.wait(0.1):
        if redis.exists(f"{PREFIX}cancel:{job_id}"):
            cancel.set()
            return


def execute(key: str, spec: dict[str, str], op: str, payload: dict[str, Any]) -> str:
    """The RQ job: one call on a session's sandbox, in the worker process; returns the reply as JSON text."""
    from rq import get_current_job

    if _HOST is None:
        raise RuntimeError("execute runs only inside `auto-analyst worker`")
    job = get_current_job()
    return json.dumps(_HOST.execute(key, spec, op, payload, job.id if job else "", job.connection if job else None),
                      default=str)


def run_worker(settings: Any, worker_id: str | None = None, burst: bool = False) -> None:
    """Serve jobs until stopped (SIGTERM or Ctrl+C finish the current job first; SIGKILL loses it).

    Raises:
        BadInputError: ``queue_url`` is not set.
    """
    global _HOST
    if not settings.queue_url:
        raise BadInputError("The worker needs a queue: set AUTO_ANALYST_QUEUE_URL (e.g. redis://127.0.0.1:6379/0).")
    from auto_analyst.extras import require

    require("rq", "auto-analyst worker")
    from rq import Queue, SimpleWorker

    from auto_analyst.queue import routing
    from auto_analyst.queue.connection import redis_for

    redis = redis_for(settings.queue_url, worker=True)
    worker_id = worker_id or f"{socket.gethostname()}-{os.getpid()}-{secrets.token_hex(3)}"
    _HOST = host = WorkerHost(settings)
    threading.Thread(target=_warm_up, daemon=True).start()
    stop = threading.Event()

    def heartbeat() -> None:
        while not stop.is_set():
            try:
                routing.beat(redis, worker_id, len(host.sandboxes))
            except Exception:  # noqa: BLE001 - Redis restarting: keep beating
                log.warning("worker %s: heartbeat failed", worker_id, exc_info=True)
            stop.wait(routing.HEARTBEAT_SECONDS)

    routing.beat(redis, worker_id, 0)
    threading.Thread(target=heartbeat, daemon=True).start()
    try:
        queue = Queue(routing.queue_name(worker_id), connection=redis)
        SimpleWorker([queue], connection=redis, name=worker_id).work(burst=burst, logging_level="WARNING")
    finally:
        stop.set()
        routing.retire(redis, worker_id)
        host.close()
        _HOST = None


def _warm_up() -> None:
    """Start the sandbox's zygotes now (the lean one first: new sessions start on it), so the first run does not
    wait for their imports."""
    try:
        from auto_analyst.execution.zygote import Zygote

        Zygote.get(lean=True)
        Zygote.get()
    except Exception:  # noqa: BLE001 - the first run starts it (and reports) if this failed
        log.debug("zygote warm-up failed", exc_info=True)


def _local_sandbox(settings: Any) -> Any:
    """The same sandbox a single-process Runtime builds without ``queue_url``.

    Built here rather than through the Runtime: the Runtime chooses the queue, so it may not be imported by it.
    """
    from auto_analyst.execution.sandbox import Sandbox

    return lambda work_dir, figures_dir: Sandbox(settings, work_dir, figures_dir)
