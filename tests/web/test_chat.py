"""Asking with streamed progress, follow-ups, charts and tables out, re-running code, cancelling, failures, deleting."""

from __future__ import annotations

import http.client
import json
import threading
import time

import pytest

from auto_analyst.results import ErrorInfo, ProgressEvent, Result
from tests.web.conftest import parse_sse


@pytest.fixture
def grunfeld(browser, datasets_dir):
    sid = browser.new_session()
    assert browser.upload(sid, datasets_dir / "grunfeld.csv").status_code == 201
    return sid


def test_ask_streams_progress_then_the_result_with_a_chart_and_a_table(browser, grunfeld):
    events, r = browser.run_job(grunfeld, "ask", {"question": "bar chart of total invest by firm"})
    stages = [d["stage"] for name, d in events if name == "progress"]
    assert stages[:3] == ["starting", "preparing", "planning"] and "agent" in stages and "running" in stages and stages[-1] == "done"
    assert events[-1][0] == "result" and r["status"] == "ok" and r["index"] == 0
    assert "<strong>" in r["answer_html"] and "General Motors" in r["answer_html"]
    assert "show(" in r["code"] and r["trace"]["context"] and r["usage"]["lm_calls"] >= 1 and r["timings"]["total"] > 0

    fig = browser.get(r["figures"][0]["url"])
    assert fig.status_code == 200 and fig.mimetype == "application/json"
    assert json.loads(fig.data)["data"][0]["type"] == "bar"
    assert "path" not in r["figures"][0]  # no server paths in the page's JSON

    csv = browser.get(r["tables"][0]["csv_url"])
    assert csv.status_code == 200 and csv.mimetype == "text/csv"
    assert csv.get_data(as_text=True).splitlines()[:2] == ["firm,total invest", "General Motors,12160.4"]

    follow = browser.ask(grunfeld, "now only for 1950")
    assert follow["status"] == "ok" and "642.9" in follow["answer"] and follow["index"] == 1
    detail = browser.get(f"/api/sessions/{grunfeld}").json["session"]
    assert [x["question"] for x in detail["results"]] == ["bar chart of total invest by firm", "now only for 1950"]
    assert detail["title"] == "bar chart of total invest by firm" and detail["n_turns"] == 2 and detail["job"] is None
    assert browser.get(f"/api/sessions/{grunfeld}/results/5/figures/0").status_code == 404
    assert browser.get(f"/api/sessions/{grunfeld}/results/0/figures/9").status_code == 404
    assert browser.get(f"/api/sessions/{grunfeld}/results/0/tables/9.csv").status_code == 404


def test_a_figure_outside_the_session_folder_is_not_served(app, browser, grunfeld, tmp_path):
    r = browser.ask(grunfeld, "bar chart of total invest by firm")
    conv = _conv(app, grunfeld)
    outside = tmp_path / "secret.json"
    outside.write_text("{}")
    conv.session.results[0].figures[0].path = str(outside)
    assert browser.get(r["figures"][0]["url"]).status_code == 404


def test_edited_script_runs_again_in_the_session(browser, grunfeld):
    events, r = browser.run_job(grunfeld, "run", {"code": "show(grunfeld['invest'].max(), name='top')", "question": "q"})
    assert r["status"] == "ok" and r["tables"][0]["name"] == "top" and r["tables"][0]["rows"] == [[1486.7]]
    assert r["question"] == "q (edited)"
    _, bad = browser.run_job(grunfeld, "run", {"code": "1/0"})
    # the error's kind is one of errors.ERROR_KINDS; the exception's class is in the message and the attempt
    assert bad["status"] == "error" and bad["error"]["kind"] == "internal", bad["error"]
    assert bad["error"]["message"].startswith("ZeroDivisionError") and bad["attempts"][0]["error"]["kind"] == "ZeroDivisionError"
    assert browser.post(f"/api/sessions/{grunfeld}/run", json={"code": "  "}).status_code == 400


def test_bad_questions_are_400(browser, grunfeld):
    assert browser.post(f"/api/sessions/{grunfeld}/ask", json={"question": " "}).json["error"]["kind"] == "bad_input"
    assert browser.post(f"/api/sessions/{grunfeld}/ask", json={"question": "x" * 5000}).status_code == 400
    empty = browser.new_session()
    r = browser.post(f"/api/sessions/{empty}/ask", json={"question": "mean of x"})
    assert r.status_code == 400 and "upload" in r.json["error"]["message"]


