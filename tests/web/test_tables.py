"""Several tables on the page: a second upload and a tab switch change the table the next question reads; sheets
are named as the CLI names them; the answer's time is what the user waited; a finished job is finished at once."""

from __future__ import annotations

import threading
import time

from auto_analyst.session_runner import SessionRunner
from auto_analyst.web import jobs
from tests.test_session_tables import A, B, write_tables, write_workbook


def rows_of(result: dict, name: str) -> dict:
    t = next(t for t in result["tables"] if t["name"] == name)
    return {r[0]: r[1] for r in t["rows"]}


def shown(result: dict):
    """The single value an answer showed."""
    return result["tables"][0]["rows"][0][0]


def test_a_second_upload_becomes_active_and_the_next_question_reads_it(browser, tmp_path):
    a, b = write_tables(tmp_path)
    sid = browser.new_session()
    assert browser.upload(sid, a).json["active"] == "a"
    first = browser.ask(sid, "total sales by region")
    assert rows_of(first, "total sales by region") == {"AS": 7.0, "EU": 15.0, "US": 20.0}
    up = browser.upload(sid, b)
    assert up.status_code == 201 and up.json["active"] == "b"
    temps = browser.ask(sid, "mean temp by city")
    assert temps["status"] == "ok", temps["answer"]
    assert rows_of(temps, "mean temp by city") == {"Oslo": 2.0, "Paris": 11.25, "Rome": 20.0}
    assert shown(browser.ask(sid, "total sales")) == B["sales"].sum()  # the active table's column


def test_switching_tabs_changes_the_table_of_the_next_question(browser, tmp_path):
    a, b = write_tables(tmp_path)
    sid = browser.new_session()
    browser.upload(sid, a)
    browser.upload(sid, b)
    assert browser.ask(sid, "mean temp by city")["status"] == "ok"
    switched = browser.post(f"/api/sessions/{sid}/active", json={"name": "a"})
    assert switched.status_code == 200 and switched.json["active"] == "a"
    assert shown(browser.ask(sid, "total sales")) == A["sales"].sum()
    assert shown(browser.ask(sid, "now only EU")) == 15.0  # a follow-up stays on the table of its turn
    browser.post(f"/api/sessions/{sid}/active", json={"name": "b"})
    assert shown(browser.ask(sid, "total sales")) == B["sales"].sum()
    assert browser.get(f"/api/sessions/{sid}").json["session"]["active"] == "b"
    assert browser.post(f"/api/sessions/{sid}/active", json={"name": "c"}).status_code == 404


def test_workbook_tabs_have_the_cli_names_and_each_sheet_answers(browser, tmp_path):
    book = write_workbook(tmp_path / "econ.xlsx")
    sid = browser.new_session()
    up = browser.upload(sid, book)
    assert [t["name"] for t in up.json["tables"]] == ["econ_macrodata", "econ_fair"]
    detail = browser.get(f"/api/sessions/{sid}").json["session"]
    assert [(t["name"], t["file"], t["sheet"]) for t in detail["tables"]] == [
        ("econ_macrodata", "econ.xlsx", "macrodata"), ("econ_fair", "econ.xlsx", "fair")]
    browser.post(f"/api/sessions/{sid}/active", json={"name": "econ_fair"})
    assert shown(browser.ask(sid, "mean age")) == 30.5


def test_the_time_shown_is_what_the_user_waited_not_the_analysis_alone(browser, tmp_path, monkeypatch):
    a, _ = write_tables(tmp_path)
    sid = browser.new_session()
    browser.upload(sid, a)
    start = SessionRunner.start

    def slow_start(self, tables, active):  # a worker that takes a while to start, as on a busy machine
        if self.pipeline is None:
            time.sleep(0.8)
        return start(self, tables, active)

    monkeypatch.setattr(SessionRunner, "start", slow_start)
    t0 = time.monotonic()
    r = browser.ask(sid, "total sales")
    wall = time.monotonic() - t0
    waited, total = r["timings"]["waited"], r["timings"]["total"]
    assert 0.8 + total <= waited + 0.01 and waited <= wall + 0.01
    again = browser.get(f"/api/sessions/{sid}").json["session"]["results"][0]
    assert again["timings"]["waited"] == waited  # kept with the result (the page re-renders from it)


def test_the_final_event_and_finished_are_one_step(monkeypatch):
    class SlowTimer(threading.Timer):  # widens the gap a reader could see between the result and "finished"
        def cancel(self):
            time.sleep(0.3)
            super().cancel()

    monkeypatch.setattr(jobs.threading, "Timer", SlowTimer)
    job = jobs.Job("ask", lambda progress, cancel: {"answer": 42}).start()
    seen = []
    for frame in job.stream():
        seen.append((frame.split("\n")[1], job.finished, job.final() is not None))
    assert seen[-1] == ("event: result", True, True)
    assert job.wait(5)
