"""The history tables (turns, sessions, uploads and the full-text index of turns) and the records read from them.

The migrations run on the storage's database (:mod:`auto_analyst.storage`) when a
:class:`~auto_analyst.memory.users.history.History` opens it.
"""

from __future__ import annotations

from typing import NamedTuple

from pydantic import BaseModel

from auto_analyst.storage import Migrations, autoid, is_postgres

__all__ = ["migrations", "TurnRecord", "SessionInfo", "UploadRecord", "PG_DOCUMENT"]

migrations = Migrations("history")

PG_DOCUMENT = "to_tsvector('simple', question || ' ' || answer)"
"""The PostgreSQL text-search document of a turn (its GIN index and the search query must use the same text)."""


@migrations
def m001_turns(conn) -> None:
    conn.exec_driver_sql(
        f"""CREATE TABLE turns (
            {autoid(conn)},
            "user" TEXT NOT NULL, session TEXT NOT NULL, turn INTEGER NOT NULL, created_at TEXT NOT NULL,
            question TEXT NOT NULL, intent TEXT NOT NULL DEFAULT '', plan_json TEXT NOT NULL DEFAULT '[]',
            code TEXT NOT NULL DEFAULT '', result_summary TEXT NOT NULL DEFAULT '', answer TEXT NOT NULL DEFAULT '',
            model TEXT NOT NULL DEFAULT '', timings_json TEXT NOT NULL DEFAULT '{{}}',
            usage_json TEXT NOT NULL DEFAULT '{{}}', result_json TEXT NOT NULL DEFAULT '{{}}')"""
    )
    conn.exec_driver_sql('CREATE INDEX turns_user_session ON turns ("user", session, turn)')


@migrations
def m002_sessions(conn) -> None:
    conn.exec_driver_sql(
        """CREATE TABLE sessions (
            "user" TEXT NOT NULL, session TEXT NOT NULL, started_at TEXT NOT NULL, updated_at TEXT NOT NULL,
            title TEXT NOT NULL DEFAULT '', state_json TEXT, PRIMARY KEY ("user", session))"""
    )
    conn.exec_driver_sql(
        f"""CREATE TABLE uploads (
            {autoid(conn)}, "user" TEXT NOT NULL, session TEXT NOT NULL,
            path TEXT NOT NULL, name TEXT NOT NULL, created_at TEXT NOT NULL)"""
    )
    conn.exec_driver_sql('CREATE INDEX uploads_user_session ON uploads ("user", session)')


@migrations
def m003_turns_fts(conn) -> None:
    """Full-text index over question + answer: FTS5 on SQLite (skipped when this SQLite lacks it: search falls
    back to word counts), a GIN index over the ``simple`` text search configuration on PostgreSQL."""
    if is_postgres(conn):
        conn.exec_driver_sql(f"CREATE INDEX turns_fts ON turns USING GIN ({PG_DOCUMENT})")
        return
    from sqlalchemy.exc import OperationalError

    try:
        with conn.begin_nested():
            conn.exec_driver_sql(
                "CREATE VIRTUAL TABLE turns_fts USING fts5(question, answer, content='turns', content_rowid='id')")
    except OperationalError:
        return
    conn.exec_driver_sql(
        """CREATE TRIGGER turns_fts_ai AFTER INSERT ON turns BEGIN
            INSERT INTO turns_fts (rowid, question, answer) VALUES (new.id, new.question, new.answer); END"""
    )
    conn.exec_driver_sql(
        """CREATE TRIGGER turns_fts_ad AFTER DELETE ON turns BEGIN
            INSERT INTO turns_fts (turns_fts, rowid, question, answer)
            VALUES ('delete', old.id, old.question, old.answer); END"""
    )
    conn.exec_driver_sql("INSERT INTO turns_fts (turns_fts) VALUES ('rebuild')")


class TurnRecord(BaseModel):
    """One stored turn. ``*_json`` fields hold JSON text exactly as recorded."""

    id: int
    user: str
    session: str
    turn: int
    created_at: str
    question: str
    intent: str = ""
    plan_json: str = "[]"
    code: str = ""
    result_summary: str = ""
    answer: str = ""
    model: str = ""
    timings_json: str = "{}"
    usage_json: str = "{}"
    result_json: str = "{}"


class SessionInfo(NamedTuple):
    """A session of one user: its id, ISO start time, number of turns, title and uploaded table names."""

    session_id: str
    started: str
    n_turns: int
    title: str
    tables: list[str]


class UploadRecord(NamedTuple):
    """A stored row of a data file a user loaded into a session: its path on disk and one table name (the page's
    :class:`auto_analyst.saved_sessions.Upload` gathers the rows of one file)."""

    id: int
    session: str
    path: str
    name: str
    created_at: str

