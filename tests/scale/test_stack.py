"""The scaled-out stack end to end, on loopback: 2 web processes (gunicorn) and 2 queue workers on PostgreSQL,
Redis and a Chroma server; 20 concurrent users; one worker killed mid-run; one web process restarted.

Asserts: every committed turn is there, no user sees another's data, and no 5xx other than the reported
lost runs (those end as an ``error`` event of kind ``worker_lost`` or ``server_restarted``, never a 5xx).
"""

from __future__ import annotations

import os
import re
import secrets
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from tests.services import service_url

pytestmark = [pytest.mark.services, pytest.mark.timeout(280)]

USERS = 20
QUESTIONS = ("mean value by grp", "max value by grp")
LOST_KINDS = {"worker_lost", "server_restarted", "cancelled"}


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _children(pid: int) -> list[int]:
    out = subprocess.run(["pgrep", "-P", str(pid)], capture_output=True, text=True).stdout.split()
    return [int(p) for p in out]


@pytest.fixture
def stack(tmp_path):
    db, redis_url, chroma = service_url("database"), service_url("redis"), service_url("chroma")
    from sqlalchemy import create_engine

    name = "aa_it_" + secrets.token_hex(4)
    admin = create_engine(db.replace("postgresql://", "postgresql+psycopg://", 1), isolation_level="AUTOCOMMIT")
    with admin.connect() as conn:
        conn.exec_driver_sql(f"CREATE DATABASE {name}")
    import redis

    queue = redis_url.rstrip("/").rsplit("/", 1)[0] if redis_url.count("/") > 2 else redis_url.rstrip("/")
    queue += "/14"
    redis.Redis.from_url(queue).flushdb()
    port = _free_port()
    env = dict(os.environ, AUTO_ANALYST_HOME=str(tmp_path / "home"), AUTO_ANALYST_QUEUE_URL=queue,
               AUTO_ANALYST_DATABASE_URL=db.rsplit("/", 1)[0] + "/" + name, AUTO_ANALYST_CHROMA_URL=chroma,
               AUTO_ANALYST_WEB_TOKEN="stack-test-token")  # the loopback sign-in link's token, fixed for the users
    logs = open(tmp_path / "stack.log", "ab")
    cli = [sys.executable, "-m", "auto_analyst.cli"]
    workers = [subprocess.Popen(cli + ["worker", "--name", f"it-w{i}"], env=env, stdout=logs, stderr=logs)
               for i in (1, 2)]
    web = subprocess.Popen(cli + ["serve", "--processes", "2", "--port", str(port)], env=env, stdout=logs,
                           stderr=logs, start_new_session=True)
    import requests

    base = f"http://127.0.0.1:{port}"
    deadline = time.time() + 90
    while True:
        try:
            if requests.get(base + "/login", timeout=2).status_code == 200 and len(_children(web.pid)) == 2:
                break
        except requests.RequestException:
            pass
        assert web.poll() is None and time.time() < deadline, (tmp_path / "stack.log").read_text()[-3000:]
        time.sleep(0.3)
    yield {"base": base, "web": web, "workers": workers, "home": tmp_path / "home", "log": tmp_path / "stack.log"}
    os.killpg(web.pid, signal.SIGTERM)
    for p in workers:
        if p.poll() is None:
            p.terminate()
    for p in [web, *workers]:
        try:
            p.wait(timeout=40)
        except subprocess.TimeoutExpired:
            p.kill()
    admin.dispose()


