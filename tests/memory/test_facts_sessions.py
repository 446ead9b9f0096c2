"""Facts across sessions and processes, with the embedded offline model: a new process answers "what did we find
about X" and a two-entity comparison with the earlier numbers and when they were found; users are isolated;
a table that is gone makes its facts stale; ``kill -9`` during writes loses nothing committed."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

from tests.helpers import REPO

ENV = {**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True", "PYTHONPATH": str(REPO)}


def customers(seed: int = 7, n: int = 600) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    plan = rng.choice(["Basic", "Standard", "Premium"], n, p=[0.4, 0.35, 0.25])
    p = np.where(plan == "Premium", 0.35, np.where(plan == "Basic", 0.12, 0.2))
    return pd.DataFrame({"customer_id": [f"C{i:04d}" for i in range(n)], "plan": plan,
                         "tenure_months": rng.integers(1, 72, n), "monthly_charges": rng.normal(70, 20, n).round(2),
                         "churned": np.where(rng.random(n) < p, "Yes", "No")})


def run_process(home: Path, script: str) -> dict:
    """Run ``script`` in a new Python process with AUTO_ANALYST_HOME=home; it prints one JSON line last."""
    out = subprocess.run([sys.executable, "-c", textwrap.dedent(script)], env={**ENV, "AUTO_ANALYST_HOME": str(home)},
                         capture_output=True, text=True, timeout=240, cwd=REPO)
    assert out.returncode == 0, out.stderr[-3000:]
    return json.loads(out.stdout.strip().splitlines()[-1])


ASK = """
import json, sys
from auto_analyst import Analyst
questions = json.loads(sys.argv[1]) if len(sys.argv) > 1 else QUESTIONS
out = []
with Analyst(user=USER) as a:
    for path, qs in questions:
        s = a.session()
        s.load(path)
        for q in qs:
            r = s.ask(q)
            out.append({"q": q, "status": r.status, "intent": r.trace.intent, "source": r.trace.source,
                        "answer": r.answer, "hits": [h.model_dump() for h in r.trace.memory_hits], "session": s.id})
print(json.dumps(out))
"""


def ask_in_new_process(home: Path, user: str, questions: list[tuple[str, list[str]]]) -> list[dict]:
    return run_process(home, f"USER = {user!r}\nQUESTIONS = {json.dumps(questions)}\n" + ASK)


def share(df: pd.DataFrame, plan: str) -> str:
    """The percentage of ``plan``'s customers who churned, as a fact shows it (4 decimals)."""
    from auto_analyst.memory.facts.model import format_number

    return format_number(float((df.loc[df.plan == plan, "churned"] == "Yes").mean() * 100))


@pytest.fixture(scope="module")
def remembered(tmp_path_factory):
    """Alice's first process: two sessions, one finding Premium's churn, the other Basic's."""
    home = tmp_path_factory.mktemp("home")
    data = tmp_path_factory.mktemp("data")
    df = customers()
    df.to_csv(data / "customers.csv", index=False)
    first = ask_in_new_process(home, "alice", [
        (str(data / "customers.csv"), ["what share of Premium customers churned?"]),
        (str(data / "customers.csv"), ["what share of Basic customers churned?", "mean monthly_charges by plan"])])
    assert [r["status"] for r in first] == ["ok", "ok", "ok"]
    return home, data, df, first


def test_a_new_process_answers_what_we_found_about_x(remembered) -> None:
    home, data, df, first = remembered
    reupload = data / "customers (1).csv"  # the same file uploaded again under another name
    reupload.write_bytes((data / "customers.csv").read_bytes())
    [r] = ask_in_new_process(home, "alice", [(str(reupload), ["What did we find about Premium?"])])
    assert (r["intent"], r["source"], r["status"]) == ("memory_query", "memory", "ok")
    premium = share(df, "Premium")
    charges = df.loc[df.plan == "Premium", "monthly_charges"].mean()
    assert f"share of churned for plan=Premium: {premium}%" in r["answer"] and f"{charges:.4f}" in r["answer"]
    assert f"session {first[0]['session']} turn 1" in r["answer"]  # when and where it was found
    assert time.strftime("%Y-%m-%d", time.gmtime()) in r["answer"]
    assert "STALE" not in r["answer"]  # the re-upload has the same content: the facts are current
    facts = [h for h in r["hits"] if h["kind"] == "fact"]
    assert facts and all("Premium" in h["detail"] for h in facts[:2])


