"""Budget holds: questions asked at once by one member cannot pass the daily cap together (issue 24, M4 and
breaker fault F9): each holds its upper bound (the model's price x its bounded calls and tokens), and a
question the offline model answers holds nothing and is never refused for cost."""

from __future__ import annotations

import threading
import time
from datetime import timedelta

import pytest

from auto_analyst.results import Usage
from auto_analyst.storage import utc_now
from auto_analyst.web import AccountStore, create_app
from auto_analyst.web.quota_holds import BudgetHolds, Hold, Refusal
from tests.web.conftest import PRICED_MODEL, Browser

BOUND = 0.5
"""A question's upper bound in the unit tests (USD)."""
GPT_4O_MINI_BOUND = 24 * (128_000 * 0.15e-6 + 16_384 * 0.6e-6)
"""openai/gpt-4o-mini in the LiteLLM table it ships: $0.15 / $0.60 per million prompt / reply tokens, a 128000-token
context and 16384-token replies; x the default 24 LM calls a question may make."""

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
    store.update("bob", daily_cost_usd=1.5 * BOUND)  # room for one question's bound, not two
    holds = BudgetHolds(store)
    plain = quota_holds.text

    def slow_insert(sql):  # widen the window between the check and the insert, so an unlocked check races
        if sql.startswith("INSERT INTO budget_holds"):
            time.sleep(0.2)
        return plain(sql)

    monkeypatch.setattr(quota_holds, "text", slow_insert)
    got = _race(8, lambda k: holds.reserve("bob", BOUND))
    monkeypatch.setattr(quota_holds, "text", plain)
    assert sum(isinstance(g, Hold) for g in got) == 1 and sum(isinstance(g, Refusal) for g in got) == 7
    hold = next(g for g in got if isinstance(g, Hold))
    assert hold.amount_usd == BOUND and holds.held("bob") == BOUND
    refused = next(g for g in got if isinstance(g, Refusal))
    assert (refused.cap_usd, refused.spent_usd, refused.held_usd, refused.bound_usd) == (1.5 * BOUND, 0, BOUND, BOUND)
    assert refused.fits_alone  # it is the running question's hold that blocks it
    # settled with its real cost: recorded, the hold gone, and the next question fits again
    holds.settle("bob", Usage(lm_calls=2, prompt_tokens=10, completion_tokens=3, cost_usd=0.004), hold)
    assert holds.held("bob") == 0 and store.spent_today("bob") == 0.004
    again = holds.reserve("bob", BOUND)
    assert isinstance(again, Hold) and isinstance(holds.reserve("bob", BOUND), Refusal)
    # a question with an unknown bound (a model without a price) holds the rest of the cap: nothing else fits
    rest = holds.reserve("bob", None)
    assert isinstance(rest, Hold) and rest.amount_usd == pytest.approx(1.5 * BOUND - 0.004 - BOUND)
    assert isinstance(holds.reserve("bob", None), Refusal) and isinstance(holds.reserve("bob", 0.001), Refusal)
    holds.release(rest)
    # a bound larger than what is left is refused even with nothing running
    holds.release(again)
    too_big = holds.reserve("bob", 1.5 * BOUND)
    assert isinstance(too_big, Refusal) and not too_big.fits_alone and too_big.held_usd == 0
    # a hold a crashed server never settled stops counting after HOLD_SECONDS
    first = holds.reserve("bob", BOUND)
    later = holds.reserve("bob", BOUND, now=utc_now() + timedelta(hours=2))
    assert isinstance(first, Hold) and isinstance(later, Hold)
    holds.release(first)
    holds.release(later)
    assert holds.held("bob") == 0
    # no cap, no account: nothing is held
    store.add("carol", "carol-password")
    assert holds.reserve("carol", BOUND) is None and holds.reserve("nobody", BOUND) is None


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


def test_a_questions_bound_is_the_models_litellm_price_times_its_bounded_calls_and_tokens(settings):
    import dspy

    from auto_analyst.llm.cost_bound import question_cost
    from auto_analyst.offline.engine import offline_lm

    priced = settings.replace(model=PRICED_MODEL)
    hosted = dspy.LM(PRICED_MODEL, api_key="sk-not-used")  # built, never called
    assert question_cost(priced, offline_lm()).free  # the capability record says offline: free
    bound = question_cost(priced, hosted)
    assert not bound.free and bound.usd == pytest.approx(GPT_4O_MINI_BOUND, abs=1e-6) and bound.model == PRICED_MODEL
    assert "24 LM calls" in bound.basis
    # fewer calls, a reply cap, a prompt-token cap, a question cost cap: each makes the bound smaller
    assert question_cost(priced.replace(max_lm_calls=6), hosted).usd == pytest.approx(GPT_4O_MINI_BOUND / 4, abs=1e-6)
    short = dspy.LM(PRICED_MODEL, api_key="sk-not-used", max_tokens=1000)
    assert question_cost(priced, short).usd == pytest.approx(24 * (128_000 * 0.15e-6 + 1000 * 0.6e-6), abs=1e-6)
    assert question_cost(priced.replace(max_prompt_tokens=10_000), hosted).usd == pytest.approx(
        138_000 * 0.15e-6 + 24 * 16_384 * 0.6e-6, abs=1e-6)
    one_call = 128_000 * 0.15e-6 + 16_384 * 0.6e-6
    assert question_cost(priced.replace(max_cost_usd=0.05), hosted).usd == pytest.approx(0.05 + one_call, abs=1e-6)
    # a model LiteLLM has no price for: unknown (the server then holds the rest of the cap)
    unknown = settings.replace(model="openai/no-such-model-anywhere")
    assert question_cost(unknown, dspy.LM(unknown.model, api_key="x")).usd is None


