"""Budget holds: questions asked at once by one member cannot all pass the daily cap (issue 24, M4)."""

from __future__ import annotations

import threading
import time
from datetime import timedelta

import pytest

from auto_analyst.results import Usage
from auto_analyst.storage import utc_now
from auto_analyst.web import AccountStore, create_app
from auto_analyst.web.quota_holds import MIN_ESTIMATE_USD, BudgetHolds, Hold, Refusal
from tests.web.conftest import Browser

QUESTIONS = ["total invest", "mean invest", "max invest", "min value", "total value", "mean kstock"]


def _race(n: int, attempt) -> list:
    """``attempt(k)`` from ``n`` threads released together; their results in thread order."""
    gate, results = threading.Barrier(n), [None] * n

    def one(k):
        gate.wait()
        results[k] = attempt(k)

    threads = [threading.Thread(target=one, args=(k,)) for k in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    return results


def _holds_exactly_one_at_a_time(store: AccountStore, monkeypatch) -> None:
    from auto_analyst.web import quota_holds

    store.add("bob", "bob-password")
    store.update("bob", daily_cost_usd=MIN_ESTIMATE_USD)  # room for one question's estimate
    holds = BudgetHolds(store)
    plain = quota_holds.text

    def slow_insert(sql):  # widen the window between the check and the insert, so an unlocked check races
        if sql.startswith("INSERT INTO budget_holds"):
            time.sleep(0.2)
        return plain(sql)

    monkeypatch.setattr(quota_holds, "text", slow_insert)
    got = _race(8, lambda k: holds.reserve("bob"))
    monkeypatch.setattr(quota_holds, "text", plain)
    assert sum(isinstance(g, Hold) for g in got) == 1 and sum(isinstance(g, Refusal) for g in got) == 7
    hold = next(g for g in got if isinstance(g, Hold))
    assert hold.amount_usd == MIN_ESTIMATE_USD and holds.held("bob") == MIN_ESTIMATE_USD
    # settled with its real cost: recorded, the hold gone, and the next question fits again
    holds.settle("bob", Usage(lm_calls=2, prompt_tokens=10, completion_tokens=3, cost_usd=0.004), hold)
    assert holds.held("bob") == 0 and store.spent_today("bob") == 0.004
    again = holds.reserve("bob")
    assert isinstance(again, Hold) and isinstance(holds.reserve("bob"), Refusal)
    # a hold a crashed server never settled stops counting after HOLD_SECONDS
    later = holds.reserve("bob", now=utc_now() + timedelta(hours=2))
    assert isinstance(later, Hold)
    holds.release(again)
    holds.release(later)
    assert holds.held("bob") == 0
    # no cap, no account: nothing is held
    store.add("carol", "carol-password")
    assert holds.reserve("carol") is None and holds.reserve("nobody") is None


def test_concurrent_reservations_on_sqlite_let_exactly_one_through(settings, monkeypatch):
    _holds_exactly_one_at_a_time(AccountStore(settings=settings), monkeypatch)


@pytest.mark.services
def test_concurrent_reservations_on_postgresql_let_exactly_one_through(monkeypatch):
    from auto_analyst.storage import engine_for
    from auto_analyst.storage.migrations import forget_applied
    from tests.services import service_url

    url = service_url("database")
    with engine_for(url).begin() as conn:  # a clean schema
        conn.exec_driver_sql("DROP SCHEMA IF EXISTS public CASCADE")
        conn.exec_driver_sql("CREATE SCHEMA public")
    forget_applied()
    _holds_exactly_one_at_a_time(AccountStore(url), monkeypatch)


@pytest.fixture
def offline_calls(monkeypatch) -> list:
    """Every request the offline model (the stand-in for a paid model) gets, recorded."""
    from auto_analyst.llm.offline.engine import OfflineEngine

    calls: list = []
    original = OfflineEngine.complete

    def counting(self, request):
        calls.append(" ".join(str(v) for v in getattr(request, "inputs", {}).values()))
        return original(self, request)

    monkeypatch.setattr(OfflineEngine, "complete", counting)
    return calls


def test_questions_asked_at_once_over_a_one_question_cap_run_once(settings, datasets_dir, offline_calls):
    store = AccountStore(settings=settings)
    store.add("bob", "bob-password")
    app = create_app({"TESTING": True, "SECRET_KEY": "test-secret", "SETTINGS": settings})
    try:
        bob = Browser(app.test_client(), login=("bob", "bob-password"))
        sids = [bob.new_session() for _ in QUESTIONS]
        for sid in sids:
            assert bob.upload(sid, datasets_dir / "grunfeld.csv").status_code == 201
        store.update("bob", daily_cost_usd=MIN_ESTIMATE_USD)  # one question's estimate fits, not two
        clients = []
        for _ in QUESTIONS:  # a browser (test client) per thread, all signed in as bob
            clients.append(Browser(app.test_client(), login=("bob", "bob-password")))
        answers = _race(len(QUESTIONS), lambda k: clients[k].post(f"/api/sessions/{sids[k]}/ask",
                                                                  json={"question": QUESTIONS[k]}))
        codes = [r.status_code for r in answers]
        assert sorted(codes) == [202] + [402] * (len(QUESTIONS) - 1), codes
        refused = [r for r in answers if r.status_code == 402]
        assert all(r.json["error"]["kind"] == "budget" and "held by questions still running" in r.json["error"]["message"]
                   and "tomorrow" not in r.json["error"]["message"]
                   for r in refused)
        ran = codes.index(202)
        body = clients[ran].get(answers[ran].json["job"]["events"]).get_data(as_text=True)
        assert "event: result" in body, body[-800:]  # the one question answers
        deadline = time.time() + 30
        while store.usage("bob") == [] and time.time() < deadline:
            time.sleep(0.1)  # usage is recorded (and the hold dropped) after the after-answer summaries
        assert offline_calls, "the question that passed reached the model"
        asked = {q for q in QUESTIONS if any(q in text for text in offline_calls)}
        assert asked == {QUESTIONS[ran]}  # no refused question reached the model
        assert store.usage("bob")[0].questions == 1
        holds = BudgetHolds(store)
        assert holds.held("bob") == 0  # settled: the next question fits again (the offline model costs 0)
        nxt = (ran + 1) % len(QUESTIONS)
        assert bob.post(f"/api/sessions/{sids[nxt]}/ask", json={"question": QUESTIONS[nxt]}).status_code == 202
    finally:
        app.extensions["auto_analyst"].close()