def test_a_new_process_compares_two_earlier_findings(remembered) -> None:
    home, data, df, first = remembered
    [r] = ask_in_new_process(home, "alice", [(str(data / "customers.csv"),
                                              ["Is the churn we found earlier for Premium higher than for Basic?"])])
    assert (r["intent"], r["status"]) == ("memory_query", "ok")
    premium, basic = share(df, "Premium"), share(df, "Basic")
    assert float(premium) > float(basic)
    expected = f"share of churned for plan=Premium: {premium}% (turn 1 of session {first[0]['session']} on "
    assert expected in r["answer"]
    assert f"is higher than for plan=Basic: {basic}% (turn 1 of session {first[1]['session']} on " in r["answer"]


def test_the_planner_gets_relevant_facts_for_a_new_question(remembered) -> None:
    home, data, df, _ = remembered
    [r] = ask_in_new_process(home, "alice", [(str(data / "customers.csv"), ["mean tenure_months by plan"])])
    assert r["status"] == "ok" and r["source"] == "ran_code"
    details = [h["detail"] for h in r["hits"] if h["kind"] == "fact"]
    assert any(d.startswith("mean monthly_charges for plan=") for d in details)  # plan= reached through the groups


def test_users_never_see_each_others_facts(remembered) -> None:
    home, data, df, _ = remembered
    [r] = ask_in_new_process(home, "bob", [(str(data / "customers.csv"), ["What did we find about Premium?"])])
    assert share(df, "Premium") not in r["answer"]
    assert not [h for h in r["hits"] if h["kind"] == "fact"]
    from auto_analyst import Analyst, Settings

    with Analyst(settings=Settings.load({"home": home}), user="bob") as a:
        assert a.facts().list() == [] and a.facts().search("Premium") == []
        assert len(a.facts("alice").list()) >= 8


def test_facts_of_a_table_that_is_gone_are_stale(tmp_path) -> None:
    from auto_analyst import Analyst, Settings

    home = tmp_path / "home"
    path = tmp_path / "customers.csv"
    df = customers(seed=3)
    df.to_csv(path, index=False)
    settings = Settings.load({"home": home})
    with Analyst(settings=settings, user="carol") as a:
        s = a.session()
        s.load(path)
        assert s.ask("what share of Premium customers churned?").status == "ok"
        assert not any(f.stale for f in a.facts().list())
    path.unlink()
    other = tmp_path / "other.csv"
    customers(seed=4).to_csv(other, index=False)  # same columns, other rows: another fingerprint
    with Analyst(settings=settings, user="carol") as a:
        assert all(f.stale for f in a.facts().list())
        s = a.session()
        s.load(other)
        memory = s.ask("What did we find about Premium?")
        assert "STALE" in memory.answer and share(df, "Premium") in memory.answer
        analysis = s.ask("what share of Premium customers churned?")
        stale_ids = {f.id for f in a.facts().list() if f.stale}
        used = {h.id for h in analysis.trace.memory_hits if h.kind == "fact"}
        assert stale_ids and not used & stale_ids  # the planner is never given a stale fact as current


def test_cli_lists_searches_and_forgets_facts(remembered, monkeypatch) -> None:
    from auto_analyst.cli import cli

    home = remembered[0]
    monkeypatch.setenv("AUTO_ANALYST_HOME", str(home))
    runner = CliRunner()
    listed = runner.invoke(cli, ["--user", "alice", "memory", "facts", "list", "--json"])
    assert listed.exit_code == 0, listed.output
    facts = json.loads(listed.output)
    premium = [f for f in facts if f["subject"] == "plan=Premium" and f["kind"] == "share"]
    assert len(premium) == 1 and premium[0]["object"] == share(remembered[2], "Premium")
    found = runner.invoke(cli, ["--user", "alice", "memory", "facts", "search", "Premium"])
    assert found.exit_code == 0 and premium[0]["id"] in found.output
    assert runner.invoke(cli, ["--user", "bob", "memory", "facts", "forget", premium[0]["id"]]).exit_code == 2
    gone = runner.invoke(cli, ["--user", "alice", "memory", "facts", "forget", premium[0]["id"]])
    assert gone.exit_code == 0 and f"Forgot {premium[0]['id']}." in gone.output
    after = json.loads(runner.invoke(cli, ["--user", "alice", "memory", "facts", "list", "--json"]).output)
    assert len(after) == len(facts) - 1
    usage = runner.invoke(cli, ["--user", "alice", "memory", "facts", "forget"])
    assert usage.exit_code == 2 and "--all" in usage.output


