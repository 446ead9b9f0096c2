"""Sign-in of the team server: accounts, every route checked, tokens, proxy header, roles, budgets, rates."""

from __future__ import annotations

import re
import time

import pytest

from auto_analyst.web import AccountStore, create_app
from tests.web.conftest import Browser

PASSWORDS = {"alice": "alice-password", "bob": "bob-password"}


@pytest.fixture
def accounts(settings) -> AccountStore:
    store = AccountStore(settings=settings)
    store.add("alice", PASSWORDS["alice"], role="admin")
    store.add("bob", PASSWORDS["bob"])
    return store


@pytest.fixture
def team_app(settings, accounts):
    app = create_app({"TESTING": True, "SECRET_KEY": "test-secret", "SETTINGS": settings})
    yield app
    app.extensions["auto_analyst"].close()


def login(app, name: str) -> Browser:
    return Browser(app.test_client(), login=(name, PASSWORDS[name]))


# ----------------------------------------------------------------------------- every route
PUBLIC = {"auth.login", "auth.login_post", "static"}


def _routes(app):
    for rule in app.url_map.iter_rules():
        for method in sorted(rule.methods - {"HEAD", "OPTIONS"}):
            yield rule, method


def _url(rule, values: dict) -> str:
    missing = set(rule.arguments) - set(values)
    assert not missing, f"route {rule.rule} has a parameter this test does not know: {missing}; add it"
    return re.sub(r"<(?:[a-z]+:)?([a-z_]+)>", lambda m: str(values[m.group(1)]), rule.rule)


@pytest.mark.parametrize("mode", ["accounts", "loopback_token"])
def test_every_route_refuses_an_anonymous_client(settings, mode):
    if mode == "accounts":
        AccountStore(settings=settings).add("alice", PASSWORDS["alice"], role="admin")
    app = create_app({"TESTING": True, "SECRET_KEY": "test-secret", "SETTINGS": settings})
    try:
        client = app.test_client()
        values = {"sid": "a" * 22, "jid": "b" * 12, "name": "alice", "index": 0, "fig": 0, "tab": 0,
                  "fact_id": "f1", "token_id": "0123456789ab"}
        checked = 0
        for rule, method in _routes(app):
            if rule.endpoint in PUBLIC:
                continue
            r = client.open(_url(rule, values), method=method, json={})
            assert r.status_code in (401, 302), (rule.rule, method, r.status_code)
            if r.status_code == 302:
                assert r.headers["Location"].startswith("/login"), (rule.rule, r.headers["Location"])
            else:
                assert r.json["error"]["kind"] == "auth"
            checked += 1
        assert checked >= 30  # every blueprint's routes were walked
        assert client.get("/login").status_code == 200  # the login page itself is open
        assert client.get("/static/app.css").status_code == 200
        # a wrong loopback token or a made-up bearer token does not get in either
        assert client.get("/?token=wrong").status_code == 302
        assert client.get("/api/state", headers={"Authorization": "Bearer aa_0123456789ab_" + "x" * 43}).status_code == 401
    finally:
        app.extensions["auto_analyst"].close()


def test_every_route_refuses_another_users_conversation_and_ids(team_app, datasets_dir):
    alice, bob = login(team_app, "alice"), login(team_app, "bob")
    sid = alice.new_session()
    assert alice.upload(sid, datasets_dir / "grunfeld.csv").status_code == 201
    events, final = alice.run_job(sid, "ask", {"question": "average invest by firm as a bar chart"})
    job_id = alice.post(f"/api/sessions/{sid}/ask", json={"question": "total invest"}).json["job"]["id"]
    table = alice.get(f"/api/sessions/{sid}").json["session"]["tables"][0]["name"]
    facts = alice.get("/api/facts").json["facts"]
    token_id = alice.post("/api/tokens", json={"label": "nb"}).json["record"]["id"]
    values = {"sid": sid, "jid": job_id, "name": table, "index": 0, "fig": 0, "tab": 0,
              "fact_id": facts[0]["id"] if facts else "nofact", "token_id": token_id}
    secrets_of_alice = [sid, job_id, token_id]
    checked = 0
    for rule, method in _routes(team_app):
        if rule.endpoint in PUBLIC or rule.endpoint == "auth.logout":
            continue
        url = _url(rule, values)
        r = bob.client.open(url, method=method, json={}, headers={"X-CSRF-Token": bob.csrf})
        body = r.get_data(as_text=True)
        if rule.arguments - {"name"} or rule.endpoint.startswith("admin."):
            # bob asks for alice's things (or an admin view): never an answer
            assert r.status_code in (403, 404), (rule.rule, method, r.status_code, body[:200])
        else:
            assert r.status_code < 500, (rule.rule, method, r.status_code)
        assert not any(s in body for s in secrets_of_alice), (rule.rule, method)
        checked += 1
    assert checked >= 30
    # alice still has everything bob tried to reach
    assert alice.get(f"/api/sessions/{sid}").status_code == 200
    assert [t["id"] for t in alice.get("/api/tokens").json["tokens"]] == [token_id]
    kept = {f["id"] for f in alice.get("/api/facts").json["facts"]}
    assert {f["id"] for f in facts} <= kept  # bob forgot none of alice's facts


