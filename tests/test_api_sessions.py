"""What the page asks of the API: stored sessions listed and reopened with their past answers and tables, uploads
kept with their original names, a session deleted with everything kept of it."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from auto_analyst import Analyst, Settings
from auto_analyst.errors import BadInputError, BadUploadError, DataLoadError, NotFoundError

FRAME = pd.DataFrame({"region": ["North", "South", "North", "East"], "revenue": [10.0, 20.0, 30.0, 5.5]})


def _writer(data: bytes):
    def save(path):
        path.write_bytes(data)
    return save


def test_an_upload_is_listed_and_reopened_with_its_answers_and_tables(tmp_path):
    settings = Settings.load({"home": tmp_path / "home"})
    with Analyst(settings=settings, user="alice") as analyst:
        s = analyst.session()
        up = s.upload("Sales 2024.csv", _writer(FRAME.to_csv(index=False).encode()))
        assert up.original_name == "Sales 2024.csv" and up.tables == ("sales_2024",)
        assert up.path.startswith(str(tmp_path / "home" / "uploads" / "alice" / s.id)) and "Sales" not in up.path
        first = s.ask("total revenue by region")
        assert first.status == "ok"
        s.settle()
        sid = s.id
    with Analyst(settings=settings, user="alice") as again:  # another process on the same home
        [saved] = again.conversations()
        assert (saved.session_id, saved.n_turns, saved.title) == (sid, 1, "total revenue by region")
        assert saved.uploads == (up,) and saved.model == settings.model
        assert again.conversations("bob") == [] and again.conversation(sid, "bob") is None
        with pytest.raises(NotFoundError):
            again.reopen(sid, user="bob")
        r = again.reopen(sid)
        assert list(r.tables) == ["sales_2024"] and r.turn == 1
        assert [x.model_dump() for x in r.results] == [first.model_dump()]  # the past answers, by value
        assert r.ask("mean revenue").turn == 2


def test_a_bad_upload_is_refused_and_leaves_no_file(tmp_path):
    with Analyst(settings=Settings.load({"home": tmp_path}), user="alice") as analyst:
        s = analyst.session()
        with pytest.raises(BadUploadError, match="Unsupported file type '.exe'"):
            s.upload("tool.exe", _writer(b"MZ"))
        with pytest.raises(BadUploadError, match="no file name"):
            s.upload("", _writer(b"a,b\n1,2\n"))
        with pytest.raises(DataLoadError) as caught:
            s.upload("broken.parquet", _writer(b"not parquet"))
        assert "broken.parquet" in str(caught.value) and str(tmp_path) not in str(caught.value)
        folder = tmp_path / "uploads" / "alice" / s.id
        assert not folder.exists() or not [p for p in folder.iterdir() if p.suffix != ".json"]
        assert s.tables == {} and analyst.conversations() == []


def test_delete_session_removes_its_turns_files_and_worker(tmp_path):
    settings = Settings.load({"home": tmp_path})
    with Analyst(settings=settings, user="alice") as analyst:
        s = analyst.session()
        s.upload("sales.csv", _writer(FRAME.to_csv(index=False).encode()))
        assert s.ask("total revenue by region").status == "ok"
        kept = analyst.session()
        kept.add_frame("other", FRAME)
        assert kept.ask("mean revenue").status == "ok"
        assert s.dir.exists() and (tmp_path / "uploads" / "alice" / s.id).exists()
        assert analyst.delete_session(s.id) == 1
        assert not s.dir.exists() and not (tmp_path / "uploads" / "alice" / s.id).exists()
        assert [c.session_id for c in analyst.conversations()] == [kept.id]
        assert analyst.history().turns(s.id) == [] and s._runner.sandbox is None


def test_resume_keeps_only_the_tables_an_older_state_named(tmp_path):
    # a state saved without the sheets (older versions) loaded every sheet once per table of the workbook
    book = tmp_path / "book.xlsx"
    with pd.ExcelWriter(book) as w:
        pd.DataFrame({"a": [1, 2]}).to_excel(w, sheet_name="one", index=False)
        pd.DataFrame({"b": [3, 4, 5]}).to_excel(w, sheet_name="two", index=False)
    settings = Settings.load({"home": tmp_path / "home"})
    with Analyst(settings=settings, user="alice") as analyst:
        s = analyst.session()
        s.load(book)
        state = {"tables": {n: str(book) for n in s.tables}, "active": "book_two", "memory": None, "turn": 0}
        analyst.memory.history.save_session_state("alice", s.id, json.dumps(state))
        r = analyst.resume(s.id)
        assert list(r.tables) == ["book_one", "book_two"] and r.active == "book_two"


def test_a_session_id_that_is_a_path_is_refused_and_deletes_nothing(tmp_path):
    with Analyst(settings=Settings.load({"home": tmp_path}), user="alice") as analyst:
        s = analyst.session()
        s.add_frame("t", pd.DataFrame({"x": [1, 2, 3]}))
        assert s.ask("sum of x").status == "ok"
        kept = tmp_path / "sessions" / "alice" / s.id
        assert kept.is_dir()
        for bad in ("..", ".", "../alice", "a/b"):
            with pytest.raises(BadInputError, match="is not a session id"):
                Analyst(settings=analyst.settings, user="bob").delete_session(bad)
        assert kept.is_dir()  # bob's '..' named every user's sessions before


def test_an_answered_turn_stores_the_session_state_in_its_own_write(tmp_path):
    """The turn and the state it leaves are one write (one account check, one session row update), and what a
    reopened session resumes from is that state."""
    import threading

    from sqlalchemy import event

    settings = Settings.load({"home": tmp_path / "home"})
    with Analyst(settings=settings, user="alice") as analyst:
        s = analyst.session()
        s.upload("sales.csv", _writer(FRAME.to_csv(index=False).encode()))
        s.settle()
        seen: list[str] = []
        engine, asking = analyst.memory.history.engine, threading.get_ident()

        def note(conn, cursor, statement, *args):
            if threading.get_ident() == asking:  # not the after-answer worker's summary and state
                seen.append(" ".join(statement.split()[:3]))

        event.listen(engine, "before_cursor_execute", note)
        try:
            assert s.ask("total revenue by region").status == "ok"
        finally:
            event.remove(engine, "before_cursor_execute", note)
        assert seen.count('INSERT INTO sessions') == 1 and seen.count("UPDATE sessions SET") == 1, seen
        assert json.loads(analyst.memory.history.load_session_state("alice", s.id))["turn"] == 1