def test_web_panel_lists_and_forgets_the_cookie_users_facts(tmp_path) -> None:
    from auto_analyst import Settings
    from auto_analyst.web import create_app

    settings = Settings.load({"home": tmp_path / "home"})
    app = create_app({"SETTINGS": settings, "TESTING": True, "SECRET_KEY": "k"})
    try:
        client = app.test_client()
        client.get("/?token=" + app.config["AUTH_TOKEN"])  # the link `serve` prints
        page = client.get("/")
        assert b'id="facts-panel"' in page.data and b"What I remember" in page.data
        token = client.get("/api/state").get_json()["csrf_token"]
        assert client.get("/api/facts").get_json() == {"ok": True, "facts": []}
        sid = client.post("/api/sessions", headers={"X-CSRF-Token": token}).get_json()["session"]["id"]
        service = app.extensions["auto_analyst"]
        with client.session_transaction() as cookie:
            user = cookie["uid"]
        conv = service.get(user, sid)
        conv.session.add_frame("customers", customers())
        assert conv.session.ask("what share of Basic customers churned?").status == "ok"
        listed = client.get("/api/facts").get_json()["facts"]
        df = customers()
        pct = round(float((df.loc[df.plan == "Basic", "churned"] == "Yes").mean() * 100), 2)  # the table shows 2 decimals
        assert f"share of rows for churned=Yes: {pct:g}% [where plan=Basic]" in [f["text"] for f in listed]
        other = app.test_client()
        other.get("/?token=" + app.config["AUTH_TOKEN"])
        assert other.get("/api/facts").get_json()["facts"] == []  # another browser, another user
        assert other.delete(f"/api/facts/{listed[0]['id']}",
                            headers={"X-CSRF-Token": other.get("/api/state").get_json()["csrf_token"]}).status_code == 404
        assert client.delete(f"/api/facts/{listed[0]['id']}", headers={"X-CSRF-Token": token}).status_code == 200
        assert len(client.get("/api/facts").get_json()["facts"]) == len(listed) - 1
    finally:
        app.extensions["auto_analyst"].close()


WRITER = """
import json, sys
from auto_analyst.config import Settings
from auto_analyst.memory.facts.graph import open_graph
from auto_analyst.memory.facts.model import Fact, Link
from auto_analyst.storage.times import to_iso
g = open_graph(Settings.load())
i = 0
while True:
    batch = [Fact(user="alice", session="w", turn=i, at=to_iso(None), question="q", kind="grouped",
                  subject=f"region=R{i % 50}", relation=f"mean x{k}", object=str(i), value=float(i), table="t",
                  fingerprint="fp", source="t",
                  links=[Link(entity=f"region=R{i % 50}", kind="value", role="subject"),
                         Link(entity="x", kind="column", role="measure")]).with_id() for k in range(20)]
    g.add_facts(batch)
    print(json.dumps([f.id for f in batch]), flush=True)
    i += 1
"""


def test_kill_9_during_writes_loses_nothing_committed(tmp_path) -> None:
    home = tmp_path / "home"
    proc = subprocess.Popen([sys.executable, "-c", WRITER], env={**ENV, "AUTO_ANALYST_HOME": str(home)},
                            stdout=subprocess.PIPE, text=True, cwd=REPO)
    committed: list[str] = []
    try:
        while len(committed) < 20 * 30:  # at least 30 committed batches, then kill it mid-write
            line = proc.stdout.readline()
            assert line, "the writer stopped on its own"
            committed += json.loads(line)
    finally:
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(10)
    from auto_analyst import Analyst, Settings

    db = home / "history.sqlite3"
    assert sqlite3.connect(db).execute("PRAGMA integrity_check").fetchone() == ("ok",)
    with Analyst(settings=Settings.load({"home": home}), user="alice") as a:
        stored = {f.id for f in a.facts().list(limit=None)}
    assert set(committed) <= stored
    assert len(stored) % 20 == 0  # batches are whole: a killed write left no half batch
