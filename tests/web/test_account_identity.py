"""The server's memory of a user follows the account's id, not its name (issue 24, breaker fault F7).

`auto-analyst users remove NAME` runs in another process than the server. What the server holds in memory of
NAME (open conversations with their tables and workers, the model and key NAME picked) must not reach an account
added again as NAME (another person), and must be dropped from memory.
"""

from __future__ import annotations

import time

from click.testing import CliRunner

from auto_analyst.cli import cli
from auto_analyst.web import AccountStore, create_app
from tests.web.conftest import Browser


def _cli(settings, args, input=None):
    r = CliRunner().invoke(cli, args, input=input, env={"AUTO_ANALYST_HOME": str(settings.home)})
    assert r.exit_code == 0, r.output
    return r


def _wait(check, seconds: float = 30.0) -> bool:
    deadline = time.time() + seconds
    while time.time() < deadline:
        if check():
            return True
        time.sleep(0.05)
    return check()


def test_an_account_added_again_under_a_removed_name_gets_nothing_the_server_held_of_the_old_one(settings, datasets_dir):
    store = AccountStore(settings=settings)
    store.add("bob", "bob-password", role="admin")
    old_id = store.get("bob").id
    app = create_app({"TESTING": True, "SECRET_KEY": "test-secret", "SETTINGS": settings, "ACCOUNT_SWEEP_SECONDS": 0})
    svc = app.extensions["auto_analyst"]
    try:
        bob = Browser(app.test_client(), login=("bob", "bob-password"))
        sid = bob.new_session()
        assert bob.upload(sid, datasets_dir / "grunfeld.csv").status_code == 201
        bob.ask(sid, "total invest")
        assert bob.post("/api/model", json={"model": "openai/gpt-4o-mini", "api_key": "sk-old-bobs-key"}).json["model"] \
            == "openai/gpt-4o-mini"
        old = svc.get(_owner(store, "bob"), sid)
        assert old.key == old_id and old.session._runner.sandbox is not None  # its worker runs

        _cli(settings, ["users", "remove", "bob", "--yes"])
        _cli(settings, ["users", "add", "bob", "--role", "admin"], input="new-bob-password\n")
        new_id = store.get("bob").id
        assert new_id and new_id != old_id  # the same name, another account

        assert bob.get("/api/state").status_code == 401  # the old login ends on its next request
        new_bob = Browser(app.test_client(), login=("bob", "new-bob-password"))
        state = new_bob.get("/api/state").json
        assert state["sessions"] == []  # the old bob's open conversation is not listed
        assert state["model"] == svc.analyst.settings.model  # nor his model (and key)
        assert new_bob.get(f"/api/sessions/{sid}").status_code == 404  # nor served by id
        assert new_bob.post(f"/api/sessions/{sid}/ask", json={"question": "total invest"}).status_code == 404
        # the server drops its memory of the removed account: the conversation and its worker, the model and key
        assert _wait(lambda: all(c.key != old_id for c in svc.index.all())), [c.key for c in svc.index.all()]
        assert _wait(lambda: old_id not in svc._analysts)
        assert _wait(lambda: old.session._runner.sandbox is None)  # its worker is stopped
    finally:
        svc.close()


def test_accounts_get_an_id_that_is_never_reused_and_old_databases_get_one_too(settings):
    store = AccountStore(settings=settings)
    first = store.add("carol", "carol-password")
    store.remove("carol")
    second = store.add("carol", "carol-password")
    proxied = store.ensure("dave@example.com")
    ids = {first.id, second.id, proxied.id}
    assert len(ids) == 3 and all(len(i) == 16 for i in ids)
    assert store.ids() == {second.id, proxied.id}
    assert [a.id for a in store.list()] == [second.id, proxied.id]
    # a database made before accounts had ids: the migration gives every account one
    from auto_analyst.web.accounts import m003_account_ids

    with store.engine.begin() as conn:
        conn.exec_driver_sql("DROP INDEX accounts_id")
        conn.exec_driver_sql("ALTER TABLE accounts DROP COLUMN id")
        m003_account_ids(conn)
    backfilled = [a.id for a in store.list()]
    assert all(len(i) == 16 for i in backfilled) and len(set(backfilled)) == 2


def _owner(store, name):
    from auto_analyst.web.conversations import Owner

    account = store.get(name)
    return Owner(account.id, account.name, account=True)
