"""The Redis connection of a process (one client per process and URL) and the key names the queue uses."""

from __future__ import annotations

import hashlib
import os
import threading
from typing import Any

__all__ = ["redis_for", "session_key", "PREFIX"]

PREFIX = "aa:"
_CLIENTS: dict[tuple[int, str], Any] = {}
_LOCK = threading.Lock()


WORKER_SOCKET_TIMEOUT = 600
"""Socket timeout (s) of a worker's connection: above RQ's blocking dequeue (405 s). redis-py 8 defaults to
5 s, which RQ's own adjustment does not lift, so an idle worker logged timeouts and backed off (seen here)."""


def redis_for(url: str, worker: bool = False) -> Any:
    """The process's ``redis.Redis`` for ``url`` (a new one after a fork: connections never cross a fork).

    ``worker`` gives the long socket timeout a worker's blocking dequeue needs.

    Raises:
        MissingExtraError: the ``redis`` package is missing (the ``scale`` extra).
    """
    key = (os.getpid(), url + ("#worker" if worker else ""))
    with _LOCK:
        client = _CLIENTS.get(key)
        if client is None:
            from auto_analyst.extras import require

            redis = require("redis")
            # RQ stores pickled jobs, so replies stay bytes (decode_responses=False).
            options = {"socket_timeout": WORKER_SOCKET_TIMEOUT} if worker else {}
            client = _CLIENTS[key] = redis.Redis.from_url(url, **options)
    return client


def session_key(work_dir: Any) -> str:
    """A short stable id of one session's sandbox: a hash of its work folder's absolute path."""
    return hashlib.sha256(os.path.abspath(str(work_dir)).encode()).hexdigest()[:24]
