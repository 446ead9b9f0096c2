"""The history database: every turn of every session, per user, in one SQLite file.

File: ``settings.home / "history.sqlite3"`` (WAL mode; shared with the entity and profile stores).
Every public method takes the user id first and only ever reads or changes that user's rows.
Each call opens its own short-lived connection, so one :class:`History` object may be shared by
threads, and several processes may use the same file.
"""

from __future__ import annotations

import json
import re
import sqlite3
from difflib import SequenceMatcher
from pathlib import Path
from typing import Any, NamedTuple

from pydantic import BaseModel

from auto_analyst.config import Settings
from auto_analyst.memory.migrations import Migrations, connect, to_iso, transaction

__all__ = ["History", "TurnRecord", "SessionInfo", "QuoteMatch", "Upload", "HISTORY_FILE", "MIN_PARTIAL_QUOTE_CHARS"]

HISTORY_FILE = "history.sqlite3"

MIN_PARTIAL_QUOTE_CHARS = 20
"""Shortest common run (characters, after normalising) accepted as a partial quote match.

Below about 20 characters a quoted fragment ("the mean is 4.2") matches many answers by chance."""

PARTIAL_SCAN_LIMIT = 2000
"""Most recent turns scanned for a partial (fuzzy) quote match; exact matches scan all turns."""

TITLE_CHARS = 80
"""A session's title is its first question cut to this many characters."""

migrations = Migrations("history")


@migrations
def m001_turns(conn: sqlite3.Connection) -> None:
    conn.execute(
        """CREATE TABLE turns (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            user TEXT NOT NULL, session TEXT NOT NULL, turn INTEGER NOT NULL, created_at TEXT NOT NULL,
            question TEXT NOT NULL, intent TEXT NOT NULL DEFAULT '', plan_json TEXT NOT NULL DEFAULT '[]',
            code TEXT NOT NULL DEFAULT '', result_summary TEXT NOT NULL DEFAULT '', answer TEXT NOT NULL DEFAULT '',
            model TEXT NOT NULL DEFAULT '', timings_json TEXT NOT NULL DEFAULT '{}',
            usage_json TEXT NOT NULL DEFAULT '{}', result_json TEXT NOT NULL DEFAULT '{}')"""
    )
    conn.execute("CREATE INDEX turns_user_session ON turns (user, session, turn)")


@migrations
def m002_sessions(conn: sqlite3.Connection) -> None:
    conn.execute(
        """CREATE TABLE sessions (
            user TEXT NOT NULL, session TEXT NOT NULL, started_at TEXT NOT NULL, updated_at TEXT NOT NULL,
            title TEXT NOT NULL DEFAULT '', state_json TEXT, PRIMARY KEY (user, session))"""
    )
    conn.execute(
        """CREATE TABLE uploads (
            id INTEGER PRIMARY KEY AUTOINCREMENT, user TEXT NOT NULL, session TEXT NOT NULL,
            path TEXT NOT NULL, name TEXT NOT NULL, created_at TEXT NOT NULL)"""
    )
    conn.execute("CREATE INDEX uploads_user_session ON uploads (user, session)")


@migrations
def m003_turns_fts(conn: sqlite3.Connection) -> None:
    """Full-text index over question + answer; skipped when this SQLite lacks FTS5 (search falls back)."""
    try:
        conn.execute("CREATE VIRTUAL TABLE turns_fts USING fts5(question, answer, content='turns', content_rowid='id')")
    except sqlite3.OperationalError:
        return
    conn.execute(
        """CREATE TRIGGER turns_fts_ai AFTER INSERT ON turns BEGIN
            INSERT INTO turns_fts (rowid, question, answer) VALUES (new.id, new.question, new.answer); END"""
    )
    conn.execute(
        """CREATE TRIGGER turns_fts_ad AFTER DELETE ON turns BEGIN
            INSERT INTO turns_fts (turns_fts, rowid, question, answer)
            VALUES ('delete', old.id, old.question, old.answer); END"""
    )
    conn.execute("INSERT INTO turns_fts (turns_fts) VALUES ('rebuild')")


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


class Upload(NamedTuple):
    """A data file a user loaded into a session: its path on disk and its table name."""

    id: int
    session: str
    path: str
    name: str
    created_at: str