def test_csrf_stays_on_every_state_changing_route(team_app):
    alice = login(team_app, "alice")
    for rule, method in _routes(team_app):
        if method in ("GET",) or rule.endpoint == "static":
            continue
        url = _url(rule, {"sid": "a" * 22, "jid": "b" * 12, "name": "bob", "token_id": "0123456789ab",
                          "fact_id": "f1"})
        r = alice.client.open(url, method=method, json={})
        assert r.status_code == 403 and r.json["error"]["kind"] == "csrf", (rule.rule, method, r.status_code)


# ----------------------------------------------------------------------------- signing in
def test_login_with_the_form_and_logout(team_app):
    client = team_app.test_client()
    page = client.get("/login").get_data(as_text=True)
    csrf = re.search(r'name="csrf_token" value="([^"]+)"', page).group(1)
    wrong = client.post("/login", data={"name": "alice", "password": "nope-nope", "csrf_token": csrf})
    assert wrong.status_code == 401 and "Wrong name or password." in wrong.get_data(as_text=True)
    unknown = client.post("/login", data={"name": "mallory", "password": "nope-nope", "csrf_token": csrf})
    assert unknown.status_code == 401 and "Wrong name or password." in unknown.get_data(as_text=True)
    ok = client.post("/login", data={"name": "alice", "password": PASSWORDS["alice"], "csrf_token": csrf,
                                     "next": "https://evil.example/"})
    assert ok.status_code == 302 and ok.headers["Location"] == "/"  # no redirect off the site
    me = client.get("/api/me").json
    assert (me["user"], me["role"], me["via"]) == ("alice", "admin", "password")
    new_csrf = client.get("/api/state").json["csrf_token"]
    assert new_csrf != csrf  # a login gets a fresh CSRF token
    assert client.post("/logout", headers={"X-CSRF-Token": new_csrf}, json={}).status_code == 200
    assert client.get("/api/state").status_code == 401


def test_login_is_rate_limited_against_password_guessing(settings, accounts):
    app = create_app({"TESTING": True, "SECRET_KEY": "k", "SETTINGS": settings, "LOGIN_RATE": "3/minute"})
    try:
        client = app.test_client()
        csrf = re.search(r'name="csrf_token" value="([^"]+)"', client.get("/login").get_data(as_text=True)).group(1)
        for _ in range(5):  # successful logins do not count (a team behind one address logs in at once)
            assert client.post("/login", data={"name": "alice", "password": PASSWORDS["alice"],
                                               "csrf_token": csrf}).status_code == 302
            csrf = client.get("/api/state").json["csrf_token"]
            client.post("/logout", headers={"X-CSRF-Token": csrf})
            csrf = re.search(r'name="csrf_token" value="([^"]+)"', client.get("/login").get_data(as_text=True)).group(1)
        codes = [client.post("/login", data={"name": "alice", "password": f"guess-{i}", "csrf_token": csrf}).status_code
                 for i in range(3)]
        assert codes == [401, 401, 401]
        r = client.post("/login", data={"name": "alice", "password": PASSWORDS["alice"], "csrf_token": csrf})
        assert r.status_code == 429 and r.json["error"]["kind"] == "rate_limit"
        assert 1 <= int(r.headers["Retry-After"]) <= 60
    finally:
        app.extensions["auto_analyst"].close()


