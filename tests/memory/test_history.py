"""History database: durability across processes and kill -9, user isolation, quotes, search, forgetting."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import textwrap
from datetime import datetime, timezone
from pathlib import Path

import pytest

from auto_analyst.cli.context import CliContext
from auto_analyst.memory.users.history import History, migrations

T0 = datetime(2024, 5, 1, 9, 0, tzinfo=timezone.utc)


def _run(code: str, *args: str) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-c", textwrap.dedent(code), *args], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)


@pytest.fixture
def db(tmp_path: Path) -> Path:
    return tmp_path / "history.sqlite3"


def test_schema_migrations_are_recorded_once(db: Path) -> None:
    History(path=db)
    assert migrations.apply(db) == []
    conn = sqlite3.connect(db)
    names = [r[0] for r in conn.execute("SELECT name FROM _migrations WHERE name LIKE 'history:%' ORDER BY name")]
    mode = conn.execute("PRAGMA journal_mode").fetchone()[0]
    conn.close()
    assert names == ["history:m001_turns", "history:m002_sessions", "history:m003_turns_fts"]
    assert mode == "wal"


def test_default_path_is_under_settings_home(settings) -> None:
    assert History(settings).path == settings.home / "history.sqlite3"


def test_turns_survive_reopen_in_a_new_process(db: Path) -> None:
    writer = _run(
        """
        import sys
        from pathlib import Path
        from auto_analyst.memory.users.history import History
        h = History(path=Path(sys.argv[1]))
        for t in (1, 2):
            h.record_turn("alice", "s1", t, f"question {t}", intent="analysis", answer=f"answer {t}",
                          plan_json=[{"agent": "statistics"}], usage_json={"lm_calls": t})
        """,
        str(db),
    )
    assert writer.wait(timeout=30) == 0, writer.stderr.read()
    reader = _run(
        """
        import json, sys
        from pathlib import Path
        from auto_analyst.memory.users.history import History
        print(json.dumps([t.model_dump() for t in History(path=Path(sys.argv[1])).turns("alice")]))
        """,
        str(db),
    )
    out, err = reader.communicate(timeout=30)
    assert reader.returncode == 0, err
    rows = json.loads(out)
    assert [(r["turn"], r["question"], r["answer"]) for r in rows] == [(1, "question 1", "answer 1"), (2, "question 2", "answer 2")]
    assert rows[0]["plan_json"] == '[{"agent": "statistics"}]'
    assert rows[1]["usage_json"] == '{"lm_calls": 2}'


def test_kill_9_between_turns_and_mid_transaction_loses_nothing_committed(db: Path) -> None:
    writer = _run(
        """
        import sys, time
        from pathlib import Path
        from auto_analyst.memory.users.history import History
        import sqlite3
        h = History(path=Path(sys.argv[1]))
        for t in (1, 2, 3):
            h.record_turn("alice", "s1", t, f"question {t}", answer=f"answer {t}")
            print(f"committed {t}", flush=True)
        conn = sqlite3.connect(str(h.path), timeout=10, isolation_level=None)
        conn.execute("BEGIN IMMEDIATE")
        conn.execute("INSERT INTO turns (user, session, turn, created_at, question) VALUES ('alice', 's1', 4, 'x', 'lost')")
        print("in transaction", flush=True)
        time.sleep(60)
        """,
        str(db),
    )
    lines = [writer.stdout.readline().strip() for _ in range(4)]
    assert lines == ["committed 1", "committed 2", "committed 3", "in transaction"], writer.stderr.read()
    os.kill(writer.pid, signal.SIGKILL)
    writer.wait(timeout=10)
    h = History(path=db)
    assert [t.turn for t in h.turns("alice")] == [1, 2, 3]
    conn = sqlite3.connect(db)
    assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    conn.close()
    new_id = h.record_turn("alice", "s1", 4, "question 4")  # the killed writer's lock is gone
    assert h.get_turn("alice", new_id).question == "question 4"


def test_two_users_interleaved_see_only_their_own_rows(db: Path) -> None:
    h = History(path=db)
    ids = {}
    for t in (1, 2, 3):
        ids[("alice", t)] = h.record_turn("alice", "shared-id", t, f"alice q{t}", answer=f"alice a{t} about churn")
        ids[("bob", t)] = h.record_turn("bob", "shared-id", t, f"bob q{t}", answer=f"bob a{t} about churn")
    h.record_upload("alice", "shared-id", "/data/a.csv", "sales")
    h.save_session_state("bob", "shared-id", {"tables": {"hr": "/data/hr.csv"}})
    assert [t.question for t in h.turns("alice")] == ["alice q1", "alice q2", "alice q3"]
    assert [t.question for t in h.turns("bob", session="shared-id", limit=2)] == ["bob q2", "bob q3"]
    assert h.get_turn("alice", ids[("bob", 1)]) is None
    assert {t.user for t in h.search("alice", "churn", k=10)} == {"alice"}
    assert h.find_quote("alice", "bob a2 about churn") is None
    assert h.forget_turn("alice", ids[("bob", 2)]) is False
    assert h.sessions("alice")[0].tables == ["sales"]
    assert h.sessions("bob")[0].tables == []
    assert h.load_session_state("alice", "shared-id") is None
    assert json.loads(h.load_session_state("bob", "shared-id")) == {"tables": {"hr": "/data/hr.csv"}}
    assert h.uploads("bob") == []
    assert h.forget_user("alice") == 3
    assert len(h.turns("bob")) == 3


ANSWERS = [
    "The dataset has 7043 customers and 21 columns.",
    "Churn is 26.5% overall.\nCustomers on month-to-month contracts churn at 42.7%, far above two-year contracts.",
    "Median tenure is 29 months.",
    "A logistic regression gives an AUC of 0.84 on the test split.",
]


def _session(h: History, user: str = "alice", session: str = "s1") -> list[int]:
    return [h.record_turn(user, session, i + 1, f"q{i + 1}", answer=a) for i, a in enumerate(ANSWERS)]


def test_find_quote_exact_returns_turn_and_neighbours(db: Path) -> None:
    h = History(path=db)
    ids = _session(h)
    m = h.find_quote("alice", '> customers on MONTH-to-month contracts\n>   churn at 42.7%')
    assert m is not None and m.exact
    assert m.turn.id == ids[1]
    assert [t.id for t in m.context] == ids[0:3]
    assert m.matched == "customers on month-to-month contracts churn at 42.7%"


def test_find_quote_partial_and_edges(db: Path) -> None:
    h = History(path=db)
    ids = _session(h)
    _session(h, session="s2")  # the same answers later in another session
    # Misquoted ending: the common run "a logistic regression gives an auc of 0.8" is >= 20 characters.
    m = h.find_quote("alice", "A logistic regression gives an AUC of 0.9 right?", session="s1")
    assert m is not None and not m.exact
    assert m.turn.id == ids[3]
    assert [t.id for t in m.context] == ids[2:4]  # last turn: no next neighbour
    assert m.matched == "a logistic regression gives an auc of 0."
    first = h.find_quote("alice", "The dataset has 7043 customers", session="s1")
    assert [t.id for t in first.context] == ids[0:2]  # first turn: no previous neighbour
    latest = h.find_quote("alice", "The dataset has 7043 customers")
    assert latest.turn.session == "s2"  # most recent match wins without a session filter
    assert h.find_quote("alice", "contracts churn at 99%") is None  # short and not exact
    assert h.find_quote("alice", "   ") is None


def test_search_sessions_and_forgetting(db: Path) -> None:
    h = History(path=db)
    ids = _session(h)
    h.record_turn("alice", "s2", 1, "Which region sells most?", answer="The North region sells most.", at=T0)
    h.record_upload("alice", "s1", "/tmp/telco.csv", "telco")
    h.record_upload("alice", "s1", "/tmp/telco.csv", "telco")
    assert [t.id for t in h.search("alice", "logistic regression AUC", k=2)][0] == ids[3]
    assert [t.question for t in h.search("alice", "region", k=5)] == ["Which region sells most?"]
    assert h.search("alice", "", k=5) == []
    sessions = h.sessions("alice")
    assert [(s.session_id, s.n_turns, s.title, s.tables) for s in sessions] == [
        ("s1", 4, "q1", ["telco"]), ("s2", 1, "Which region sells most?", [])]
    assert h.last_session("alice").session_id == "s1"
    assert h.last_session("nobody") is None
    assert h.forget_turn("alice", ids[0]) is True
    assert h.search("alice", "7043", k=5) == []  # the full-text index forgets too
    assert h.forget_session("alice", "s1") == 3
    assert [s.session_id for s in h.sessions("alice")] == ["s2"]
    assert h.uploads("alice") == []


def test_search_without_fts_falls_back_to_word_overlap(db: Path) -> None:
    h = History(path=db)
    ids = _session(h)
    h.has_fts = False
    assert [t.id for t in h.search("alice", "median tenure month", k=2)] == [ids[2], ids[1]]
    assert h.search("bob", "median", k=2) == []


def test_history_cli_list_show_forget(settings) -> None:
    from unittest.mock import patch

    from click.testing import CliRunner

    from auto_analyst.cli.history import history

    h = History(settings)
    ids = _session(h)
    h.record_turn("bob", "b1", 1, "bob's question", answer="bob's answer")
    run = CliRunner().invoke
    obj = CliContext(settings, "alice")
    out = run(history, ["list", "--json"], obj=obj)
    assert out.exit_code == 0, out.output
    assert [(r["id"], r["question"]) for r in json.loads(out.output)] == [(i, f"q{n}") for n, i in enumerate(ids, 1)]
    out = run(history, ["list", "--session", "s1", "--limit", "1"], obj=obj)
    assert out.exit_code == 0 and out.output.count("\n") == 1 and out.output.rstrip().endswith("s1#4  q4")
    out = run(history, ["show", str(ids[1])], obj=obj)
    assert out.exit_code == 0 and "Churn is 26.5% overall." in out.output
    bob_id = h.turns("bob")[0].id
    assert run(history, ["show", str(bob_id)], obj=obj).exit_code == 2  # another user's turn is invisible
    assert run(history, ["forget"], obj=obj).exit_code == 2
    assert run(history, ["forget", str(ids[0]), "--all"], obj=obj).exit_code == 2
    out = run(history, ["forget", str(ids[0])], obj=obj)
    assert out.exit_code == 0 and out.output == f"Forgot turn {ids[0]}.\n"
    out = run(history, ["sessions", "--json"], obj=obj)
    assert [(s["session_id"], s["n_turns"]) for s in json.loads(out.output)] == [("s1", 3)]
    assert run(history, ["forget", "--all"], obj=obj, input="y\n").exit_code == 2  # no terminal: pass --yes
    with patch("auto_analyst.cli.confirm.stdin_is_terminal", return_value=True):
        assert run(history, ["forget", "--all"], obj=obj, input="n\n").exit_code == 1  # declined: aborted
    out = run(history, ["forget", "--all", "--yes"], obj=obj)
    assert out.exit_code == 0 and out.output == "Forgot all history (3 turns).\n"
    assert run(history, ["list"], obj=obj).output == "No history.\n"
    assert len(h.turns("bob")) == 1


def test_cli_without_obj_uses_settings_load_and_login_name(settings) -> None:
    import getpass

    from click.testing import CliRunner

    from auto_analyst.cli.history import history

    History(settings).record_turn(getpass.getuser(), "s1", 1, "my own question")  # settings.home == $AUTO_ANALYST_HOME
    out = CliRunner().invoke(history, ["list", "--json"])
    assert out.exit_code == 0, out.output
    assert [r["question"] for r in json.loads(out.output)] == ["my own question"]
