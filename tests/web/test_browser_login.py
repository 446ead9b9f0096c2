"""Two people log in with real Chromium: neither sees the other's conversations; a token works from requests.

Run with ``pytest -m browser tests/web``; install the browser with ``tests/web/install_browser.sh``.
"""

from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest
import requests

from auto_analyst.web import AccountStore, create_app
from tests.web.test_browser import ARTIFACTS, CHROMIUM, CHROMIUM_ARGS

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not Path(CHROMIUM).exists() and not os.environ.get("AUTO_ANALYST_REQUIRE_BROWSER"),
                       reason="needs /usr/bin/chromium (tests/web/install_browser.sh); set AUTO_ANALYST_REQUIRE_BROWSER to fail instead"),
]

PASSWORDS = {"alice": "alice-password", "bob": "bob-password"}


@pytest.fixture
def team_server(settings):
    from werkzeug.serving import make_server

    store = AccountStore(settings=settings)
    store.add("alice", PASSWORDS["alice"], role="admin")
    store.add("bob", PASSWORDS["bob"])
    app = create_app({"SECRET_KEY": "browser-secret", "SETTINGS": settings})
    server = make_server("127.0.0.1", 0, app, threaded=True)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_port}", store
    server.shutdown()
    thread.join(10)
    app.extensions["auto_analyst"].close()


def _log_in(context, base: str, name: str):
    pg = context.new_page()
    pg.goto(base + "/")
    assert "/login" in pg.url  # not signed in: the page sends us to the login form
    pg.fill('input[name="name"]', name)
    pg.fill('input[name="password"]', PASSWORDS[name])
    pg.click('button[type="submit"]')
    pg.wait_for_url(base + "/")
    pg.locator("#new-conv").wait_for(timeout=30_000)
    assert pg.locator("#user-name").inner_text() == name
    return pg


def test_two_users_in_chromium_see_only_their_own_conversations(team_server, datasets_dir):
    sync_api = pytest.importorskip("playwright.sync_api")
    base, store = team_server
    ARTIFACTS.mkdir(exist_ok=True)
    with sync_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        anonymous = browser.new_context().new_page()
        assert anonymous.goto(base + "/api/state").status == 401

        alice = _log_in(browser.new_context(), base, "alice")
        alice.set_input_files("#file-input", str(datasets_dir / "grunfeld.csv"))
        alice.locator(".tab.active", has_text="grunfeld").wait_for(timeout=30_000)
        alice.fill("#question", "total invest")
        alice.keyboard.press("Enter")
        alice.locator('article[data-index="0"] .answer-text').wait_for(timeout=60_000)
        alice.locator(".msg.progress").wait_for(state="detached", timeout=60_000)
        alice.screenshot(path=str(ARTIFACTS / "login-alice.png"))
        alice_sessions = alice.evaluate("fetch('/api/sessions').then(r => r.json())")["sessions"]
        assert len(alice_sessions) == 1
        sid = alice_sessions[0]["id"]

        bob = _log_in(browser.new_context(), base, "bob")
        bob_state = bob.evaluate("fetch('/api/sessions').then(r => r.json())")
        assert bob_state["sessions"] == [] and sid not in bob.content()
        assert bob.evaluate(f"fetch('/api/sessions/{sid}').then(r => r.status)") == 404
        bob.screenshot(path=str(ARTIFACTS / "login-bob.png"))

        # alice on a second browser (new context, no shared cookie) finds her conversation again
        again = _log_in(browser.new_context(), base, "alice")
        assert [s["id"] for s in again.evaluate("fetch('/api/sessions').then(r => r.json())")["sessions"]] == [sid]

        # logging out ends the session on that browser
        bob.click("#logout")
        bob.wait_for_url(f"{base}/login")
        assert bob.evaluate("fetch('/api/state').then(r => r.status)") == 401
        browser.close()

    # a token works from requests, without a cookie or CSRF token
    _, token = store.create_token("alice", "script")
    h = {"Authorization": f"Bearer {token}"}
    assert [s["id"] for s in requests.get(base + "/api/sessions", headers=h, timeout=30).json()["sessions"]] == [sid]
    assert requests.post(base + "/api/sessions", headers=h, timeout=30).status_code == 201
    assert requests.get(base + "/api/sessions", timeout=30).status_code == 401