def test_a_password_change_or_an_expired_login_ends_the_session(team_app, accounts):
    alice = login(team_app, "alice")
    assert alice.get("/api/state").status_code == 200
    accounts.set_password("alice", "a-new-password")
    assert alice.get("/api/state").status_code == 401
    bob = login(team_app, "bob")
    with bob.client.session_transaction() as cookie:
        cookie["exp"] = time.time() - 1
    assert bob.get("/api/state").status_code == 401


def _saved_cookie(browser: Browser) -> dict:
    with browser.client.session_transaction() as cookie:
        return dict(cookie)


def _replay(app, saved: dict):
    """A new client holding a copy of another browser's cookie (as a thief or a backup would)."""
    client = app.test_client()
    with client.session_transaction() as cookie:
        cookie.update(saved)
    return client


def test_logout_ends_the_login_on_the_server_not_only_in_the_browser(team_app, accounts):
    alice, phone = login(team_app, "alice"), login(team_app, "alice")
    saved = _saved_cookie(alice)
    assert _replay(team_app, saved).get("/api/me").status_code == 200
    assert alice.post("/logout", json={}).status_code == 200
    assert _replay(team_app, saved).get("/api/me").status_code == 401  # the copy is dead too
    assert phone.get("/api/me").json["user"] == "alice"  # only that login ended
    assert accounts.sessions("alice") == 1


def test_a_removed_account_added_again_does_not_take_old_cookies_or_tokens(team_app, accounts):
    bob = login(team_app, "bob")
    saved = _saved_cookie(bob)
    _, token = accounts.create_token("bob", "script")
    accounts.remove("bob")
    assert bob.get("/api/me").status_code == 401
    accounts.add("bob", "another-password")
    assert _replay(team_app, saved).get("/api/me").status_code == 401
    assert team_app.test_client().get("/api/me", headers={"Authorization": f"Bearer {token}"}).status_code == 401
    assert accounts.sessions("bob") == 0


def test_history_follows_the_account_across_browsers(team_app, datasets_dir):
    first = login(team_app, "alice")
    sid = first.new_session()
    assert first.upload(sid, datasets_dir / "grunfeld.csv").status_code == 201
    first.ask(sid, "total invest")
    second = login(team_app, "alice")  # another browser: no cookie in common
    assert sid in [s["id"] for s in second.get("/api/sessions").json["sessions"]]
    assert len(second.get(f"/api/sessions/{sid}").json["session"]["results"]) == 1
    assert sid not in [s["id"] for s in login(team_app, "bob").get("/api/sessions").json["sessions"]]


def test_the_first_login_claims_the_browsers_cookie_only_conversations(settings, datasets_dir):
    app = create_app({"TESTING": True, "SECRET_KEY": "k", "SETTINGS": settings})
    try:
        before = Browser(app.test_client())  # no accounts yet: signed in with the loopback token
        sid = before.new_session()
        assert before.upload(sid, datasets_dir / "grunfeld.csv").status_code == 201
        before.ask(sid, "total invest")
        AccountStore(settings=settings).add("alice", PASSWORDS["alice"])
        app.extensions["aa_auth"].forget_count()
        assert before.get("/api/state").status_code == 401  # accounts exist now: the token link no longer signs in
        from tests.web.conftest import sign_in

        sign_in(before.client, "alice", PASSWORDS["alice"])
        elsewhere = login(app, "alice")
        assert sid in [s["id"] for s in elsewhere.get("/api/sessions").json["sessions"]]
        assert len(elsewhere.get(f"/api/sessions/{sid}").json["session"]["results"]) == 1
    finally:
        app.extensions["auto_analyst"].close()


