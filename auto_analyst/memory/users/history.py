"""The history database: every turn of every session, per user.

Database: the storage's (:mod:`auto_analyst.storage`): by default the SQLite file
``settings.home / "history.sqlite3"`` (WAL; shared with the entity and profile stores), or
PostgreSQL with the setting ``database_url``. Every public method takes the user id first and
only ever reads or changes that user's rows. Each call borrows a pooled connection of the
process's one Engine, so one :class:`History` object may be shared by threads, and several
processes (and machines, on PostgreSQL) may use the same database.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any


from auto_analyst.config import Settings
from auto_analyst.memory.users.history_schema import PG_DOCUMENT, SessionInfo, TurnRecord, UploadRecord, migrations
from auto_analyst.memory.users.quotes import QuoteMatch, best_answer, clean_quote
from auto_analyst.storage import (DEFAULT_FILE, greatest, is_postgres, owner_present, read, sqlite_file,
                                  store_engine, to_iso, transaction)
from auto_analyst.storage import cached_text as text  # one clause per SQL text (see cached_text)

__all__ = ["History", "TurnRecord", "SessionInfo", "QuoteMatch", "UploadRecord", "HISTORY_FILE", "migrations"]

HISTORY_FILE = DEFAULT_FILE

TITLE_CHARS = 80
"""A session's title is its first question cut to this many characters."""


def _as_json(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, default=str)


