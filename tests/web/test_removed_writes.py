"""Nothing is stored for an account after it is removed, even by a question still running (breaker fault 5).

`users remove NAME` deletes the account and its data from another process; a question of NAME's that was running
went on and wrote its turn under the name afterwards, so an account added again as NAME (another person) listed the
old conversation and its answer. Writes carry the account id and are made only while ``(name, id)`` exists
(``storage.owners``); a cancelled turn is not stored at all.
"""

from __future__ import annotations

import threading

from click.testing import CliRunner

from auto_analyst.api import Analyst
from auto_analyst.cli import cli
from auto_analyst.web import AccountStore, create_app
from tests.web.conftest import Browser


def _cli(settings, args, input=None):
    r = CliRunner().invoke(cli, args, input=input, env={"AUTO_ANALYST_HOME": str(settings.home)})
    assert r.exit_code == 0, r.output
    return r


def test_a_question_answered_after_its_account_was_removed_leaves_nothing_for_a_new_account_of_the_name(
        settings, datasets_dir):
    store = AccountStore(settings=settings)
    store.add("carol", "carol-password")
    old_id = store.get("carol").id
    app = create_app({"TESTING": True, "SECRET_KEY": "test-secret", "SETTINGS": settings, "ACCOUNT_SWEEP_SECONDS": 3600})
    svc = app.extensions["auto_analyst"]
    try:
        carol = Browser(app.test_client(), login=("carol", "carol-password"))
        sid = carol.new_session()
        assert carol.upload(sid, datasets_dir / "grunfeld.csv").status_code == 201
        from auto_analyst.web.conversations import Owner

        running = svc.get(Owner(old_id, "carol", account=True), sid).session  # the question's session
        assert running.owner == old_id and running.store_cancelled is False
        _cli(settings, ["users", "remove", "carol", "--yes"])
        _cli(settings, ["users", "add", "carol"], input="other-person-pw\n")
        # the old question goes on after the removal and the re-add (the sweep has not run): it answers...
        result = running.ask("total invest by firm")
        running.settle()
        assert result.status == "ok" and result.answer
        # ...but stores nothing under the name: the new carol sees no conversation, turn, state or upload
        new = Browser(app.test_client(), login=("carol", "other-person-pw"))
        assert new.get("/api/sessions").json["sessions"] == []
        assert new.get(f"/api/sessions/{sid}").status_code == 404
        history = svc.analyst.memory.history
        assert history.turns("carol") == [] and history.sessions("carol") == []
        assert history.load_session_state("carol", sid) is None and history.uploads("carol") == []
        # and the same session of a still-existing account stores as before
        running.owner = store.get("carol").id
        running.ask("total invest by firm")
        assert [t.question for t in history.turns("carol", sid)] == ["total invest by firm"]
    finally:
        svc.close()


def test_a_cancelled_question_of_a_server_session_is_not_stored(settings, datasets_dir):
    analyst = Analyst(settings=settings)
    try:
        s = analyst.session(user="erin")
        s.store_cancelled = False  # as the team server's sessions (the command line stores them as cancelled)
        s.load(datasets_dir / "grunfeld.csv")
        stop = threading.Event()
        stop.set()
        s.ask("total invest by firm", cancel=stop)
        s.settle()
        assert len(s.results) == 1  # the page still shows what the run came to
        assert analyst.memory.history.turns("erin", s.id) == []
        s.ask("total invest by firm")
        assert [t.turn for t in analyst.memory.history.turns("erin", s.id)] == [2]
    finally:
        analyst.close()


def test_an_account_added_again_under_a_removed_name_does_not_inherit_its_spend_and_the_report_keeps_it(settings):
    """Breaker fault 10: usage and budget holds were keyed by name, so a new carol started her day with the
    removed carol's spend (and running holds) against her own cap."""
    from auto_analyst.results import Usage
    from auto_analyst.web.accounts import removed_label, today
    from auto_analyst.web.quota_holds import BudgetHolds, Hold

    store = AccountStore(settings=settings)
    old = store.add("carol", "carol-password")
    store.update("carol", daily_cost_usd=1.0)
    holds = BudgetHolds(store)
    store.record("carol", Usage(lm_calls=3, cost_usd=0.9))
    running = holds.reserve("carol", 0.05)  # a question of the old carol still running at the removal
    assert isinstance(running, Hold)
    _cli(settings, ["users", "remove", "carol", "--yes"])
    _cli(settings, ["users", "add", "carol"], input="other-person-pw\n")
    store.update("carol", daily_cost_usd=1.0)
    new = store.get("carol")
    assert new.id != old.id
    assert store.spent_today("carol") == 0.0 and holds.held("carol") == 0.0
    assert isinstance(holds.reserve("carol", 0.5), Hold)  # 0.9 + 0.05 + 0.5 would have passed the cap of 1.0
    # the old question ends now: its cost is the removed account's, not the new carol's
    holds.settle("carol", Usage(lm_calls=1, cost_usd=0.04), running, owner=old.id)
    label = removed_label("carol", old.id)
    report = {(u.user, u.day): (u.lm_calls, round(u.cost_usd, 6)) for u in store.usage()}
    assert report == {(label, today()): (4, 0.94)}
    assert store.spent_today("carol") == 0.0
    # the new carol's own usage is hers
    holds.settle("carol", Usage(lm_calls=2, cost_usd=0.2), None, owner=new.id)
    assert store.spent_today("carol") == 0.2


def test_the_server_drops_a_removed_accounts_conversations_without_waiting_for_a_request(settings, datasets_dir):
    """The sweep ran only on a signed-in request, and the removed account's own requests get 401 first: its
    running question went on calling the model until someone else came."""
    import time

    store = AccountStore(settings=settings)
    store.add("gus", "gus-password")
    old_id = store.get("gus").id
    app = create_app({"TESTING": True, "SECRET_KEY": "test-secret", "SETTINGS": settings, "ACCOUNT_SWEEP_SECONDS": 1})
    svc = app.extensions["auto_analyst"]
    try:
        gus = Browser(app.test_client(), login=("gus", "gus-password"))
        sid = gus.new_session()
        assert gus.upload(sid, datasets_dir / "grunfeld.csv").status_code == 201
        assert [c.key for c in svc.index.all()] == [old_id]
        _cli(settings, ["users", "remove", "gus", "--yes"])
        deadline = time.time() + 20  # no request from now on
        while time.time() < deadline and svc.index.all():
            time.sleep(0.1)
        assert svc.index.all() == [] and svc.removed_accounts(set()) == set()
    finally:
        svc.close()
