"""Runs through a Redis queue (RQ): ``auto-analyst worker`` processes own the sandboxes, web processes send them work.

* :mod:`.remote` - :class:`~.remote.QueueSandbox`, what the Runtime's sandbox factory returns when
  ``queue_url`` is set: the same interface as :class:`auto_analyst.execution.sandbox.Sandbox`, each call a job
  on the queue of the worker that holds the session.
* :mod:`.worker` - the worker process: an RQ ``SimpleWorker`` whose jobs run in the process that keeps
  the sessions' sandboxes, made by the Runtime's own sandbox factory (so a queued run is the same sandboxed run).
* :mod:`.routing` - which worker holds which session, which workers are alive.
* :mod:`.replay` - the log of each session's state-changing calls (tables loaded, active table, scripts
  that ran), kept in the database, from which another worker rebuilds a lost session.

See docs/scale.md for why RQ, and why routing by session plus replay.
"""

from __future__ import annotations

__all__ = ["QueueSandbox", "queue_sandbox_factory", "run_worker", "worker_key"]


def __getattr__(name: str):
    # lazy: importing the package must not import rq or redis
    if name == "run_worker":
        from auto_analyst.queue import worker

        return worker.run_worker
    if name == "worker_key":
        from auto_analyst.queue import routing

        return routing.worker_key
    if name in __all__:
        from auto_analyst.queue import remote

        return getattr(remote, name)
    raise AttributeError(f"module 'auto_analyst.queue' has no attribute {name!r}")
