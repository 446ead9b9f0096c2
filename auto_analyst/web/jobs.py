"""Background jobs: a question or a script runs in its own thread; progress is streamed as SSE.

The request that starts a job returns at once; the page then opens ``/events``. The job does not
depend on that stream: a client that goes away mid-stream only ends its generator, the run goes
on, and its result lands in the session (a reconnect replays every event from the start).
"""

from __future__ import annotations

import heapq
import itertools
import json
import logging
import secrets
import threading
import time
from typing import Any, Callable, Iterator

from auto_analyst.errors import AutoAnalystError

__all__ = ["Job", "sse"]

log = logging.getLogger(__name__)

# Browsers and proxies drop an idle event stream after ~30-60 s; a comment line every 15 s keeps
# it open during a long model call and lets the server notice a vanished client.
HEARTBEAT_SECONDS = 15.0


def sse(event: str, data: Any, event_id: int | None = None) -> str:
    """One server-sent event frame (``data`` as one JSON line, so no newline can split the frame)."""
    head = f"id: {event_id}\n" if event_id is not None else ""
    return f"{head}event: {event}\ndata: {json.dumps(data, ensure_ascii=False, default=str)}\n\n"


class _Deadlines:
    """One daemon thread that sets each job's cancel event at its deadline (a ``threading.Timer`` per job cost a
    thread start, which waits for the new thread to get the GIL: milliseconds on a busy server)."""

    def __init__(self) -> None:
        self._heap: list[tuple[float, int, threading.Event]] = []
        self._dropped: set[int] = set()
        self._count = itertools.count()
        self._cond = threading.Condition()
        self._thread: threading.Thread | None = None

    def add(self, seconds: float, event: threading.Event) -> int:
        """Set ``event`` in ``seconds`` unless :meth:`drop` is called with the returned key first."""
        key = next(self._count)
        with self._cond:
            heapq.heappush(self._heap, (time.monotonic() + seconds, key, event))
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(target=self._loop, name="aa-job-deadlines", daemon=True)
                self._thread.start()
            self._cond.notify()
        return key

    def drop(self, key: int) -> None:
        with self._cond:
            self._dropped.add(key)

    def _loop(self) -> None:
        with self._cond:
            while True:
                while self._heap and self._heap[0][1] in self._dropped:
                    self._dropped.discard(heapq.heappop(self._heap)[1])
                if not self._heap:
                    self._cond.wait()
                    continue
                at, key, event = self._heap[0]
                if at > time.monotonic():
                    self._cond.wait(at - time.monotonic())
                    continue
                heapq.heappop(self._heap)
                event.set()


_DEADLINES = _Deadlines()


class Job:
    """One run of ``work(on_progress, cancel) -> payload`` in a daemon thread.

    Events are ``(name, data)``: ``progress`` (a ProgressEvent dict), then exactly one of ``result``
    (the payload) or ``error`` ({kind, message}). ``timeout`` seconds after the start the cancel
    event is set, so a stuck run ends as cancelled instead of holding the session forever.

    Args:
        kind: ``ask`` or ``run``.
        work: the function to run; it gets a progress callback and a ``threading.Event``.
        timeout: seconds before the job cancels itself.
        on_done: called (in the job thread) after the last event, e.g. to note activity.
    """

    def __init__(self, kind: str, work: Callable[..., Any], timeout: float = 900.0,
                 on_done: Callable[["Job"], None] | None = None):
        self.id = secrets.token_urlsafe(9)
        self.kind = kind
        self.cancel = threading.Event()
        self.events: list[tuple[str, Any]] = []
        self.sinks: list[Callable[[str, Any], None]] = []  # also told every event (e.g. shared_jobs' Redis mirror)
        self.finished = False
        self.started = time.time()
        self._work, self._timeout, self._on_done = work, timeout, on_done
        self._cond = threading.Condition()
        self._thread = threading.Thread(target=self._run, name=f"aa-job-{self.id}", daemon=True)

    def start(self) -> "Job":
        self._thread.start()
        return self

    def _push(self, name: str, data: Any, final: bool = False) -> None:
        """Record an event; the final one (``result`` or ``error``) marks the job finished in the same step, so
        a reader that has seen it never finds the job still running."""
        for sink in self.sinks:
            try:
                sink(name, data)
            except Exception:  # noqa: BLE001 - other processes miss an event; this one still streams it
                log.exception("job %s: an event sink failed", self.id)
        with self._cond:
            self.events.append((name, data))
            self.finished = self.finished or final
            self._cond.notify_all()

    def progress(self, event: Any) -> None:
        """The ``on_progress`` callback given to the API."""
        data = event.model_dump() if hasattr(event, "model_dump") else dict(event)
        self._push("progress", data)

    def _run(self) -> None:
        deadline = _DEADLINES.add(self._timeout, self.cancel)
        try:
            self._push("result", self._work(self.progress, self.cancel), final=True)
        except AutoAnalystError as exc:
            self._push("error", {"kind": exc.kind, "message": str(exc)}, final=True)
        except Exception:  # noqa: BLE001 - a failed run must never take the server down
            log.exception("job %s failed", self.id)
            self._push("error", {"kind": "internal", "message": "The run failed on the server; the error was logged."},
                       final=True)
        finally:
            _DEADLINES.drop(deadline)
            with self._cond:
                self.finished = True
                self._cond.notify_all()
            if self._on_done is not None:
                try:
                    self._on_done(self)
                except Exception:  # noqa: BLE001
                    log.exception("job %s: on_done failed", self.id)

    def request_cancel(self) -> None:
        """Ask the run to stop (what the cancel view calls; a :class:`~.shared_jobs.RemoteJob` does it by Redis)."""
        self.cancel.set()

    def wait(self, timeout: float | None = None) -> bool:
        """Block until the job has finished (True) or ``timeout`` passed (False)."""
        with self._cond:
            return self._cond.wait_for(lambda: self.finished, timeout)

    def final(self) -> tuple[str, Any] | None:
        """The last event (``result`` or ``error``) once finished, else None."""
        with self._cond:
            return self.events[-1] if self.finished and self.events else None

    def stream(self, start: int = 0) -> Iterator[str]:
        """SSE frames of every event from index ``start``, ending after the final event. The events there when the
        reader wakes go out as one chunk: the server writes each chunk with four system calls, and on a busy server
        several events are ready at once."""
        i = start
        while True:
            with self._cond:
                self._cond.wait_for(lambda: i < len(self.events) or self.finished, HEARTBEAT_SECONDS)
                ready = self.events[i:]
                done = self.finished
            if not ready:
                if done:
                    return
                yield ": keepalive\n\n"
                continue
            frames = []
            for name, data in ready:
                i += 1
                frames.append(sse(name, data, i))
                if name in ("result", "error"):
                    yield "".join(frames)
                    return
            yield "".join(frames)
