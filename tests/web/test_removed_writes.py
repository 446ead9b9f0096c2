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


def test_a_cancelled_question_is_not_stored(settings, datasets_dir):
    analyst = Analyst(settings=settings)
    try:
        s = analyst.session(user="erin")
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
