"""The sqlite3-style plumbing the entity store still uses (``memory/entities.py``): pooled connections and
named migrations on the storage's SQLite file.

The other stores moved onto :mod:`auto_analyst.storage` (SQLAlchemy, SQLite or PostgreSQL). This module
keeps the interface the entity store was written against (``conn.execute(sql, params)`` with ``?``
placeholders, rows as :class:`sqlite3.Row`), but its connections come from the process's one Engine
for the file (no new connection per write: issue #12 item 7), and its ``_migrations`` table is the
storage's. The entity store's move onto the storage proper belongs to the knowledge-graph work.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from auto_analyst.storage.engine import BUSY_TIMEOUT_MS, engine_for
from auto_analyst.storage.times import to_iso, utc_now

__all__ = ["Migrations", "connect", "transaction", "utc_now", "to_iso", "BUSY_TIMEOUT_MS"]

Migration = Callable[[Any], None]


class _Pooled:
    """A pooled SQLite connection with sqlite3's ``execute`` (rows as :class:`sqlite3.Row`); ``close`` returns it."""

    def __init__(self, raw: Any) -> None:
        self._raw = raw

    def execute(self, sql: str, params: Any = ()) -> sqlite3.Cursor:
        cur = self._raw.cursor()
        cur.row_factory = sqlite3.Row
        cur.execute(sql, params)
        return cur

    def executemany(self, sql: str, seq: Any) -> sqlite3.Cursor:
        cur = self._raw.cursor()
        cur.executemany(sql, seq)
        return cur

    def close(self) -> None:
        self._raw.close()


def connect(path: Path) -> sqlite3.Connection:
    """A new connection to ``path`` in WAL mode with a busy timeout; rows come back as :class:`sqlite3.Row`.

    For tools and tests that need a connection of their own (the stores use pooled ones).
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    conn = sqlite3.connect(str(path), timeout=BUSY_TIMEOUT_MS / 1000, isolation_level=None)
    conn.row_factory = sqlite3.Row
    conn.execute(f"PRAGMA busy_timeout={BUSY_TIMEOUT_MS}")
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute("PRAGMA synchronous=NORMAL")
    conn.execute("PRAGMA foreign_keys=ON")
    return conn


def pooled(path: Path) -> _Pooled:
    """A connection of the process's pool for ``path`` (call ``close()`` to give it back)."""
    return _Pooled(engine_for(Path(path)).raw_connection())


@contextmanager
def transaction(path: Path) -> Iterator[_Pooled]:
    """A pooled connection inside ``BEGIN IMMEDIATE`` … ``COMMIT`` (rolled back on error), given back afterwards."""
    conn = pooled(path)
    try:
        conn.execute("BEGIN IMMEDIATE")
        try:
            yield conn
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        conn.execute("COMMIT")
    finally:
        conn.close()


class Migrations:
    """An ordered, named list of schema migrations for one store (sqlite3-style connections).

    Example:
        >>> entity_migrations = Migrations("entities")
        >>> @entity_migrations
        ... def m001_initial(conn): conn.execute("CREATE TABLE t(x)")
    """

    def __init__(self, namespace: str) -> None:
        self.namespace = namespace
        self._items: list[Migration] = []

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

    def apply(self, path: Path) -> list[str]:
        """Run, in order, every migration not yet recorded in ``path``'s ``_migrations`` table.

        Each migration runs in its own transaction together with its ``_migrations`` row; ``BEGIN
        IMMEDIATE`` serialises processes applying at once.

        Returns:
            The qualified names applied by this call (empty when the schema was current).
        """
        applied: list[str] = []
        with transaction(path) as conn:
            conn.execute("CREATE TABLE IF NOT EXISTS _migrations (name TEXT PRIMARY KEY, applied_at TEXT NOT NULL)")
        for fn, name in zip(self._items, self.names):
            with transaction(path) as conn:
                if conn.execute("SELECT 1 FROM _migrations WHERE name = ?", (name,)).fetchone():
                    continue
                fn(conn)
                conn.execute("INSERT INTO _migrations (name, applied_at) VALUES (?, ?)", (name, to_iso(None)))
                applied.append(name)
        return applied
