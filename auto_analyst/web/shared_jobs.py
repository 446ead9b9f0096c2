"""Jobs seen by every web process: events, state and cancelling through Redis (when ``queue_url`` is set).

With several web processes a browser's requests land on any of them: the one that starts a question runs
it (its heavy part, the sandbox, runs in a worker), but the page's event stream, its status polls and its
cancel may reach another. So a job's events are also appended to the Redis list ``aa:job:<id>:events``,
its state is in ``aa:job:<id>`` (conversation, kind, finished), a conversation's running job is
``aa:conv:<id>:job`` (held with a time to live the running process keeps refreshing, which is also the
"busy" lock across processes), and a cancel is the key ``aa:job:<id>:cancel`` the running job watches.
A job whose process died (its busy key expired unfinished) ends for the page with an ``error`` event
of kind ``server_restarted``.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from typing import Any

from auto_analyst.queue.connection import PREFIX, redis_for

__all__ = ["SharedJobs", "RemoteJob"]

BUSY_TTL = 10  # seconds a conversation's busy key outlives its running process's last refresh
EVENTS_TTL = 86400  # seconds a finished job's events stay readable (a page reopened later replays them)
_POLL = 0.1  # seconds between reads of a stream that is waiting for events
HEARTBEAT_SECONDS = 15.0


class SharedJobs:
    """The Redis side of the web's jobs (one per web process)."""

    def __init__(self, queue_url: str):
        self.redis = redis_for(queue_url)

    # -- the running process --------------------------------------------------------------------
    def claim(self, conv_id: str, job_id: str, kind: str, user: str) -> bool:
        """Mark the conversation busy with ``job_id``; False when another process's job holds it."""
        if not self.redis.set(f"{PREFIX}conv:{conv_id}:job", job_id, nx=True, ex=BUSY_TTL):
            return False
        self.redis.hset(f"{PREFIX}job:{job_id}", mapping={"conv": conv_id, "kind": kind, "user": user,
                                                          "finished": "0"})
        self.redis.expire(f"{PREFIX}job:{job_id}", EVENTS_TTL)
        return True

    def attach(self, job: Any, conv_id: str) -> None:
        """Mirror ``job``'s events to Redis, keep its busy key alive, and set its cancel when asked elsewhere."""
        key = f"{PREFIX}job:{job.id}"

        def mirror(name: str, data: Any) -> None:
            pipe = self.redis.pipeline()
            pipe.rpush(key + ":events", json.dumps([name, data], default=str))
            pipe.expire(key + ":events", EVENTS_TTL)
            if name in ("result", "error"):
                pipe.hset(key, "finished", "1")
                pipe.delete(f"{PREFIX}conv:{conv_id}:job")
            pipe.execute()

        job.sinks.append(mirror)

        def keep_alive() -> None:
            while not job.finished:
                self.redis.set(f"{PREFIX}conv:{conv_id}:job", job.id, xx=True, ex=BUSY_TTL)
                if self.redis.exists(key + ":cancel"):
                    job.cancel.set()
                job.wait(1.0)

        threading.Thread(target=keep_alive, name=f"aa-job-{job.id}-alive", daemon=True).start()

    # -- any process ----------------------------------------------------------------------------
    def running(self, conv_id: str) -> str | None:
        """The id of the job running on the conversation in any process, or None."""
        job_id = self.redis.get(f"{PREFIX}conv:{conv_id}:job")
        return job_id.decode() if job_id else None

    def get(self, conv_id: str, job_id: str) -> RemoteJob | None:
        """The job ``job_id`` of the conversation, wherever it runs (None when unknown)."""
        meta = self.redis.hgetall(f"{PREFIX}job:{job_id}")
        if not meta or meta.get(b"conv", b"").decode() != conv_id:
            return None
        return RemoteJob(self, conv_id, job_id, meta.get(b"kind", b"ask").decode())


class RemoteJob:
    """A job of another web process, with the methods the views use on a local :class:`~.jobs.Job`."""

    def __init__(self, shared: SharedJobs, conv_id: str, job_id: str, kind: str):
        self.shared, self.conv_id, self.id, self.kind = shared, conv_id, job_id, kind
        self.redis = shared.redis
        self._key = f"{PREFIX}job:{job_id}"

    def _events(self, start: int = 0) -> list[tuple[str, Any]]:
        return [tuple(json.loads(e)) for e in self.redis.lrange(self._key + ":events", start, -1)]

    @property
    def finished(self) -> bool:
        return self.redis.hget(self._key, "finished") == b"1" or self._orphaned()

    def _orphaned(self) -> bool:
        """The process running it is gone: no busy key for it, and no final event."""
        return self.shared.running(self.conv_id) != self.id and self.redis.hget(self._key, "finished") != b"1"

    def final(self) -> tuple[str, Any] | None:
        events = self._events()
        if events and events[-1][0] in ("result", "error"):
            return events[-1]
        if self._orphaned():
            return _restarted()
        return None

    def request_cancel(self) -> None:
        self.redis.set(self._key + ":cancel", "1", ex=EVENTS_TTL)

    def stream(self, start: int = 0) -> Iterator[str]:
        """SSE frames from event ``start`` on, as :meth:`Job.stream` gives them."""
        from auto_analyst.web.jobs import sse

        i, quiet = start, time.monotonic()
        while True:
            events = self._events(i)
            for name, data in events:
                i += 1
                yield sse(name, data, i)
                if name in ("result", "error"):
                    return
            if events:
                quiet = time.monotonic()
                continue
            if self._orphaned() and not self._events(i):
                name, data = _restarted()
                yield sse(name, data, i + 1)
                return
            if time.monotonic() - quiet > HEARTBEAT_SECONDS:
                quiet = time.monotonic()
                yield ": keepalive\n\n"
            time.sleep(_POLL)


def _restarted() -> tuple[str, Any]:
    return ("error", {"kind": "server_restarted",
                      "message": "The server process running this question stopped; ask it again."})