def test_a_trusted_proxys_header_signs_in_only_from_the_proxys_address(settings):
    from dataclasses import replace

    proxied = replace(settings, trusted_proxies="127.0.0.1/32", proxy_user_header="X-Auth-Request-Email")
    app = create_app({"TESTING": True, "SECRET_KEY": "k", "SETTINGS": proxied})
    try:
        client = app.test_client()
        head = {"X-Auth-Request-Email": "carol@example.com"}
        me = client.get("/api/me", headers=head).json
        assert (me["user"], me["role"], me["via"]) == ("carol@example.com", "member", "proxy")
        assert AccountStore(settings=settings).get("carol@example.com").role == "member"
        outsider = app.test_client()
        r = outsider.get("/api/me", headers=head, environ_base={"REMOTE_ADDR": "10.1.2.3"})
        assert r.status_code == 401
        assert client.get("/api/me").status_code == 401  # the proxy's address without the header: nobody
    finally:
        app.extensions["auto_analyst"].close()


# ----------------------------------------------------------------------------- tokens
def test_api_tokens_work_without_a_cookie_or_csrf_and_stop_when_revoked(team_app, accounts, datasets_dir):
    record, token = accounts.create_token("bob", "script")
    assert accounts.tokens("bob")[0].id == record.id and token not in str(accounts.tokens())  # only a hash is stored
    with accounts.engine.connect() as conn:
        stored = conn.exec_driver_sql("SELECT token_hash FROM api_tokens").scalar()
    assert token not in stored and len(stored) == 64
    client = team_app.test_client()
    head = {"Authorization": f"Bearer {token}"}
    sid = client.post("/api/sessions", headers=head).json["session"]["id"]
    with open(datasets_dir / "grunfeld.csv", "rb") as f:
        assert client.post(f"/api/sessions/{sid}/uploads", headers=head, data={"file": (f, "g.csv")},
                           content_type="multipart/form-data").status_code == 201
    assert client.get("/api/me", headers=head).json["user"] == "bob"
    bob = login(team_app, "bob")
    assert sid in [s["id"] for s in bob.get("/api/sessions").json["sessions"]]
    assert bob.delete(f"/api/tokens/{record.id}").status_code == 200
    assert client.get("/api/me", headers=head).status_code == 401


def test_a_password_change_revokes_the_accounts_api_tokens(team_app, accounts):
    _, token = accounts.create_token("bob", "script")
    head = {"Authorization": f"Bearer {token}"}
    assert team_app.test_client().get("/api/me", headers=head).status_code == 200
    accounts.set_password("bob", "a-new-password")
    assert team_app.test_client().get("/api/me", headers=head).status_code == 401
    assert accounts.tokens("bob") == []


def test_an_api_token_cannot_make_list_or_revoke_other_tokens(team_app, accounts):
    leaked, token = accounts.create_token("bob", "leaked")
    other, _ = accounts.create_token("bob", "notebook")
    client, head = team_app.test_client(), {"Authorization": f"Bearer {token}"}
    minted = client.post("/api/tokens", json={"label": "spare"}, headers=head)
    assert minted.status_code == 403 and "from a signed-in browser" in minted.json["error"]["message"]
    assert client.get("/api/tokens", headers=head).status_code == 403
    assert client.post("/account/tokens", data={"label": "spare"}, headers=head).status_code == 403
    assert client.delete(f"/api/tokens/{other.id}", headers=head).status_code == 403
    assert [t.id for t in accounts.tokens("bob")] == [leaked.id, other.id]  # nothing made, nothing revoked
    assert client.delete(f"/api/tokens/{leaked.id}", headers=head).status_code == 200  # a token may revoke itself
    assert client.get("/api/me", headers=head).status_code == 401
    assert [t.id for t in accounts.tokens("bob")] == [other.id]


def test_tokens_are_made_and_revoked_on_the_account_page(team_app):
    bob = login(team_app, "bob")
    page = bob.post("/account/tokens", data={"label": "notebook", "csrf_token": bob.csrf})
    token = re.search(r'id="new-token">([^<]+)<', page.get_data(as_text=True)).group(1)
    assert team_app.test_client().get("/api/me", headers={"Authorization": f"Bearer {token}"}).json["user"] == "bob"
    tid = bob.get("/api/tokens").json["tokens"][0]["id"]
    assert bob.post(f"/account/tokens/{tid}/revoke", data={"csrf_token": bob.csrf}).status_code == 302
    assert bob.get("/api/tokens").json["tokens"] == []


