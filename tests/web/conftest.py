"""Fixtures for the web tests: an app per test, a browser-like client that carries cookie and CSRF token."""

from __future__ import annotations

import json
import re
import threading
from pathlib import Path

import pytest

from auto_analyst.web import create_app


def pytest_configure(config):
    config.addinivalue_line("markers", "browser: drives a real headless Chromium (tests/web/install_browser.sh)")


class Browser:
    """A Flask test client that behaves like one browser: it loads the page, then sends the CSRF header.

    Example:
        >>> b = Browser(app.test_client()); sid = b.new_session()   # doctest: +SKIP
    """

    def __init__(self, client, login: tuple[str, str] | None = None):
        self.client = client
        if login is not None:
            sign_in(client, *login)
        else:
            sign_in_with_token(client)
        page = client.get("/")
        assert page.status_code == 200
        self.csrf = re.search(rb'name="csrf-token" content="([^"]+)"', page.data).group(1).decode()

    def get(self, url, **kw):
        return self.client.get(url, **kw)

    def post(self, url, json=None, **kw):
        headers = {"X-CSRF-Token": self.csrf} | kw.pop("headers", {})
        return self.client.post(url, json=json, headers=headers, **kw)

    def delete(self, url, **kw):
        return self.client.delete(url, headers={"X-CSRF-Token": self.csrf} | kw.pop("headers", {}), **kw)

    def new_session(self) -> str:
        r = self.post("/api/sessions")
        assert r.status_code == 201, r.json
        return r.json["session"]["id"]

    def upload(self, sid: str, path: Path | None = None, name: str | None = None, data: bytes | None = None):
        import io

        content = data if data is not None else Path(path).read_bytes()
        return self.post(f"/api/sessions/{sid}/uploads", json=None,
                         data={"file": (io.BytesIO(content), name or Path(path).name)},
                         content_type="multipart/form-data")

    def run_job(self, sid: str, url_suffix: str, payload: dict) -> tuple[list[tuple[str, dict]], dict]:
        """Start a job (ask or run), read its whole event stream; returns (events, final data)."""
        r = self.post(f"/api/sessions/{sid}/{url_suffix}", json=payload)
        assert r.status_code == 202, r.json
        events = parse_sse(self.get(r.json["job"]["events"]).get_data(as_text=True))
        assert events and events[-1][0] in ("result", "error"), events
        return events, events[-1][1]

    def ask(self, sid: str, question: str) -> dict:
        events, final = self.run_job(sid, "ask", {"question": question})
        assert events[-1][0] == "result", final
        return final


def sign_in_with_token(client) -> None:
    """Open the loopback token link (what a person does with the URL ``serve`` prints), when the app wants it."""
    app = client.application
    if app.extensions["aa_auth"].token_mode:
        assert client.get("/?token=" + app.config["AUTH_TOKEN"]).status_code == 302


def sign_in(client, name: str, password: str) -> None:
    """Log in through the real login form (GET the page for its CSRF token, POST the form)."""
    page = client.get("/login").get_data(as_text=True)
    token = re.search(r'name="csrf_token" value="([^"]+)"', page).group(1)
    r = client.post("/login", data={"name": name, "password": password, "csrf_token": token, "next": "/"})
    assert r.status_code == 302 and r.headers["Location"] == "/", r.get_data(as_text=True)


def parse_sse(text: str) -> list[tuple[str, dict]]:
    """(event, data) pairs of a server-sent-events body (comments skipped)."""
    out = []
    for frame in text.split("\n\n"):
        name, data = None, None
        for line in frame.splitlines():
            if line.startswith("event: "):
                name = line[7:]
            elif line.startswith("data: "):
                data = json.loads(line[6:])
        if name:
            out.append((name, data))
    return out


@pytest.fixture
def app(settings):
    app = create_app({"TESTING": True, "SECRET_KEY": "test-secret", "SETTINGS": settings})
    yield app
    app.extensions["auto_analyst"].close()


@pytest.fixture
def browser(app) -> Browser:
    return Browser(app.test_client())


@pytest.fixture
def other_browser(app) -> Browser:
    return Browser(app.test_client())


class LiveURL(str):
    """The base URL of a live server; ``.entry`` is the page with the loopback token (the URL ``serve`` prints)."""

    entry: str


@pytest.fixture
def live_server(app):
    """The app served by werkzeug on 127.0.0.1 (threaded, like ``auto-analyst serve``); yields its base URL
    (a :class:`LiveURL`: open ``.entry`` first to sign in with the loopback token)."""
    from werkzeug.serving import make_server

    server = make_server("127.0.0.1", 0, app, threaded=True)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    url = LiveURL(f"http://127.0.0.1:{server.server_port}")
    url.entry = f"{url}/?token={app.config['AUTH_TOKEN']}"
    yield url
    server.shutdown()
    thread.join(10)


HOSTILE = "<img src=x onerror=alert(1)>"


@pytest.fixture
def hostile_csv(tmp_path) -> Path:
    """A CSV whose column names and cells are HTML/script payloads."""
    p = tmp_path / "evil<b>.csv"
    p.write_text(f'"{HOSTILE}",amount,"<script>alert(2)</script>"\n'
                 f'"<svg onload=alert(3)>",5,"</td><img src=y onerror=alert(4)>"\n'
                 f'plain,7,"x"\n', encoding="utf-8")
    return p


PRICED_MODEL = "openai/gpt-4o-mini"
"""The model the priced stand-in says it is: a LiteLLM-priced model, so budget holds are not zero."""


@pytest.fixture
def priced_settings(settings, monkeypatch):
    """(settings, calls): settings whose model is :data:`PRICED_MODEL`, answered by the offline engine in this
    process (no network, deterministic) but carrying a hosted model's capabilities (``offline=False``): the
    stand-in for a paid model. ``calls`` records the text of every request the engine gets."""
    from auto_analyst.llm import providers
    from auto_analyst.llm.capabilities import Capabilities
    from auto_analyst.offline.engine import OfflineEngine, OfflineLM

    calls: list = []
    original = OfflineEngine.complete

    def counting(self, request):
        calls.append(" ".join(str(v) for v in getattr(request, "inputs", {}).values()))
        return original(self, request)

    def priced_lm(settings, api_key=None, registry=None):
        lm = OfflineLM(registry)
        lm.capabilities = Capabilities(offline=False, plans_with_code=False, deterministic=True,
                                       writes_sql=lm.capabilities.writes_sql,
                                       writes_duckdb_sql=lm.capabilities.writes_duckdb_sql)
        return lm

    monkeypatch.setattr(OfflineEngine, "complete", counting)
    monkeypatch.setattr(providers, "build_lm", priced_lm)
    return settings.replace(model=PRICED_MODEL, api_key="sk-stand-in"), calls