class QuoteMatch(BaseModel):
    """The turn whose answer contains a quoted text, and its neighbours in the same session.

    Attributes:
        turn: the matching turn.
        context: up to 3 turns in order: the previous turn, ``turn``, the next turn.
        matched: the normalised text that matched (the whole quote, or the common run).
        exact: True when the whole normalised quote occurs in the answer.
    """

    turn: TurnRecord
    context: list[TurnRecord]
    matched: str
    exact: bool


def normalise(text: str) -> str:
    """Lower-case ``text``, drop Markdown emphasis and list bullets, and collapse all whitespace to single
    spaces (for quote matching: a user copies the answer as the page shows it, '**Total**: 5' as 'Total: 5')."""
    text = re.sub(r"\*\*|__|(?<!\w)[*_`](?!\s)|(?<!\s)[*_`](?!\w)", "", text)
    text = re.sub(r"(?m)^\s*[-*•]\s+", " ", text)
    return re.sub(r"\s+", " ", text).strip().lower()


def _clean_quote(text: str) -> str:
    lines = [re.sub(r"^\s*>\s?", "", line) for line in text.splitlines()]  # Markdown block quotes
    return normalise(" ".join(lines)).strip("\"'“”‘’`…. ")


def _as_json(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, default=str)


class History:
    """Per-user conversation history in SQLite.

    Args:
        settings: the file is ``settings.home / "history.sqlite3"``.
        path: use this file instead (tests, tools).
    """

    def __init__(self, settings: Settings | None = None, *, path: Path | None = None) -> None:
        if path is None:
            path = (settings or Settings.load()).home / HISTORY_FILE
        self.path = Path(path)
        migrations.apply(self.path)
        with self._read() as conn:
            self.has_fts = conn.execute("SELECT 1 FROM sqlite_master WHERE name = 'turns_fts'").fetchone() is not None

    def _read(self):
        return _Closing(connect(self.path))

    # -- writing -----------------------------------------------------------------------------------

    def record_turn(
        self, user: str, session: str, turn: int, question: str, intent: str = "", plan_json: Any = "[]",
        code: str = "", result_summary: str = "", answer: str = "", model: str = "", timings_json: Any = "{}",
        usage_json: Any = "{}", result_json: Any = "{}", *, at: Any = None,
    ) -> int:
        """Store one turn (committed before returning) and return its id.

        ``*_json`` arguments may be JSON text or any JSON-serialisable value (dumped here). ``at``
        (a datetime, default now) sets ``created_at``. The session row is created on first use,
        titled with its first question.
        """
        created = to_iso(at)
        with transaction(self.path) as conn:
            self._touch_session(conn, user, session, created, title=question.strip()[:TITLE_CHARS])
            cur = conn.execute(
                """INSERT INTO turns (user, session, turn, created_at, question, intent, plan_json, code,
                   result_summary, answer, model, timings_json, usage_json, result_json)
                   VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)""",
                (user, session, int(turn), created, question, intent, _as_json(plan_json), code, result_summary,
                 answer, model, _as_json(timings_json), _as_json(usage_json), _as_json(result_json)),
            )
            return int(cur.lastrowid)

    @staticmethod
    def _touch_session(conn: sqlite3.Connection, user: str, session: str, at: str, title: str = "") -> None:
        conn.execute(
            """INSERT INTO sessions (user, session, started_at, updated_at, title) VALUES (?, ?, ?, ?, ?)
               ON CONFLICT (user, session) DO UPDATE SET updated_at = MAX(sessions.updated_at, excluded.updated_at),
               title = CASE WHEN sessions.title = '' THEN excluded.title ELSE sessions.title END""",
            (user, session, at, at, title),
        )

    def save_session_state(self, user: str, session: str, state_json: Any) -> None:
        """Store the state ``chat --resume`` needs (table paths, short-term memory, result names)."""
        now = to_iso(None)
        with transaction(self.path) as conn:
            self._touch_session(conn, user, session, now)
            conn.execute("UPDATE sessions SET state_json = ? WHERE user = ? AND session = ?",
                         (_as_json(state_json), user, session))

    def record_upload(self, user: str, session: str, path: str | Path, name: str) -> int:
        """Remember that ``user`` loaded the file ``path`` as table ``name`` in ``session``; returns its id."""
        now = to_iso(None)
        with transaction(self.path) as conn:
            self._touch_session(conn, user, session, now)
            cur = conn.execute("INSERT INTO uploads (user, session, path, name, created_at) VALUES (?, ?, ?, ?, ?)",
                               (user, session, str(path), name, now))
            return int(cur.lastrowid)

    # -- reading -----------------------------------------------------------------------------------

    def turns(self, user: str, session: str | None = None, limit: int | None = None) -> list[TurnRecord]:
        """The user's turns, oldest first; with ``limit``, only the most recent ``limit`` of them."""
        sql, args = "SELECT * FROM turns WHERE user = ?", [user]
        if session is not None:
            sql += " AND session = ?"
            args.append(session)
        sql += " ORDER BY id DESC"
        if limit is not None:
            sql += " LIMIT ?"
            args.append(int(limit))
        with self._read() as conn:
            rows = conn.execute(sql, args).fetchall()
        return [TurnRecord(**dict(r)) for r in reversed(rows)]

    def get_turn(self, user: str, id: int) -> TurnRecord | None:
        """The turn ``id`` if it belongs to ``user``, else None."""
        with self._read() as conn:
            row = conn.execute("SELECT * FROM turns WHERE user = ? AND id = ?", (user, int(id))).fetchone()
        return TurnRecord(**dict(row)) if row else None

    def sessions(self, user: str) -> list[SessionInfo]:
        """The user's sessions, most recently active first."""
        with self._read() as conn:
            rows = conn.execute(
                """SELECT s.session, s.started_at, s.title, s.updated_at,
                          (SELECT COUNT(*) FROM turns t WHERE t.user = s.user AND t.session = s.session) AS n
                   FROM sessions s WHERE s.user = ? ORDER BY s.updated_at DESC, s.rowid DESC""",
                (user,),
            ).fetchall()
            uploads = conn.execute("SELECT session, name FROM uploads WHERE user = ? ORDER BY id", (user,)).fetchall()
        tables: dict[str, list[str]] = {}
        for u in uploads:
            names = tables.setdefault(u["session"], [])
            if u["name"] not in names:
                names.append(u["name"])
        return [SessionInfo(r["session"], r["started_at"], r["n"], r["title"], tables.get(r["session"], []))
                for r in rows]

    def last_session(self, user: str) -> SessionInfo | None:
        """The user's most recently active session, or None."""
        found = self.sessions(user)
        return found[0] if found else None

    def load_session_state(self, user: str, session: str) -> str | None:
        """The JSON text last saved by :meth:`save_session_state`, or None."""
        with self._read() as conn:
            row = conn.execute("SELECT state_json FROM sessions WHERE user = ? AND session = ?",
                               (user, session)).fetchone()
        return row["state_json"] if row else None

    def uploads(self, user: str, session: str | None = None) -> list[Upload]:
        """Files the user loaded (in ``session`` if given), oldest first."""
        sql, args = "SELECT id, session, path, name, created_at FROM uploads WHERE user = ?", [user]
        if session is not None:
            sql += " AND session = ?"
            args.append(session)
        with self._read() as conn:
            rows = conn.execute(sql + " ORDER BY id", args).fetchall()
        return [Upload(*tuple(r)) for r in rows]

    def search(self, user: str, text: str, k: int = 5) -> list[TurnRecord]:
        """The user's ``k`` turns whose question or answer best match the words of ``text``.

        Uses FTS5 with BM25 ranking when available, else counts distinct query words found
        (``LIKE``). Ties go to the more recent turn.
        """
        words = list(dict.fromkeys(w.lower() for w in re.findall(r"\w+", text) if len(w) > 1))
        if not words or k <= 0:
            return []
        with self._read() as conn:
            if self.has_fts:
                query = " OR ".join('"' + w.replace('"', '""') + '"' for w in words)
                rows = conn.execute(
                    """SELECT t.* FROM turns_fts JOIN turns t ON t.id = turns_fts.rowid
                       WHERE turns_fts MATCH ? AND t.user = ? ORDER BY bm25(turns_fts), t.id DESC LIMIT ?""",
                    (query, user, int(k)),
                ).fetchall()
            else:
                score = " + ".join("((question || ' ' || answer) LIKE ?)" for _ in words)
                rows = conn.execute(
                    f"SELECT *, ({score}) AS _score FROM turns WHERE user = ? AND ({score}) > 0 "
                    "ORDER BY _score DESC, id DESC LIMIT ?",
                    [f"%{w}%" for w in words] + [user] + [f"%{w}%" for w in words] + [int(k)],
                ).fetchall()
        return [TurnRecord(**{key: r[key] for key in TurnRecord.model_fields}) for r in rows]

    def find_quote(self, user: str, quoted_text: str, session: str | None = None) -> QuoteMatch | None:
        """Find the turn whose answer the user quoted, with its previous and next turn.

        Matching is case-insensitive on whitespace-normalised text (Markdown ``>`` markers and
        surrounding quote marks are removed). The whole quote found in an answer wins (most
        recent first); otherwise the answer sharing the longest common run of at least
        :data:`MIN_PARTIAL_QUOTE_CHARS` characters with the quote (ties: most recent).

        Returns:
            The match, or None when no answer matches (or the quote is empty).
        """
        quote = _clean_quote(quoted_text)
        if not quote:
            return None
        sql, args = "SELECT id, answer FROM turns WHERE user = ?", [user]
        if session is not None:
            sql += " AND session = ?"
            args.append(session)
        with self._read() as conn:
            rows = conn.execute(sql + " ORDER BY id DESC", args).fetchall()
        best: tuple[int, int, str] | None = None  # (run length, id, matched text)
        exact_id = next((r["id"] for r in rows if quote in normalise(r["answer"])), None)
        if exact_id is None and len(quote) >= MIN_PARTIAL_QUOTE_CHARS:
            for r in rows[:PARTIAL_SCAN_LIMIT]:
                answer = normalise(r["answer"])
                matcher = SequenceMatcher(None, quote, answer, autojunk=False)
                m = matcher.find_longest_match(0, len(quote), 0, len(answer))
                if m.size >= MIN_PARTIAL_QUOTE_CHARS and (best is None or m.size > best[0]):
                    best = (m.size, r["id"], quote[m.a:m.a + m.size])
        hit_id = exact_id if exact_id is not None else (best[1] if best else None)
        if hit_id is None:
            return None
        hit = self.get_turn(user, hit_id)
        assert hit is not None
        neighbours = self.turns(user, hit.session)
        i = next(j for j, t in enumerate(neighbours) if t.id == hit.id)
        return QuoteMatch(turn=hit, context=neighbours[max(i - 1, 0):i + 2],
                          matched=quote if exact_id is not None else best[2], exact=exact_id is not None)

    # -- forgetting --------------------------------------------------------------------------------

    def forget_turn(self, user: str, id: int) -> bool:
        """Delete the user's turn ``id``; True if it existed."""
        with transaction(self.path) as conn:
            return conn.execute("DELETE FROM turns WHERE user = ? AND id = ?", (user, int(id))).rowcount > 0

    def forget_session(self, user: str, session: str) -> int:
        """Delete a session: its turns, uploads records and saved state. Returns the turns deleted."""
        with transaction(self.path) as conn:
            n = conn.execute("DELETE FROM turns WHERE user = ? AND session = ?", (user, session)).rowcount
            conn.execute("DELETE FROM uploads WHERE user = ? AND session = ?", (user, session))
            conn.execute("DELETE FROM sessions WHERE user = ? AND session = ?", (user, session))
        return n

    def forget_user(self, user: str) -> int:
        """Delete everything this store holds about ``user``. Returns the turns deleted.

        Uploaded files on disk are not removed (only their records).
        """
        with transaction(self.path) as conn:
            n = conn.execute("DELETE FROM turns WHERE user = ?", (user,)).rowcount
            conn.execute("DELETE FROM uploads WHERE user = ?", (user,))
            conn.execute("DELETE FROM sessions WHERE user = ?", (user,))
        return n


class _Closing:
    """``with`` wrapper that closes a read-only connection (sqlite3's own ``with`` only commits)."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn = conn

    def __enter__(self) -> sqlite3.Connection:
        return self.conn

    def __exit__(self, *exc: object) -> None:
        self.conn.close()
