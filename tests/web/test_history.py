"""Conversations come back after a server restart: listed, opened with their answers, continued, deleted.

Each test starts the app, stops it, and starts it again on the same AUTO_ANALYST_HOME (the
``settings`` fixture) with the same secret key, like restarting ``auto-analyst serve``; a browser
keeps its signed cookie (its user id) across the restart.
"""

from __future__ import annotations

import json
from contextlib import contextmanager

import pandas as pd
import pytest

from auto_analyst.web import create_app
from auto_analyst.web.conversations import MemoryIndex
from tests.web.conftest import Browser


@contextmanager
def serve(settings, **config):
    """One run of the server (the app and its workers), stopped on exit."""
    app = create_app({"TESTING": True, "SECRET_KEY": "test-secret", "SETTINGS": settings} | config)
    try:
        yield app
    finally:
        app.extensions["auto_analyst"].close()


def come_back(app, earlier: Browser | None = None) -> Browser:
    """A browser on ``app`` carrying the cookie of ``earlier`` (the same browser after the restart), or a new one."""
    client = app.test_client()
    if earlier is not None:
        client.set_cookie("aa_session", earlier.client.get_cookie("aa_session").value)
    return Browser(client)


def user_of(browser: Browser) -> str:
    with browser.client.session_transaction() as s:
        return s["uid"]


@pytest.fixture(scope="module")
def grunfeld_1950(datasets_dir) -> dict[str, float]:
    d = pd.read_csv(datasets_dir / "grunfeld.csv")
    return d[d["year"] == 1950].groupby("firm")["invest"].sum().to_dict()


def test_a_conversation_survives_a_restart_and_continues_with_its_memory(settings, datasets_dir, grunfeld_1950):
    with serve(settings) as app:
        b = come_back(app)
        sid = b.new_session()
        assert b.upload(sid, datasets_dir / "grunfeld.csv").status_code == 201
        first = b.ask(sid, "total invest by firm")
        assert first["status"] == "ok" and ["General Motors", 12160.4] in first["tables"][0]["rows"]
        before = b.get("/api/state").json["sessions"]

    with serve(settings) as app:
        b2 = come_back(app, b)
        assert user_of(b2) == user_of(b)
        listed = b2.get("/api/state").json["sessions"]
        assert [s["id"] for s in listed] == [sid]
        s = listed[0]
        assert s["title"] == "total invest by firm" and s["n_turns"] == 1 and s["files"] == ["grunfeld.csv"]
        assert s["created"] == pytest.approx(before[0]["created"], abs=60) and s["updated"] >= s["created"]
        assert b2.get("/api/sessions").json["sessions"] == listed

        detail = b2.get(f"/api/sessions/{sid}").json["session"]
        assert detail["title"] == "total invest by firm" and detail["n_turns"] == 1 and detail["job"] is None
        assert [(t["name"], t["file"], t["n_rows"]) for t in detail["tables"]] == [("grunfeld", "grunfeld.csv", 220)]
        old = detail["results"][0]
        assert old["question"] == "total invest by firm" and old["index"] == 0
        assert old["answer"] == first["answer"] and old["answer_html"] == first["answer_html"]
        assert old["code"] == first["code"] and old["tables"] == first["tables"]
        csv = b2.get(old["tables"][0]["csv_url"])
        assert csv.status_code == 200 and "General Motors,12160.4" in csv.get_data(as_text=True)

        follow = b2.ask(sid, "now only for 1950")  # needs the previous turn: the resumed short-term memory
        assert follow["status"] == "ok" and follow["index"] == 1
        rows = dict(map(tuple, follow["tables"][0]["rows"]))
        assert rows["General Motors"] == pytest.approx(grunfeld_1950["General Motors"]) == pytest.approx(642.9)
        assert rows == pytest.approx(grunfeld_1950)

        detail = b2.get(f"/api/sessions/{sid}").json["session"]
        assert [r["question"] for r in detail["results"]] == ["total invest by firm", "now only for 1950"]
        assert b2.get("/api/state").json["sessions"][0]["n_turns"] == 2
        script = b2.get(f"/api/sessions/{sid}/export.py").get_data(as_text=True)
        assert "grunfeld.csv" in script and "1950" in script
        history = app.extensions["auto_analyst"].analyst.memory.history
        turns = history.turns(user_of(b2), sid)
        assert [(t.turn, t.question) for t in turns] == [(1, "total invest by firm"), (2, "now only for 1950")]
        assert "642.9" in turns[1].answer