def _ready(app, store, n: int, datasets_dir) -> tuple[Browser, list[str]]:
    bob = Browser(app.test_client(), login=("bob", "bob-password"))
    sids = [bob.new_session() for _ in range(n)]
    for sid in sids:
        assert bob.upload(sid, datasets_dir / "grunfeld.csv").status_code == 201
    return bob, sids


def _recorded(store, user: str, questions: int) -> None:
    deadline = time.time() + 30
    while sum(u.questions for u in store.usage(user)) < questions and time.time() < deadline:
        time.sleep(0.1)  # usage is recorded (and the hold dropped) after the after-answer summaries


def test_priced_questions_asked_at_once_over_a_one_question_cap_run_once(priced_settings, datasets_dir):
    settings, calls = priced_settings
    store = AccountStore(settings=settings)
    store.add("bob", "bob-password")
    app = create_app({"TESTING": True, "SECRET_KEY": "test-secret", "SETTINGS": settings})
    try:
        bob, sids = _ready(app, store, len(QUESTIONS), datasets_dir)
        store.update("bob", daily_cost_usd=1.5 * GPT_4O_MINI_BOUND)  # one question's bound fits, not two
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
        _recorded(store, "bob", 1)
        assert calls, "the question that passed reached the model"
        asked = {q for q in QUESTIONS if any(q in text for text in calls)}
        assert asked == {QUESTIONS[ran]}  # no refused question reached the model
        assert store.usage("bob")[0].questions == 1
        assert BudgetHolds(store).held("bob") == 0  # settled: the next question fits again
        nxt = (ran + 1) % len(QUESTIONS)
        assert bob.post(f"/api/sessions/{sids[nxt]}/ask", json={"question": QUESTIONS[nxt]}).status_code == 202
    finally:
        app.extensions["auto_analyst"].close()


def test_a_priced_question_whose_bound_passes_what_is_left_is_refused_before_any_model_call(priced_settings, datasets_dir):
    settings, calls = priced_settings
    store = AccountStore(settings=settings)
    store.add("bob", "bob-password")
    app = create_app({"TESTING": True, "SECRET_KEY": "test-secret", "SETTINGS": settings})
    try:
        bob, [sid] = _ready(app, store, 1, datasets_dir)
        store.update("bob", daily_cost_usd=0.5)  # under one question's bound, and nothing spent yet
        r = bob.post(f"/api/sessions/{sid}/ask", json={"question": "total invest"})
        assert r.status_code == 402 and r.json["error"]["kind"] == "budget"
        message = r.json["error"]["message"]
        assert f"may cost up to ${GPT_4O_MINI_BOUND:.4f}" in message and "$0.5000 left" in message
        assert "max_cost_usd" in message and calls == []  # refused before the model was called
    finally:
        app.extensions["auto_analyst"].close()


def test_the_offline_model_holds_nothing_and_is_never_refused_for_cost(settings, datasets_dir):
    store = AccountStore(settings=settings)
    store.add("bob", "bob-password")
    app = create_app({"TESTING": True, "SECRET_KEY": "test-secret", "SETTINGS": settings})
    try:
        bob, sids = _ready(app, store, 3, datasets_dir)
        store.update("bob", daily_cost_usd=0.001)  # a tiny cap, and already passed
        store.record("bob", Usage(lm_calls=1, prompt_tokens=10, completion_tokens=1, cost_usd=0.002))
        answers = _race(3, lambda k: bob.post(f"/api/sessions/{sids[k]}/ask", json={"question": QUESTIONS[k]}))
        assert [r.status_code for r in answers] == [202, 202, 202], [r.json for r in answers]
        assert BudgetHolds(store).held("bob") == 0  # free questions hold nothing
        for r in answers:
            assert "event: result" in bob.get(r.json["job"]["events"]).get_data(as_text=True)
        _recorded(store, "bob", 4)
        assert store.spent_today("bob") == 0.002  # they cost nothing
    finally:
        app.extensions["auto_analyst"].close()
