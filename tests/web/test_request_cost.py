"""What a signed-in request costs the server: its login read in one statement, the cookie not signed again unchanged.

Every request of a team server's browser is checked (auth._guard); a question makes two (the ask and its event
stream), so these costs are paid twice per answer (benchmarks/bench_web_throughput.py, issue 24 item 7).
"""

from __future__ import annotations

import re
from contextlib import contextmanager

import pytest
from sqlalchemy import event

from auto_analyst.web import AccountStore, create_app, security
from tests.web.conftest import Browser

PASSWORD = "alice-password"


@pytest.fixture
def team(settings):
    store = AccountStore(settings=settings)
    store.add("alice", PASSWORD)
    app = create_app({"TESTING": True, "SECRET_KEY": "test-secret", "SETTINGS": settings})
    yield app, store
    app.extensions["auto_analyst"].close()


@contextmanager
def statements(engine):
    """The SQL statements run on ``engine`` inside the block (every thread)."""
    seen: list[str] = []

    def note(conn, cursor, statement, params, context, executemany):
        seen.append(" ".join(statement.split()))

    event.listen(engine, "before_cursor_execute", note)
    try:
        yield seen
    finally:
        event.remove(engine, "before_cursor_execute", note)


def _account_reads(seen: list[str]) -> list[str]:
    """Reads of a login or of an account row by name (not the writes' owner checks ``name = ? AND id = ?``)."""
    return [s for s in seen if "web_sessions" in s or
            (re.search(r"FROM accounts WHERE (lower\(name\)|name) = ", s) and "AND id =" not in s)]


def _sets_cookie(response) -> bool:
    return any(h.startswith("aa_session=") for h in response.headers.getlist("Set-Cookie"))


def test_a_signed_in_request_reads_its_login_and_account_in_one_statement(team, datasets_dir):
    app, store = team
    alice = Browser(app.test_client(), login=("alice", PASSWORD))
    sid = alice.new_session()
    assert alice.upload(sid, datasets_dir / "iris.csv").status_code == 201
    with statements(store.engine) as seen:
        assert alice.get(f"/api/sessions/{sid}").status_code == 200
    assert len(_account_reads(seen)) == 1, seen
    with statements(store.engine) as seen:  # asking: the quota check takes the account the sign-in read
        r = alice.post(f"/api/sessions/{sid}/ask", json={"question": "how many rows"})
        assert r.status_code == 202
    assert len(_account_reads(seen)) == 1, seen
    alice.get(r.json["job"]["events"])  # the answer ends before the app closes


def test_the_login_check_still_refuses_a_removed_account_and_matches_names_as_before(team):
    app, store = team
    alice = Browser(app.test_client(), login=("Alice", PASSWORD))  # names are matched without regard to case
    assert alice.get("/api/me").json["user"] == "alice"
    store.remove("alice")
    assert alice.get("/api/me").status_code == 401


def test_an_unchanged_session_cookie_is_not_signed_again_on_every_request(team, monkeypatch):
    app, _ = team
    client = app.test_client()
    page = client.get("/login").get_data(as_text=True)
    csrf = re.search(r'name="csrf_token" value="([^"]+)"', page).group(1)
    login = client.post("/login", data={"name": "alice", "password": PASSWORD, "csrf_token": csrf})
    assert login.status_code == 302 and _sets_cookie(login)  # a changed session is sent at once
    for _ in range(3):
        r = client.get("/api/me")
        assert r.status_code == 200 and not _sets_cookie(r)
    monkeypatch.setattr(security, "RESIGN_SECONDS", 0.0)  # an old cookie is signed again (its expiry slides)
    r = client.get("/api/me")
    assert r.status_code == 200 and _sets_cookie(r)
    token = client.get("/api/state").json["csrf_token"]
    out = client.post("/logout", headers={"X-CSRF-Token": token}, json={})
    assert out.status_code == 200 and _sets_cookie(out)  # logging out clears it
    assert client.get("/api/me").status_code == 401


def _alice_with_iris(app, datasets_dir):
    """alice signed in with one conversation holding iris: her browser, its id, the service and the conversation."""
    alice = Browser(app.test_client(), login=("alice", PASSWORD))
    sid = alice.new_session()
    assert alice.upload(sid, datasets_dir / "iris.csv").status_code == 201
    service = app.extensions["auto_analyst"]
    return alice, sid, service, next(c for c in service.index.all() if c.id == sid)


def test_an_answered_question_stores_its_session_state_twice_not_four_times(team, datasets_dir):
    """The answer stores the state, then its after-answer memory does; the job's notes of activity afterwards (the
    ask's and the finished job's) find it unchanged and write nothing. A change they see is still stored."""
    app, store = team
    alice, sid, service, conv = _alice_with_iris(app, datasets_dir)
    with statements(store.engine) as seen:
        r = alice.post(f"/api/sessions/{sid}/ask", json={"question": "how many rows"})
        alice.get(r.json["job"]["events"])
        conv.jobs[r.json["job"]["id"]]._thread.join(30)  # its on_done (the note of activity) has run
        conv.session.settle()
    assert sum(s.startswith("UPDATE sessions SET state_json") for s in seen) == 2, seen
    conv.session.active = ""  # changed outside a question: the next note stores it
    with statements(store.engine) as seen:
        service.index.touch(conv)
    assert sum(s.startswith("UPDATE sessions SET state_json") for s in seen) == 1


def test_a_question_starts_one_thread_its_job(team, datasets_dir, monkeypatch):
    """A thread start waits for the new thread to get the GIL (milliseconds on a busy server): the job's deadline is
    kept by one shared thread and the usage is recorded by the job's own thread after its last event."""
    import threading

    app, store = team
    alice, sid, service, conv = _alice_with_iris(app, datasets_dir)

    def ask(question: str) -> None:
        r = alice.post(f"/api/sessions/{sid}/ask", json={"question": question})
        alice.get(r.json["job"]["events"])
        conv.jobs[r.json["job"]["id"]]._thread.join(30)  # usage recorded: its job thread has ended

    ask("how many rows")  # the first question starts the session's worker and its after-answer thread
    started: list[str] = []
    start = threading.Thread.start
    monkeypatch.setattr(threading.Thread, "start", lambda self: (started.append(self.name), start(self))[1])
    ask("how many rows")
    assert len(started) == 1 and started[0].startswith("aa-job-"), started
    assert sum(u.questions for u in store.usage("alice")) == 2


def test_the_events_ready_when_the_stream_reads_go_out_as_one_chunk():
    from auto_analyst.results import ProgressEvent
    from auto_analyst.web.jobs import Job

    def work(on_progress, cancel):
        for stage in ("planning", "coding", "running"):
            on_progress(ProgressEvent(stage=stage, message=stage))
        return {"answer": 42}

    job = Job("ask", work).start()
    assert job.wait(10)
    chunks = list(job.stream())
    assert len(chunks) == 1 and chunks[0].count("event: progress") == 3 and chunks[0].endswith('"answer": 42}\n\n')
    assert [line for line in chunks[0].splitlines() if line.startswith("id: ")] == ["id: 1", "id: 2", "id: 3", "id: 4"]
    assert list(job.stream(start=3)) == ['id: 4\nevent: result\ndata: {"answer": 42}\n\n']  # a reconnect resumes
