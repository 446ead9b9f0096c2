"""Which worker holds which session, and which workers are alive (Redis keys with a time to live).

A worker refreshes ``aa:worker:<id>`` every :data:`HEARTBEAT_SECONDS` with a :data:`ALIVE_TTL` expiry
(its value: how many sessions it holds); a killed worker's key is gone within ``ALIVE_TTL``. A
session's route ``aa:route:<session key>`` names its worker; a route to a worker that is not alive is
replaced by the least loaded live worker.
"""

from __future__ import annotations

from typing import Any

from auto_analyst.errors import SandboxError
from auto_analyst.queue.connection import PREFIX

__all__ = ["ALIVE_TTL", "HEARTBEAT_SECONDS", "alive", "live_workers", "queue_name", "route", "beat", "retire",
           "forget_route"]

HEARTBEAT_SECONDS = 1.0
ALIVE_TTL = 4
"""Seconds a worker's alive key outlives its last heartbeat: four missed beats (a loaded 2-core machine can
stall a process for a second) before its sessions move, short enough that a lost run is reported promptly."""
ROUTE_TTL = 7 * 86400


def queue_name(worker_id: str) -> str:
    """The RQ queue only this worker takes jobs from."""
    return f"{PREFIX}w:{worker_id}"


def worker_key(worker_id: str) -> str:
    """The key a live worker refreshes (``stack status`` reads it too)."""
    return f"{PREFIX}worker:{worker_id}"


def beat(redis: Any, worker_id: str, sessions: int) -> None:
    redis.set(worker_key(worker_id), str(sessions), ex=ALIVE_TTL)


def retire(redis: Any, worker_id: str) -> None:
    redis.delete(worker_key(worker_id))


def alive(redis: Any, worker_id: str) -> bool:
    return bool(worker_id) and redis.exists(worker_key(worker_id)) == 1


def live_workers(redis: Any) -> dict[str, int]:
    """worker id -> sessions it holds, for every live worker."""
    keys = [k.decode() for k in redis.scan_iter(match=f"{PREFIX}worker:*", count=200)]
    values = redis.mget(keys) if keys else []
    return {k[len(PREFIX) + len("worker:"):]: int(v or 0) for k, v in zip(keys, values) if v is not None}


def route(redis: Any, key: str) -> tuple[str, bool]:
    """(the live worker holding session ``key``, True when it was just assigned to it).

    Raises:
        SandboxError: no worker is alive.
    """
    current = (redis.get(f"{PREFIX}route:{key}") or b"").decode()
    if current and alive(redis, current):
        return current, False
    workers = live_workers(redis)
    if not workers:
        raise SandboxError("No `auto-analyst worker` is running for the queue; start one (see docs/scale.md).")
    chosen = min(workers, key=lambda w: (workers[w], w))
    redis.set(f"{PREFIX}route:{key}", chosen, ex=ROUTE_TTL)
    return chosen, True


def forget_route(redis: Any, key: str) -> None:
    redis.delete(f"{PREFIX}route:{key}")