def _blocking_ask(session, started: threading.Event):
    """A stand-in for Session.ask that runs until cancelled (the offline model is too quick to cancel)."""
    def ask(question, on_progress=None, cancel=None, asked_at=None):
        on_progress(ProgressEvent(stage="planning", message="Planning"))
        started.set()
        assert cancel.wait(20)
        result = Result(question=question, status="error", error=ErrorInfo(kind="cancelled", message="Cancelled."))
        session.results.append(result)
        return result
    return ask


def _conv(app, sid):
    service = app.extensions["auto_analyst"]
    return next(c for c in service.index.all() if c.id == sid)


def test_cancel_stops_the_run_and_a_second_question_waits_its_turn(app, browser, grunfeld, monkeypatch):
    started = threading.Event()
    session = _conv(app, grunfeld).session
    monkeypatch.setattr(session, "ask", _blocking_ask(session, started))
    job = browser.post(f"/api/sessions/{grunfeld}/ask", json={"question": "slow"}).json["job"]
    assert started.wait(10)
    busy = browser.post(f"/api/sessions/{grunfeld}/ask", json={"question": "another"})
    assert busy.status_code == 409 and busy.json["error"]["kind"] == "busy"
    assert browser.get(f"/api/sessions/{grunfeld}").json["session"]["job"]["id"] == job["id"]
    assert browser.post(job["cancel"]).json["ok"]
    events = parse_sse(browser.get(job["events"]).get_data(as_text=True))
    assert events[-1][0] == "result" and events[-1][1]["error"]["kind"] == "cancelled"
    assert browser.get(f"/api/sessions/{grunfeld}/jobs/{job['id']}").json["job"]["finished"] is True
    assert browser.post(f"/api/sessions/{grunfeld}/jobs/nope/cancel").status_code == 404


def test_a_crashing_run_becomes_an_error_event_and_the_server_carries_on(app, browser, grunfeld, monkeypatch):
    def boom(question, on_progress=None, cancel=None, asked_at=None):
        raise RuntimeError("secret internals")
    monkeypatch.setattr(_conv(app, grunfeld).session, "ask", boom)
    events, final = browser.run_job(grunfeld, "ask", {"question": "anything"})
    assert events[-1][0] == "error" and final == {"kind": "internal", "message": final["message"]}
    assert "secret internals" not in final["message"]
    monkeypatch.undo()
    assert browser.ask(grunfeld, "total invest")["status"] == "ok"


def test_a_job_that_overruns_its_timeout_is_cancelled(app, browser, grunfeld, monkeypatch):
    app.extensions["auto_analyst"].job_timeout = 0.3
    session = _conv(app, grunfeld).session
    monkeypatch.setattr(session, "ask", _blocking_ask(session, threading.Event()))
    _, final = browser.run_job(grunfeld, "ask", {"question": "slow"})
    assert final["error"]["kind"] == "cancelled"


def test_a_client_that_leaves_mid_stream_does_not_stop_the_job_or_the_server(app, live_server, datasets_dir, monkeypatch):
    import requests

    s = requests.Session()
    page = s.get(live_server.entry).text
    token = page.split('name="csrf-token" content="')[1].split('"')[0]
    h = {"X-CSRF-Token": token}
    sid = s.post(live_server + "/api/sessions", headers=h).json()["session"]["id"]
    with open(datasets_dir / "grunfeld.csv", "rb") as f:
        assert s.post(f"{live_server}/api/sessions/{sid}/uploads", headers=h, files={"file": ("g.csv", f)}).ok
    started = threading.Event()
    session = _conv(app, sid).session
    monkeypatch.setattr(session, "ask", _blocking_ask(session, started))
    job = s.post(f"{live_server}/api/sessions/{sid}/ask", headers=h, json={"question": "slow"}).json()["job"]
    host, port = live_server.removeprefix("http://").split(":")
    conn = http.client.HTTPConnection(host, int(port), timeout=10)
    conn.request("GET", job["events"], headers={"Cookie": "; ".join(f"{k}={v}" for k, v in s.cookies.items())})
    resp = conn.getresponse()
    assert resp.status == 200 and b"event: progress" in resp.read1(4096)
    conn.close()  # the browser tab goes away mid-stream
    s.post(live_server + job["cancel"], headers=h)
    deadline = time.time() + 10
    while not s.get(f"{live_server}/api/sessions/{sid}/jobs/{job['id']}").json()["job"]["finished"]:
        assert time.time() < deadline
        time.sleep(0.05)
    assert s.get(live_server + "/api/state").json()["ok"]


def test_delete_removes_the_conversation_and_its_files(browser, settings, grunfeld):
    browser.ask(grunfeld, "bar chart of total invest by firm")
    files = [p for p in settings.home.rglob("*") if p.is_file() and grunfeld in str(p)]
    assert any(p.suffix == ".json" for p in files) and any(p.suffix == ".csv" for p in files)
    assert browser.delete(f"/api/sessions/{grunfeld}").json == {"ok": True}
    assert not [p for p in settings.home.rglob("*") if grunfeld in str(p)]
    assert browser.get(f"/api/sessions/{grunfeld}").status_code == 404
    assert browser.get("/api/state").json["sessions"] == []


