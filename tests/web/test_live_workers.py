"""WebService._reap: which conversations' workers are stopped past max_live_workers."""

from __future__ import annotations

import threading
import time
from types import SimpleNamespace

from auto_analyst.web.service import WebService


def _conv(cid: str, age: float, closed: list[str]) -> SimpleNamespace:
    session = SimpleNamespace(close=lambda: closed.append(cid))
    return SimpleNamespace(id=cid, updated=time.time() - age, busy=False, lock=threading.Lock(), session=session)


def _service(max_live: int, convs: list[SimpleNamespace]) -> WebService:
    svc = object.__new__(WebService)  # only the reaping state; no Analyst, no workers
    svc.max_live_workers, svc.keep_active_seconds = max_live, 120.0
    svc._lock = threading.Lock()
    svc._live = {c.id: c for c in convs}
    return svc


def test_conversations_in_use_keep_their_workers_past_the_cap() -> None:
    closed: list[str] = []
    convs = [_conv("old", 1000, closed), _conv("a", 5, closed), _conv("b", 2, closed)]
    svc = _service(1, convs)
    svc._reap()
    # Only the one idle longer than keep_active_seconds is stopped; a and b would only be restarted.
    assert closed == ["old"]
    assert sorted(svc._live) == ["a", "b"]


def test_the_cap_applies_once_they_pause() -> None:
    closed: list[str] = []
    convs = [_conv("x", 900, closed), _conv("y", 600, closed), _conv("z", 300, closed)]
    svc = _service(1, convs)
    svc._reap()
    assert closed == ["x", "y"] and list(svc._live) == ["z"]