# ----------------------------------------------------------------------------- roles, budgets, rates
def test_a_member_over_the_daily_cap_gets_402_before_any_model_call(priced_settings, datasets_dir):
    # a priced model (the offline engine standing in for it): the offline model itself is never refused for cost
    from auto_analyst.results import Usage

    settings, calls = priced_settings
    accounts = AccountStore(settings=settings)
    accounts.add("alice", PASSWORDS["alice"], role="admin")
    accounts.add("bob", PASSWORDS["bob"])
    app = create_app({"TESTING": True, "SECRET_KEY": "test-secret", "SETTINGS": settings})
    try:
        bob = login(app, "bob")
        sid = bob.new_session()
        assert bob.upload(sid, datasets_dir / "grunfeld.csv").status_code == 201
        accounts.update("bob", daily_cost_usd=0.05)
        accounts.record("bob", Usage(lm_calls=3, prompt_tokens=900, completion_tokens=90, cost_usd=0.06))
        r = bob.post(f"/api/sessions/{sid}/ask", json={"question": "total invest"})
        assert r.status_code == 402 and r.json["error"]["kind"] == "budget"
        assert "$0.0500 daily budget" in r.json["error"]["message"] and "tomorrow" in r.json["error"]["message"]
        assert calls == []  # refused before the model was called
        # the same question from an account without a cap reaches the model, and its usage is recorded
        alice = login(app, "alice")
        sid_a = alice.new_session()
        assert alice.upload(sid_a, datasets_dir / "grunfeld.csv").status_code == 201
        alice.ask(sid_a, "total invest")
        deadline = time.time() + 30
        while not accounts.usage("alice") and time.time() < deadline:
            time.sleep(0.1)  # usage is recorded once the after-answer summaries are written
        assert len(calls) >= 1
        today = accounts.usage("alice")[0]
        assert (today.questions, today.lm_calls) == (1, len(calls))
        # an admin raises bob's cap above a question's bound: he may ask again
        assert alice.post("/api/admin/users/bob", json={"daily_cost_usd": 5.0}).json["user"]["daily_cost_usd"] == 5.0
        bob.ask(sid, "total invest")
    finally:
        app.extensions["auto_analyst"].close()


def test_a_members_question_rate_answers_429_with_retry_after(team_app, accounts, datasets_dir):
    accounts.update("bob", rate_per_minute=1)
    bob = login(team_app, "bob")
    sid = bob.new_session()
    assert bob.upload(sid, datasets_dir / "grunfeld.csv").status_code == 201
    bob.ask(sid, "total invest")
    r = bob.post(f"/api/sessions/{sid}/ask", json={"question": "total invest"})
    assert r.status_code == 429 and r.json["error"]["kind"] == "rate_limit"
    assert 1 <= int(r.headers["Retry-After"]) <= 60


def test_only_an_admin_changes_the_model_or_sees_users_and_usage(team_app):
    bob, alice = login(team_app, "bob"), login(team_app, "alice")
    assert re.search(r'id="model-btn"[^>]*disabled', bob.get("/").get_data(as_text=True))
    assert not re.search(r'id="model-btn"[^>]*disabled', alice.get("/").get_data(as_text=True))
    r = bob.post("/api/model", json={"model": "openai/gpt-4o-mini", "api_key": "sk-x"})
    assert r.status_code == 403 and r.json["error"]["kind"] == "forbidden"
    assert bob.get("/api/admin/users").status_code == 403 and bob.get("/admin").status_code == 403
    assert alice.post("/api/model", json={"model": "offline"}).status_code == 200
    users = {u["name"]: u for u in alice.get("/api/admin/users").json["users"]}
    assert set(users) == {"alice", "bob"} and users["bob"]["role"] == "member"
    assert alice.get("/api/admin/usage").json["usage"] == []
    page = alice.get("/admin").get_data(as_text=True)
    assert "bob" in page and "Usage per user and day" in page
    assert alice.post("/admin/users/bob", data={"daily_cost_usd": "2.5", "rate_per_minute": "", "role": "member",
                                                "csrf_token": alice.csrf}).status_code == 302
    assert alice.get("/api/admin/users").json["users"][1]["daily_cost_usd"] == 2.5
