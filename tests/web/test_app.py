"""The factory, the page, static assets, the JSON error shape and the serve command."""

from __future__ import annotations

import re
import stat

import pytest
from click.testing import CliRunner

from auto_analyst.cli.context import CliContext
from auto_analyst.web import create_app


def test_factory_puts_the_service_in_extensions_and_keeps_the_secret_private(settings):
    app = create_app({"SETTINGS": settings})
    try:
        service = app.extensions["auto_analyst"]
        assert service.analyst.settings.model == "offline"
        key_file = settings.home / "web" / "secret_key"
        assert app.config["SECRET_KEY"] == key_file.read_text()
        assert stat.S_IMODE(key_file.stat().st_mode) == 0o600
        assert app.config["MAX_CONTENT_LENGTH"] > settings.max_file_mb * 1024 * 1024
        # the same key on the next start: browsers keep their user id across restarts
        assert create_app({"SETTINGS": settings}).config["SECRET_KEY"] == app.config["SECRET_KEY"]
    finally:
        app.extensions["auto_analyst"].close()


def test_page_loads_every_asset_from_the_app_itself(browser):
    page = browser.get("/").get_data(as_text=True)
    assert not re.search(r"""(src|href)=["']https?://""", page), "no CDN"
    for url in re.findall(r"""(?:src|href)=["'](/[^"']+)""", page):
        r = browser.get(url)
        assert r.status_code == 200, url
    plotly_js = browser.get("/vendor/plotly.min.js")
    assert plotly_js.status_code == 200 and len(plotly_js.data) > 1_000_000
    assert "Content-Security-Policy" in browser.get("/").headers


def test_state_lists_the_model_and_only_this_browsers_sessions(browser, other_browser):
    sid = browser.new_session()
    state = browser.get("/api/state").json
    assert state["ok"] and state["model"] == "offline"
    assert [s["id"] for s in state["sessions"]] == [sid]
    assert other_browser.get("/api/state").json["sessions"] == []
    assert [s["id"] for s in browser.get("/api/sessions").json["sessions"]] == [sid]


@pytest.mark.parametrize("method,url,status,kind", [
    ("get", "/api/sessions/AAAAAAAAAAAAAAAA", 404, "not_found"),
    ("get", "/api/sessions/../../etc", 404, "not_found"),
    ("get", "/nope", 404, "not_found"),
    ("post", "/api/sessions/AAAAAAAAAAAAAAAA/ask", 404, "not_found"),
    ("get", "/api/sessions/AAAAAAAAAAAAAAAA/export.py", 404, "not_found"),
    ("get", "/api/sessions/AAAAAAAAAAAAAAAA/results/0/figures/0", 404, "not_found"),
    ("post", "/api/model", 400, "bad_request"),
    ("put", "/api/sessions", 405, "method_not_allowed"),
])
def test_every_error_has_one_json_shape(browser, method, url, status, kind):
    r = browser.post(url) if method == "post" else getattr(browser.client, method)(url, headers={"X-CSRF-Token": browser.csrf})
    assert r.status_code == status
    assert r.json == {"ok": False, "error": {"kind": kind, "message": r.json["error"]["message"]}}
    assert r.json["error"]["message"]


def test_an_unexpected_exception_is_a_500_in_the_same_shape(app, browser, monkeypatch):
    service = app.extensions["auto_analyst"]
    monkeypatch.setattr(service, "new_conversation", lambda user: 1 / 0)
    r = browser.post("/api/sessions")
    assert r.status_code == 500 and r.json["error"]["kind"] == "internal"
    assert "ZeroDivision" not in r.get_data(as_text=True)


def test_a_model_configuration_error_is_a_400_from_the_one_error_table_a_model_configuration_error_with_a_400(app, browser, monkeypatch):
    from auto_analyst.errors import ModelConfigError

    service = app.extensions["auto_analyst"]

    def refuse(user):
        raise ModelConfigError("Model 'openai/gpt-4o-mini' needs OPENAI_API_KEY in the environment.")

    monkeypatch.setattr(service, "new_conversation", refuse)
    r = browser.post("/api/sessions")
    assert r.status_code == 400
    assert r.json == {"ok": False, "error": {"kind": "model_config", "message":
                                             "Model 'openai/gpt-4o-mini' needs OPENAI_API_KEY in the environment."}}


def test_serve_command_is_registered_and_documents_its_options():
    from auto_analyst.cli import cli

    result = CliRunner().invoke(cli, ["serve", "--help"])
    assert result.exit_code == 0, result.output
    assert "--port" in result.output and "--host" in result.output


def test_serve_builds_the_app_from_settings_and_closes_it(monkeypatch, settings):
    import werkzeug.serving

    from auto_analyst.cli.serve import serve

    seen = {}

    class FakeServer:
        server_port = 5555

        def serve_forever(self):
            raise KeyboardInterrupt

        def server_close(self):
            seen["closed"] = True

    def fake_make_server(host, port, app, threaded):
        seen.update(host=host, port=port, threaded=threaded, app=app)
        return FakeServer()

    monkeypatch.setattr(werkzeug.serving, "make_server", fake_make_server)
    result = CliRunner().invoke(serve, [], obj=CliContext(settings))
    assert result.exit_code == 0, result.output
    assert (seen["host"], seen["port"], seen["threaded"], seen["closed"]) == ("127.0.0.1", settings.port, True, True)
    assert "http://127.0.0.1:5555/" in result.output