class History:
    """Per-user conversation history in the storage's database.

    Args:
        settings: the database is ``database_url(settings)`` (the SQLite file
            ``settings.home / "history.sqlite3"`` unless ``database_url`` is set).
        path: use this SQLite file instead (tests, tools).
        url: use this database URL (or Engine) instead.
    """

    def __init__(self, settings: Settings | None = None, *, path: Path | None = None, url: Any = None) -> None:
        self.engine = store_engine(settings, path, url)
        self.path = sqlite_file(self.engine)
        self.postgres = is_postgres(self.engine)
        migrations.ensure(self.engine)
        if self.postgres:
            self.has_fts = True
        else:
            with read(self.engine) as conn:
                self.has_fts = conn.exec_driver_sql(
                    "SELECT 1 FROM sqlite_master WHERE name = 'turns_fts'").first() is not None

    def _rows(self, sql: str, args: dict[str, Any] | None = None) -> list[dict[str, Any]]:
        with read(self.engine) as conn:
            return [dict(r._mapping) for r in conn.execute(text(sql), args or {})]

    # -- writing -----------------------------------------------------------------------------------

    def record_turn(
        self, user: str, session: str, turn: int, question: str, intent: str = "", plan_json: Any = "[]",
        code: str = "", result_summary: str = "", answer: str = "", model: str = "", timings_json: Any = "{}",
        usage_json: Any = "{}", result_json: Any = "{}", *, at: Any = None, owner: str | None = None,
        state_json: Any = None,
    ) -> int:
        """Store one turn (committed before returning) and return its id; 0 (nothing stored) when ``owner`` (an
        account id) is given and the account ``user`` no longer has it (removed meanwhile; see ``storage.owners``).

        ``*_json`` arguments may be JSON text or any JSON-serialisable value (dumped here). ``at``
        (a datetime, default now) sets ``created_at``. The session row is created on first use,
        titled with its first question. ``state_json`` (when not None) is stored as the session's state, as
        :meth:`save_session_state` does, in the same transaction (an answered turn changes both).
        """
        created = to_iso(at)
        with transaction(self.engine) as conn:
            if not owner_present(conn, user, owner):
                return 0
            self._touch_session(conn, user, session, created, title=question.strip()[:TITLE_CHARS])
            row = conn.execute(
                text("""INSERT INTO turns ("user", session, turn, created_at, question, intent, plan_json, code,
                   result_summary, answer, model, timings_json, usage_json, result_json)
                   VALUES (:user, :session, :turn, :created, :question, :intent, :plan, :code, :summary, :answer,
                   :model, :timings, :usage, :result) RETURNING id"""),
                {"user": user, "session": session, "turn": int(turn), "created": created, "question": question,
                 "intent": intent, "plan": _as_json(plan_json), "code": code, "summary": result_summary,
                 "answer": answer, "model": model, "timings": _as_json(timings_json), "usage": _as_json(usage_json),
                 "result": _as_json(result_json)},
            ).first()
            if state_json is not None:
                self._set_state(conn, user, session, state_json)
            return int(row[0])

    @staticmethod
    def _touch_session(conn: Any, user: str, session: str, at: str, title: str = "") -> None:
        conn.execute(
            text(f"""INSERT INTO sessions ("user", session, started_at, updated_at, title)
               VALUES (:user, :session, :at, :at, :title)
               ON CONFLICT ("user", session) DO UPDATE SET
               updated_at = {greatest("sessions.updated_at", "excluded.updated_at")},
               title = CASE WHEN sessions.title = '' THEN excluded.title ELSE sessions.title END"""),
            {"user": user, "session": session, "at": at, "title": title},
        )

    def save_session_state(self, user: str, session: str, state_json: Any, *, owner: str | None = None) -> bool:
        """Store the state ``chat --resume`` needs (table paths, short-term memory, result names); False (nothing
        stored) when the account ``user`` no longer has the id ``owner`` (as in :meth:`record_turn`)."""
        now = to_iso(None)
        with transaction(self.engine) as conn:
            if not owner_present(conn, user, owner):
                return False
            self._touch_session(conn, user, session, now)
            self._set_state(conn, user, session, state_json)
        return True

    @staticmethod
    def _set_state(conn: Any, user: str, session: str, state_json: Any) -> None:
        conn.execute(text('UPDATE sessions SET state_json = :state WHERE "user" = :user AND session = :session'),
                     {"state": _as_json(state_json), "user": user, "session": session})

    def record_upload(self, user: str, session: str, path: str | Path, name: str, *, owner: str | None = None) -> int:
        """Remember that ``user`` loaded the file ``path`` as table ``name`` in ``session``; returns its id (0, nothing
        stored, when the account ``user`` no longer has the id ``owner``, as in :meth:`record_turn`)."""
        now = to_iso(None)
        with transaction(self.engine) as conn:
            if not owner_present(conn, user, owner):
                return 0
            self._touch_session(conn, user, session, now)
            row = conn.execute(
                text('INSERT INTO uploads ("user", session, path, name, created_at) '
                     "VALUES (:user, :session, :path, :name, :at) RETURNING id"),
                {"user": user, "session": session, "path": str(path), "name": name, "at": now}).first()
            return int(row[0])

    # -- reading -----------------------------------------------------------------------------------

    def turns(self, user: str, session: str | None = None, limit: int | None = None) -> list[TurnRecord]:
        """The user's turns, oldest first; with ``limit``, only the most recent ``limit`` of them."""
        sql, args = 'SELECT * FROM turns WHERE "user" = :user', {"user": user}
        if session is not None:
            sql += " AND session = :session"
            args["session"] = session
        sql += " ORDER BY id DESC"
        if limit is not None:
            sql += " LIMIT :limit"
            args["limit"] = int(limit)
        return [TurnRecord(**r) for r in reversed(self._rows(sql, args))]

    def get_turn(self, user: str, id: int) -> TurnRecord | None:
        """The turn ``id`` if it belongs to ``user``, else None."""
        rows = self._rows('SELECT * FROM turns WHERE "user" = :user AND id = :id', {"user": user, "id": int(id)})
        return TurnRecord(**rows[0]) if rows else None

    def sessions(self, user: str) -> list[SessionInfo]:
        """The user's sessions, most recently active first."""
        # SQLite's rowid breaks ties in creation order; PostgreSQL has none, the start time does it there.
        tie = "s.started_at DESC, s.session DESC" if self.postgres else "s.rowid DESC"
        rows = self._rows(
            f"""SELECT s.session, s.started_at, s.title, s.updated_at,
                      (SELECT COUNT(*) FROM turns t WHERE t."user" = s."user" AND t.session = s.session) AS n
               FROM sessions s WHERE s."user" = :user ORDER BY s.updated_at DESC, {tie}""", {"user": user})
        uploads = self._rows('SELECT session, name FROM uploads WHERE "user" = :user ORDER BY id', {"user": user})
        tables: dict[str, list[str]] = {}
        for u in uploads:
            names = tables.setdefault(u["session"], [])
            if u["name"] not in names:
                names.append(u["name"])
        return [SessionInfo(r["session"], r["started_at"], int(r["n"]), r["title"], tables.get(r["session"], []))
                for r in rows]

    def last_session(self, user: str) -> SessionInfo | None:
        """The user's most recently active session, or None."""
        found = self.sessions(user)
        return found[0] if found else None

    def session_version(self, user: str, session: str) -> tuple[str, int] | None:
        """(last update time, number of turns) of one session, or None: a cheap check whether another
        process changed it (the web app's processes compare it before using a cached conversation)."""
        rows = self._rows(
            """SELECT s.updated_at AS u, (SELECT COUNT(*) FROM turns t WHERE t."user" = s."user"
               AND t.session = s.session) AS n FROM sessions s WHERE s."user" = :user AND s.session = :session""",
            {"user": user, "session": session})
        return (rows[0]["u"], int(rows[0]["n"])) if rows else None

    def load_session_state(self, user: str, session: str) -> str | None:
        """The JSON text last saved by :meth:`save_session_state`, or None."""
        rows = self._rows('SELECT state_json FROM sessions WHERE "user" = :user AND session = :session',
                          {"user": user, "session": session})
        return rows[0]["state_json"] if rows else None

    def uploads(self, user: str, session: str | None = None) -> list[UploadRecord]:
        """Files the user loaded (in ``session`` if given), oldest first."""
        sql, args = 'SELECT id, session, path, name, created_at FROM uploads WHERE "user" = :user', {"user": user}
        if session is not None:
            sql += " AND session = :session"
            args["session"] = session
        return [UploadRecord(r["id"], r["session"], r["path"], r["name"], r["created_at"])
                for r in self._rows(sql + " ORDER BY id", args)]

    def search(self, user: str, text: str, k: int = 5) -> list[TurnRecord]:  # noqa: F811 - shadows sqlalchemy.text here only
        """The user's ``k`` turns whose question or answer best match the words of ``text``.

        Uses full-text ranking when available (SQLite FTS5 with BM25; PostgreSQL ``ts_rank`` over
        the ``simple`` configuration), else counts distinct query words found. Ties go to the more
        recent turn.
        """
        words = list(dict.fromkeys(w.lower() for w in re.findall(r"\w+", text) if len(w) > 1))
        if not words or k <= 0:
            return []
        if self.postgres:
            rows = self._rows(
                f"""SELECT t.*, ts_rank({PG_DOCUMENT}, q) AS _rank
                    FROM turns t, to_tsquery('simple', :q) q
                    WHERE t."user" = :user AND {PG_DOCUMENT} @@ q ORDER BY _rank DESC, t.id DESC LIMIT :k""",
                {"q": " | ".join("'" + w + "'" for w in words), "user": user, "k": int(k)})
        elif self.has_fts:
            rows = self._rows(
                """SELECT t.* FROM turns_fts JOIN turns t ON t.id = turns_fts.rowid
                   WHERE turns_fts MATCH :q AND t."user" = :user ORDER BY bm25(turns_fts), t.id DESC LIMIT :k""",
                {"q": " OR ".join('"' + w.replace('"', '""') + '"' for w in words), "user": user, "k": int(k)})
        else:
            hay = "lower(question || ' ' || answer)"
            score = " + ".join(f"(CASE WHEN {hay} LIKE :w{i} THEN 1 ELSE 0 END)" for i in range(len(words)))
            args: dict[str, Any] = {f"w{i}": f"%{w}%" for i, w in enumerate(words)} | {"user": user, "k": int(k)}
            rows = self._rows(f'SELECT *, ({score}) AS _score FROM turns WHERE "user" = :user AND ({score}) > 0 '
                              "ORDER BY _score DESC, id DESC LIMIT :k", args)
        return [TurnRecord(**{key: r[key] for key in TurnRecord.model_fields}) for r in rows]

    def find_quote(self, user: str, quoted_text: str, session: str | None = None) -> QuoteMatch | None:
        """Find the turn whose answer the user quoted, with its previous and next turn.

        Matching is case-insensitive on whitespace-normalised text (Markdown ``>`` markers and
        surrounding quote marks are removed); see :func:`~auto_analyst.memory.users.quotes.best_answer`.

        Returns:
            The match, or None when no answer matches (or the quote is empty).
        """
        quote = clean_quote(quoted_text)
        if not quote:
            return None
        sql, args = 'SELECT id, answer FROM turns WHERE "user" = :user', {"user": user}
        if session is not None:
            sql += " AND session = :session"
            args["session"] = session
        found = best_answer(quote, self._rows(sql + " ORDER BY id DESC", args))
        if found is None:
            return None
        hit_id, matched, exact = found
        hit = self.get_turn(user, hit_id)
        assert hit is not None
        neighbours = self.turns(user, hit.session)
        i = next(j for j, t in enumerate(neighbours) if t.id == hit.id)
        return QuoteMatch(turn=hit, context=neighbours[max(i - 1, 0):i + 2], matched=matched, exact=exact)

    # -- forgetting --------------------------------------------------------------------------------

    def forget_turn(self, user: str, id: int) -> bool:
        """Delete the user's turn ``id``; True if it existed."""
        with transaction(self.engine) as conn:
            return conn.execute(text('DELETE FROM turns WHERE "user" = :user AND id = :id'),
                                {"user": user, "id": int(id)}).rowcount > 0

    def forget_session(self, user: str, session: str) -> int:
        """Delete a session: its turns, uploads records and saved state. Returns the turns deleted."""
        args = {"user": user, "session": session}
        with transaction(self.engine) as conn:
            n = conn.execute(text('DELETE FROM turns WHERE "user" = :user AND session = :session'), args).rowcount
            conn.execute(text('DELETE FROM uploads WHERE "user" = :user AND session = :session'), args)
            conn.execute(text('DELETE FROM sessions WHERE "user" = :user AND session = :session'), args)
        return n

    def forget_user(self, user: str) -> int:
        """Delete everything this store holds about ``user``. Returns the turns deleted.

        Uploaded files on disk are not removed (only their records).
        """
        with transaction(self.engine) as conn:
            n = conn.execute(text('DELETE FROM turns WHERE "user" = :user'), {"user": user}).rowcount
            conn.execute(text('DELETE FROM uploads WHERE "user" = :user'), {"user": user})
            conn.execute(text('DELETE FROM sessions WHERE "user" = :user'), {"user": user})
        return n
