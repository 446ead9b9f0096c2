"""Named schema migrations that run once per database, the same list on SQLite and PostgreSQL.

Each store keeps its own ordered list. A migration is a function ``mNNN_description(conn)`` given
a SQLAlchemy Connection inside a transaction; once it has run, its qualified name
(``"<namespace>:<function name>"``) is written to the ``_migrations`` table and it never runs
again. New schema changes are new functions appended to the list: applied migrations are never
edited. The pattern follows simonw/llm (``llm/migrations.py``); the ``_migrations`` table is the
one earlier versions wrote, so their SQLite files open without a conversion.
"""

from __future__ import annotations

import zlib
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from auto_analyst.storage.dialect import is_postgres
from auto_analyst.storage.engine import engine_for, transaction
from auto_analyst.storage.times import to_iso

if TYPE_CHECKING:
    from sqlalchemy.engine import Connection

__all__ = ["Migrations", "forget_applied"]

_ALL: list[Migrations] = []

Migration = Callable[["Connection"], None]
_TABLE = "CREATE TABLE IF NOT EXISTS _migrations (name TEXT PRIMARY KEY, applied_at TEXT NOT NULL)"


def _serialise(conn: Connection, namespace: str) -> None:
    """Make concurrent appliers wait for each other (SQLite: BEGIN IMMEDIATE already does)."""
    if is_postgres(conn):
        key = zlib.crc32(f"auto_analyst:migrations:{namespace}".encode())
        conn.exec_driver_sql(f"SELECT pg_advisory_xact_lock({key})")


class Migrations:
    """An ordered, named list of schema migrations for one store.

    Example:
        >>> history_migrations = Migrations("history")
        >>> @history_migrations
        ... def m001_initial(conn): conn.exec_driver_sql("CREATE TABLE t(x INTEGER)")
    """

    def __init__(self, namespace: str) -> None:
        self.namespace = namespace
        self._items: list[Migration] = []
        self._done: set[str] = set()  # database URLs this process brought up to date
        _ALL.append(self)

    def __call__(self, fn: Migration) -> Migration:
        """Register ``fn`` as the next migration (decorator); returns ``fn`` unchanged."""
        if any(m.__name__ == fn.__name__ for m in self._items):
            raise ValueError(f"Duplicate migration name {fn.__name__!r} in {self.namespace!r}.")
        self._items.append(fn)
        return fn

    @property
    def names(self) -> list[str]:
        """The qualified names of all migrations, in order."""
        return [f"{self.namespace}:{m.__name__}" for m in self._items]

    def apply(self, target: Any) -> list[str]:
        """Run, in order, every migration not yet recorded in the database's ``_migrations`` table.

        Args:
            target: an Engine, a database URL, or a SQLite file Path.

        Each migration runs in its own transaction together with its ``_migrations`` row, so a
        crash never leaves a half-applied migration recorded. Safe from several processes at once
        (SQLite's ``BEGIN IMMEDIATE`` or a PostgreSQL advisory lock serialises them; the loser sees the row).

        Returns:
            The qualified names applied by this call (empty when the schema was current).
        """
        engine = engine_for(target)
        applied: list[str] = []
        with transaction(engine) as conn:
            _serialise(conn, "_migrations")
            conn.exec_driver_sql(_TABLE)
        for fn, name in zip(self._items, self.names):
            with transaction(engine) as conn:
                _serialise(conn, self.namespace)
                from sqlalchemy import text

                if conn.execute(text("SELECT 1 FROM _migrations WHERE name = :n"), {"n": name}).first():
                    continue
                fn(conn)
                conn.execute(text("INSERT INTO _migrations (name, applied_at) VALUES (:n, :t)"),
                             {"n": name, "t": to_iso(None)})
                applied.append(name)
        return applied

    def ensure(self, target: Any) -> None:
        """:meth:`apply` once per process and database (stores call this when they open)."""
        engine = engine_for(target)
        key = str(engine.url)
        if key not in self._done:
            self.apply(engine)
            self._done.add(key)


def forget_applied() -> None:
    """Make the next :meth:`Migrations.ensure` check the database again (after a test drops a schema)."""
    for m in _ALL:
        m._done.clear()
