"""Account names are one account whatever their case; a proxy's UTF-8 header is read as UTF-8; picking the offline
model on a priced server switches to it (breaker fault 11)."""

from __future__ import annotations

from dataclasses import replace

import pytest

from auto_analyst.errors import BadInputError
from auto_analyst.web import AccountStore, create_app
from tests.web.conftest import PRICED_MODEL, Browser


def test_names_differing_only_by_case_are_one_account(settings):
    store = AccountStore(settings=settings)
    bob = store.add("Bob", "bob-password")
    assert bob.name == "bob"  # stored casefolded
    with pytest.raises(BadInputError, match="differing only by case"):
        store.add("BOB", "other-password")
    assert store.verify("BOB", "bob-password").id == bob.id  # login in any case
    assert store.get("bOb").id == bob.id and [a.name for a in store.list()] == ["bob"]
    assert store.ensure("BoB").id == bob.id  # a proxy header in another case
    assert store.ensure("ZED").name == "zed" and store.ensure("zed").id == store.ensure("ZED").id
    store.update("BOB", daily_cost_usd=2.0)
    assert store.get("bob").daily_cost_usd == 2.0
    # an account made before names were casefolded keeps its spelling and is found in any case
    with store.engine.begin() as conn:
        conn.exec_driver_sql("UPDATE accounts SET name = 'Carol' WHERE name = 'zed'")
    assert store.get("carol").name == "Carol" and store.verify("CAROL", "x") is None
    with pytest.raises(BadInputError, match="'Carol' exists"):
        store.add("carol", "carol-password")
    store.remove("CAROL")
    assert store.get("Carol") is None


def test_a_proxy_header_in_utf8_is_read_as_utf8_and_its_case_does_not_make_another_account(settings):
    proxied = replace(settings, trusted_proxies="127.0.0.1/32")
    app = create_app({"TESTING": True, "SECRET_KEY": "k", "SETTINGS": proxied})
    try:
        client = app.test_client()
        assert client.get("/api/me", headers={"X-Forwarded-User": "ZED"}).json["user"] == "zed"
        assert client.get("/api/me", headers={"X-Forwarded-User": "zed"}).json["user"] == "zed"
        assert [a.name for a in AccountStore(settings=settings).list()] == ["zed"]
        wire = "josé@example.com".encode("utf-8").decode("latin-1")  # what WSGI makes of the proxy's bytes
        r = client.get("/api/me", headers={"X-Forwarded-User": wire})
        assert r.status_code == 400 and "'josé@example.com' is not a usable account name" in r.json["error"]["message"]
    finally:
        app.extensions["auto_analyst"].close()


def test_an_admin_picking_the_offline_model_on_a_priced_server_gets_it(priced_settings):
    settings, _ = priced_settings
    AccountStore(settings=settings).add("alice", "alice-password", role="admin")
    app = create_app({"TESTING": True, "SECRET_KEY": "k", "SETTINGS": settings})
    try:
        alice = Browser(app.test_client(), login=("alice", "alice-password"))
        assert alice.get("/api/state").json["model"] == PRICED_MODEL
        r = alice.post("/api/model", json={"model": "offline"})
        assert r.status_code == 200 and r.json["model"] == "offline"
        assert alice.get("/api/state").json["model"] == "offline"
        sid = alice.new_session()
        assert alice.get(f"/api/sessions/{sid}").json["session"]["model"] == "offline"
    finally:
        app.extensions["auto_analyst"].close()


def test_every_command_and_admin_route_taking_an_account_name_finds_it_in_any_case(settings):
    from types import SimpleNamespace

    from click.testing import CliRunner

    from auto_analyst.cli import cli

    store = AccountStore(settings=settings)
    store.add("alice", "alice-password", role="admin")
    store.add("Bob", "bob-password")
    token, _ = store.create_token("bob", "notebook")
    store.record("bob", SimpleNamespace(lm_calls=2, prompt_tokens=10, completion_tokens=5, cost_usd=0.25))
    assert [t.id for t in store.tokens("BOB")] == [token.id]  # the stored spelling is 'bob'
    assert [(u.user, u.lm_calls) for u in store.usage("bOb")] == [("bob", 2)] and store.spent_today("BOB") == 0.25

    def run(*args, input=None):
        return CliRunner().invoke(cli, list(args), input=input, env={"AUTO_ANALYST_HOME": str(settings.home)})

    listed = run("tokens", "list", "BOB")
    assert listed.exit_code == 0 and f"{token.id}\tbob\tnotebook" in listed.output, listed.output
    created = run("tokens", "create", "Bob", "--label", "second")
    assert created.exit_code == 0 and "for bob;" in created.output, created.output
    changed = run("users", "passwd", "BOB", input="new-bob-password\n")
    assert changed.exit_code == 0 and "its 2 API token(s) revoked" in changed.output, changed.output
    app = create_app({"TESTING": True, "SECRET_KEY": "k", "SETTINGS": settings})
    try:
        alice = Browser(app.test_client(), login=("alice", "alice-password"))
        r = alice.post("/api/admin/users/BOB", json={"daily_cost_usd": 3})
        assert r.status_code == 200 and r.json["user"]["name"] == "bob" and r.json["user"]["spent_today_usd"] == 0.25
    finally:
        app.extensions["auto_analyst"].close()