def test_model_picker(browser, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    r = browser.post("/api/model", json={"model": "openai/gpt-4o-mini"})
    assert r.status_code == 400 and r.json["error"]["kind"] == "model" and "OPENAI_API_KEY" in r.json["error"]["message"]
    assert browser.get("/api/state").json["model"] == "offline"
    assert browser.post("/api/model", json={"model": "openai/gpt-4o-mini", "api_key": "k"}).json["model"] == "openai/gpt-4o-mini"
    assert browser.get("/api/state").json["model"] == "openai/gpt-4o-mini"
    assert browser.post("/api/model", json={"model": "offline"}).json["model"] == "offline"


def test_a_result_table_downloaded_as_csv_has_no_float_noise_and_its_json_keeps_the_computed_values(browser, grunfeld):
    code = "import pandas as pd\nshow(pd.DataFrame({'k': ['a', 'c'], 'v': [0.1 + 0.2, 1.1 * 3]}), name='noise')"
    _, r = browser.run_job(grunfeld, "run", {"code": code})
    assert r["tables"][0]["rows"] == [["a", 0.30000000000000004], ["c", 3.3000000000000003]]
    csv = browser.get(r["tables"][0]["csv_url"]).get_data(as_text=True)
    assert csv.splitlines() == ["k,v", "a,0.3", "c,3.3"], csv


def test_a_run_past_its_time_budget_says_what_to_do_in_the_errors_message(settings, datasets_dir):
    import dataclasses

    from auto_analyst.web import create_app
    from tests.web.conftest import Browser

    app = create_app({"TESTING": True, "SECRET_KEY": "test-secret",
                      "SETTINGS": dataclasses.replace(settings, run_timeout=1)})
    try:
        b = Browser(app.test_client())
        sid = b.new_session()
        assert b.upload(sid, datasets_dir / "iris.csv").status_code == 201
        _, r = b.run_job(sid, "run", {"code": "import time\ntime.sleep(30)"})
        assert r["status"] == "error" and r["error"]["kind"] == "sandbox", r["error"]
        assert r["error"]["message"] == ("TimeoutError: the script ran longer than 1 s and was stopped; ask for less "
                                         "at once (a sample, fewer groups) or raise run_timeout "
                                         "(AUTO_ANALYST_RUN_TIMEOUT).")
    finally:
        app.extensions["auto_analyst"].close()


def test_a_csv_download_writes_integral_floats_whole_and_never_makes_two_values_equal(browser, tmp_path):
    # a table built here: 16-digit account ids in a float column, as pandas writes one with a missing id
    path = tmp_path / "accounts.csv"
    path.write_text("account_id,branch,amount\n1234567890123456.0,a,1.1\n1234567890123457.0,b,2.2\n,a,3.3\n"
                    "3234567890123459.0,b,4.4\n")
    sid = browser.new_session()
    assert browser.upload(sid, path).status_code == 201
    _, r = browser.run_job(sid, "ask", {"question": "what is the total amount by account_id?"})
    assert r["status"] == "ok", r
    assert r["tables"][0]["rows"] == [[1234567890123456.0, 1.1], [1234567890123457.0, 2.2], [3234567890123459.0, 4.4]]
    for key in ("1234567890123456", "1234567890123457", "3234567890123459"):  # the prose shows each key whole
        assert f"- {key}: " in r["answer"], r["answer"]
    csv = browser.get(r["tables"][0]["csv_url"]).get_data(as_text=True)
    assert csv.splitlines() == ["account_id,total amount", "1234567890123456,1.1", "1234567890123457,2.2",
                                "3234567890123459,4.4"], csv

    # a second table, from code: large integral totals stay whole; a column where 15 digits would make two distinct
    # values equal keeps each one's shortest round-trip form; other fractions lose their float noise
    code = ("import pandas as pd\nshow(pd.DataFrame({'k': ['x', 'y'], 'total': [9007199254740990.0, 2.0 ** 53], "
            "'v': [0.1 + 0.2, 0.3], 'w': [1.1 * 3, 123456789012345.67]}), name='mixed')")
    _, r = browser.run_job(sid, "run", {"code": code})
    csv = browser.get(r["tables"][0]["csv_url"]).get_data(as_text=True)
    assert csv.splitlines() == ["k,total,v,w", "x,9007199254740990,0.30000000000000004,3.3",
                                "y,9007199254740992,0.3,123456789012345.67"], csv