class User:
    """One browser: its cookie, its conversation, its own table (values only it has), what it saw."""

    def __init__(self, base: str, index: int, folder: Path):
        import requests

        self.base, self.index, self.http = base, index, requests.Session()
        self.value = 1000 + 37 * index  # each user's table has its own numbers
        self.csv = folder / f"user{index}.csv"
        self.csv.write_text("grp,value\n" + "".join(f"{g},{self.value + k}\n" for k in range(6) for g in "ab"))
        self.statuses: list[tuple[str, int]] = []
        self.committed: list[str] = []  # questions whose answer came back
        self.lost: list[str] = []  # questions reported lost (worker_lost / server_restarted)
        self.sid = ""

    def call(self, method: str, path: str, **kw):
        for attempt in range(20):  # a web process restarting refuses or resets a connection: the page retries
            try:
                r = self.http.request(method, self.base + path, headers={"X-CSRF-Token": self.token}, timeout=60, **kw)
                break
            except Exception:  # noqa: BLE001 - connection reset by a restarting process
                time.sleep(0.5)
        else:
            raise AssertionError(f"{method} {path}: no answer after 20 tries")
        self.statuses.append((path, r.status_code))
        return r

    def run(self) -> None:
        self.token = "-"
        page = self.call("GET", "/?token=stack-test-token").text  # the link `serve` prints (no accounts)
        self.token = re.search(r'name="csrf-token" content="([^"]+)"', page).group(1)
        self.sid = self.call("POST", "/api/sessions", json={}).json()["session"]["id"]
        with self.csv.open("rb") as f:
            assert self.call("POST", f"/api/sessions/{self.sid}/uploads", files={"file": (self.csv.name, f)}).status_code == 201
        for q in QUESTIONS * 2:
            self.ask(q)

    def ask(self, question: str) -> None:
        r = self.call("POST", f"/api/sessions/{self.sid}/ask", json={"question": question})
        assert r.status_code == 202, r.text
        job = r.json()["job"]["id"]
        deadline = time.time() + 150
        while time.time() < deadline:
            st = self.call("GET", f"/api/sessions/{self.sid}/jobs/{job}")
            assert st.status_code == 200, st.text
            data = st.json()["job"]
            if data["finished"] and data["final"]:
                event, payload = data["final"]["event"], data["final"]["data"]
                # a result's own error.kind is one of ERROR_KINDS ('sandbox' for a lost worker); the run's own kind
                # is in its last attempt when the attempt was recorded
                err = ((payload.get("attempts") or [{}])[-1].get("error") or payload.get("error") or {}) \
                    if event == "result" else payload
                kind = err.get("kind")
                said = err.get("message", "") + " " + payload.get("answer", "")
                if kind == "sandbox" and re.search(r"worker\b.*\blost|lost\b.*\bworker|worker_lost", said, re.I):
                    kind = "worker_lost"
                if event == "result" and payload.get("status") == "ok":
                    self.committed.append(question)
                    expected = f"{self.value + 2.5}" if question.startswith("mean") else str(self.value + 5)
                    assert expected in payload["answer"], (self.index, question, payload["answer"])
                else:
                    assert kind in LOST_KINDS, payload
                    self.lost.append(question)
                return
            time.sleep(0.25)
        raise AssertionError(f"user {self.index}: {question!r} did not finish")


def test_twenty_users_two_web_processes_two_workers_one_killed_one_restarted(stack, tmp_path) -> None:
    users = [User(stack["base"], i, tmp_path) for i in range(USERS)]
    errors: list[BaseException] = []

    def go(u: User) -> None:
        try:
            u.run()
        except BaseException as exc:  # noqa: BLE001 - reported after the join
            errors.append(exc)

    threads = [threading.Thread(target=go, args=(u,)) for u in users]
    for t in threads:
        t.start()
    # once runs are flowing, kill one worker mid-run and restart one web process
    while sum(len(u.committed) for u in users) < 8 and any(t.is_alive() for t in threads):
        time.sleep(0.2)
    stack["workers"][0].send_signal(signal.SIGKILL)
    time.sleep(2)
    web_children = _children(stack["web"].pid)
    os.kill(web_children[0], signal.SIGTERM)  # gunicorn's master starts a new process in its place
    for t in threads:
        t.join(timeout=240)
    assert not errors, errors[:3]
    assert len(_children(stack["web"].pid)) == 2 and web_children[0] not in _children(stack["web"].pid)

    bad = [(p, s) for u in users for p, s in u.statuses if s >= 500]
    assert not bad, bad
    assert sum(len(u.committed) for u in users) >= USERS * len(QUESTIONS)  # most questions went through
    for u in users:
        conv = u.call("GET", f"/api/sessions/{u.sid}").json()["session"]
        answered = [r for r in conv["results"] if r["status"] == "ok"]
        # every committed turn is there, in the database, whichever process answers
        assert sorted(r["question"] for r in answered) == sorted(u.committed), (u.index, conv["results"])
        for r in answered:
            others = [o.value for o in users if o is not u and (f"{o.value + 2.5}" in r["answer"]
                                                                or str(o.value + 5) in r["answer"])]
            assert not others, (u.index, others, r["answer"])  # nobody sees another's data
        listed = u.call("GET", "/api/sessions").json()["sessions"]
        assert [c["id"] for c in listed] == [u.sid]
        other = users[(u.index + 1) % USERS]
        assert u.call("GET", f"/api/sessions/{other.sid}").status_code == 404