def test_after_a_restart_other_browsers_get_404_and_delete_removes_everything(settings, datasets_dir):
    with serve(settings) as app:
        b = come_back(app)
        sid = b.new_session()
        assert b.upload(sid, datasets_dir / "grunfeld.csv").status_code == 201
        chart = b.ask(sid, "bar chart of total invest by firm")
        assert chart["figures"]
        uid = user_of(b)
        uploads = settings.home / "uploads" / uid / sid
        figures = [p for p in settings.home.joinpath("sessions").rglob("*") if p.is_file() and sid in p.parts]
        assert uploads.is_dir() and figures

    with serve(settings) as app:
        b2, other = come_back(app, b), come_back(app)
        assert user_of(other) != uid
        # the other cookie jar: nothing listed, and every URL of the conversation is 404 (nothing reopened)
        assert other.get("/api/state").json["sessions"] == []
        for r in (other.get(f"/api/sessions/{sid}"), other.get(chart["figures"][0]["url"]),
                  other.get(f"/api/sessions/{sid}/export.py"),
                  other.post(f"/api/sessions/{sid}/ask", json={"question": "now only for 1950"}),
                  other.delete(f"/api/sessions/{sid}")):
            assert r.status_code == 404 and r.json["error"]["kind"] == "not_found"
        assert app.extensions["auto_analyst"].index.all() == []

        # the owner: the chart, still on disk, is served from the stored answer
        fig = b2.get(f"/api/sessions/{sid}").json["session"]["results"][0]["figures"][0]
        got = b2.get(fig["url"])
        assert got.status_code == 200 and json.loads(got.data)["data"][0]["type"] == "bar"

        assert b2.delete(f"/api/sessions/{sid}").json == {"ok": True}
        assert b2.get("/api/state").json["sessions"] == []
        assert b2.get(f"/api/sessions/{sid}").status_code == 404
        history = app.extensions["auto_analyst"].analyst.memory.history
        assert history.sessions(uid) == [] and history.turns(uid, sid) == [] and history.uploads(uid, sid) == []
        assert not uploads.exists() and not any(p.exists() for p in figures)

    with serve(settings) as app:
        assert come_back(app, b).get("/api/state").json["sessions"] == []


def test_an_upload_is_kept_without_a_question_but_an_empty_conversation_is_not(settings, datasets_dir):
    with serve(settings) as app:
        b = come_back(app)
        empty = b.new_session()
        sid = b.new_session()
        assert b.upload(sid, datasets_dir / "grunfeld.csv", name="Grunfeld data (1935-54).csv").status_code == 201
        assert {s["id"] for s in b.get("/api/state").json["sessions"]} == {empty, sid}

    with serve(settings) as app:
        b2 = come_back(app, b)
        listed = b2.get("/api/state").json["sessions"]
        assert [(s["id"], s["title"], s["n_turns"]) for s in listed] == [(sid, "Grunfeld data (1935-54).csv", 0)]
        assert b2.get(f"/api/sessions/{empty}").status_code == 404
        detail = b2.get(f"/api/sessions/{sid}").json["session"]
        assert detail["results"] == [] and detail["active"] == detail["tables"][0]["name"]
        assert detail["tables"][0]["file"] == "Grunfeld data (1935-54).csv"
        preview = b2.get(f"/api/sessions/{sid}/tables/{detail['active']}").json["table"]
        assert preview["n_rows"] == 220 and preview["file"] == "Grunfeld data (1935-54).csv"


def test_the_in_memory_index_can_still_be_chosen(settings, datasets_dir):
    with serve(settings, CONVERSATION_INDEX=MemoryIndex()) as app:
        b = come_back(app)
        sid = b.new_session()
        assert b.upload(sid, datasets_dir / "grunfeld.csv").status_code == 201
        assert [s["id"] for s in b.get("/api/state").json["sessions"]] == [sid]
    with serve(settings, CONVERSATION_INDEX=MemoryIndex()) as app:
        assert come_back(app, b).get("/api/state").json["sessions"] == []


def test_a_workbook_comes_back_with_each_sheet_once(settings, tmp_path):
    book = tmp_path / "book.xlsx"
    with pd.ExcelWriter(book) as w:
        pd.DataFrame({"a": [1, 2]}).to_excel(w, sheet_name="one", index=False)
        pd.DataFrame({"b": [3, 4, 5]}).to_excel(w, sheet_name="two", index=False)
    with serve(settings) as app:
        b = come_back(app)
        sid = b.new_session()
        # the names the CLI and describe give the sheets (data/load.py table_name)
        assert [t["name"] for t in b.upload(sid, book).json["tables"]] == ["book_one", "book_two"]
    with serve(settings) as app:
        b2 = come_back(app, b)
        detail = b2.get(f"/api/sessions/{sid}").json["session"]
        assert [(t["name"], t["file"], t["sheet"], t["n_rows"]) for t in detail["tables"]] == [
            ("book_one", "book.xlsx", "one", 2), ("book_two", "book.xlsx", "two", 3)]
        assert b2.get(f"/api/sessions/{sid}/tables/book_two").json["table"]["columns"] == ["b"]
        assert b2.get("/api/state").json["sessions"][0]["files"] == ["book.xlsx"]
