"""The storage: one Engine per process and URL, the same named migrations on SQLite and PostgreSQL,
old SQLite files open as they are, and every store on PostgreSQL when ``database_url`` says so."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from auto_analyst.config import Settings
from auto_analyst.memory.users.history import History
from auto_analyst.memory.users.history import migrations as history_migrations
from auto_analyst.memory.users.profile import ProfileStore
from auto_analyst.storage import Migrations, database_url, engine_for, transaction
from auto_analyst.storage.migrations import forget_applied
from tests.services import service_url


@pytest.fixture
def pg_url():
    url = service_url("database")
    engine = engine_for(url)
    with engine.begin() as conn:  # a clean schema per test
        conn.exec_driver_sql("DROP SCHEMA IF EXISTS public CASCADE")
        conn.exec_driver_sql("CREATE SCHEMA public")
    forget_applied()
    return url


def test_default_database_is_the_sqlite_file_under_home(settings) -> None:
    assert database_url(settings) == f"sqlite:///{settings.home.resolve() / 'history.sqlite3'}"
    assert database_url(settings.replace(database_url="postgresql://u@h/db")) == "postgresql+psycopg://u@h/db"


def test_one_engine_per_process_and_url(tmp_path: Path) -> None:
    a, b = History(path=tmp_path / "h.sqlite3"), ProfileStore(path=tmp_path / "h.sqlite3")
    assert a.engine is b.engine is engine_for(tmp_path / "h.sqlite3")
    assert engine_for(tmp_path / "other.sqlite3") is not a.engine


def test_writes_reuse_pooled_connections(tmp_path: Path) -> None:
    from sqlalchemy import event

    h = History(path=tmp_path / "h.sqlite3")
    opened = []
    event.listen(h.engine, "connect", lambda *a: opened.append(1))
    for t in range(20):
        h.record_turn("alice", "s", t, f"q{t}")
    assert len(h.turns("alice")) == 20
    assert len(opened) <= 1  # at most the first write opened a connection; the other 19 reused it


def test_a_write_takes_the_lock_at_its_start_and_a_read_is_one_snapshot(tmp_path: Path) -> None:
    from auto_analyst.storage import read

    engine = engine_for(tmp_path / "h.sqlite3")
    other = sqlite3.connect(tmp_path / "h.sqlite3", timeout=0, isolation_level=None)
    with transaction(engine) as conn:  # BEGIN IMMEDIATE: no other writer gets in, before any statement of ours
        assert conn.connection.dbapi_connection.in_transaction
        with pytest.raises(sqlite3.OperationalError, match="locked"):
            other.execute("BEGIN IMMEDIATE")
    other.execute("BEGIN IMMEDIATE")
    other.execute("ROLLBACK")
    with read(engine) as conn:
        assert conn.connection.dbapi_connection.in_transaction  # BEGIN: its statements read one snapshot
    other.close()


def test_a_stores_statements_are_built_once_per_sql_text(tmp_path: Path) -> None:
    from auto_analyst.storage import cached_text

    assert cached_text("SELECT 1 WHERE :x = 1") is cached_text("SELECT 1 WHERE :x = 1")
    h = History(path=tmp_path / "h.sqlite3")
    h.record_turn("alice", "s", 1, "q1", state_json={"turn": 1})
    before = cached_text.cache_info()
    h.record_turn("alice", "s", 2, "q2", state_json={"turn": 2})
    after = cached_text.cache_info()
    assert after.misses == before.misses and after.hits > before.hits  # the second turn built no clause
    assert h.load_session_state("alice", "s") == '{"turn": 2}'


def test_migrations_run_once_and_are_recorded(tmp_path: Path) -> None:
    m = Migrations("demo")

    @m
    def m001_items(conn):
        conn.exec_driver_sql("CREATE TABLE items (x INTEGER)")

    db = tmp_path / "d.sqlite3"
    assert m.apply(db) == ["demo:m001_items"]
    assert m.apply(db) == []
    with transaction(db) as conn:
        assert conn.exec_driver_sql("SELECT name FROM _migrations").scalars().all() == ["demo:m001_items"]


def test_a_database_of_the_previous_version_opens_with_its_rows(tmp_path: Path) -> None:
    """A history.sqlite3 written by the sqlite3-only stores (same tables, same _migrations names)."""
    db = tmp_path / "history.sqlite3"
    conn = sqlite3.connect(db)
    conn.executescript("""
        CREATE TABLE _migrations (name TEXT PRIMARY KEY, applied_at TEXT NOT NULL);
        CREATE TABLE turns (id INTEGER PRIMARY KEY AUTOINCREMENT, user TEXT NOT NULL, session TEXT NOT NULL,
            turn INTEGER NOT NULL, created_at TEXT NOT NULL, question TEXT NOT NULL, intent TEXT NOT NULL DEFAULT '',
            plan_json TEXT NOT NULL DEFAULT '[]', code TEXT NOT NULL DEFAULT '', result_summary TEXT NOT NULL DEFAULT '',
            answer TEXT NOT NULL DEFAULT '', model TEXT NOT NULL DEFAULT '', timings_json TEXT NOT NULL DEFAULT '{}',
            usage_json TEXT NOT NULL DEFAULT '{}', result_json TEXT NOT NULL DEFAULT '{}');
        CREATE TABLE sessions (user TEXT NOT NULL, session TEXT NOT NULL, started_at TEXT NOT NULL,
            updated_at TEXT NOT NULL, title TEXT NOT NULL DEFAULT '', state_json TEXT, PRIMARY KEY (user, session));
        CREATE TABLE uploads (id INTEGER PRIMARY KEY AUTOINCREMENT, user TEXT NOT NULL, session TEXT NOT NULL,
            path TEXT NOT NULL, name TEXT NOT NULL, created_at TEXT NOT NULL);
        CREATE TABLE profiles (user TEXT PRIMARY KEY, profile_json TEXT NOT NULL, updated_at TEXT NOT NULL);
        INSERT INTO _migrations VALUES ('history:m001_turns', 'x'), ('history:m002_sessions', 'x'),
            ('profiles:m001_profiles', 'x');
        INSERT INTO turns (user, session, turn, created_at, question, answer)
            VALUES ('alice', 's1', 1, '2024-01-01T00:00:00+00:00', 'old question', 'old answer about churn');
        INSERT INTO sessions VALUES ('alice', 's1', '2024-01-01T00:00:00+00:00', '2024-01-01T00:00:00+00:00', 'old', NULL);
        INSERT INTO profiles VALUES ('alice', '{"tone": "formal"}', '2024-01-01');
    """)
    conn.close()
    h = History(path=db)
    assert [(t.question, t.answer) for t in h.turns("alice")] == [("old question", "old answer about churn")]
    assert [t.question for t in h.search("alice", "churn")] == ["old question"]  # the FTS index was built now
    assert ProfileStore(path=db).get("alice").tone == "formal"
    h.record_turn("alice", "s1", 2, "new question")
    assert [t.turn for t in h.turns("alice", "s1")] == [1, 2]


@pytest.mark.services
def test_history_and_profiles_on_postgresql(pg_url: str, tmp_path: Path) -> None:
    settings = Settings.load({"home": tmp_path, "database_url": pg_url})
    h, p = History(settings), ProfileStore(settings)
    assert h.path is None and h.postgres
    first = h.record_turn("alice", "s1", 1, "mean churn by plan", answer="The mean churn is 0.26")
    h.record_turn("bob", "s1", 1, "bob's question", answer="churn for bob")
    h.record_turn("alice", "s1", 2, "total revenue", answer="Revenue is 100")
    h.record_upload("alice", "s1", "/data/a.csv", "a")
    h.save_session_state("alice", "s1", {"turn": 2})
    assert [t.turn for t in h.turns("alice")] == [1, 2]
    assert [t.id for t in h.search("alice", "churn")] == [first]  # bob's turn never
    assert h.find_quote("alice", "the mean churn is 0.26").turn.id == first
    info = h.sessions("alice")[0]
    assert (info.session_id, info.n_turns, info.tables) == ("s1", 2, ["a"])
    assert h.load_session_state("alice", "s1") == '{"turn": 2}'
    p.set("alice", tone="formal")
    assert (p.get("alice").tone, p.get("bob").tone) == ("formal", "neutral")
    assert h.forget_session("alice", "s1") == 2
    assert [t.question for t in h.turns("bob")] == ["bob's question"]
    assert history_migrations.apply(pg_url) == []
