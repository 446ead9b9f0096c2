"""SQLite plumbing shared by the conversation-memory stores: connections and named migrations.

Each store (history, entities, profiles) keeps its own ordered list of migrations. A migration
is a plain function ``mNNN_description(conn)``; once it has run, its qualified name
(``"<namespace>:<function name>"``) is written to the ``_migrations`` table and it never runs
again. New schema changes are new functions appended to the list: applied migrations are never
edited. The pattern follows the one used by simonw/llm (``llm/migrations.py``).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import datetime, timezone
from pathlib import Path

__all__ = ["Migrations", "connect", "transaction", "utc_now", "to_iso", "BUSY_TIMEOUT_MS"]

BUSY_TIMEOUT_MS = 10_000
"""How long a connection waits for another writer's lock before failing, in milliseconds.

Several processes (CLI, web app) may write the same file; with WAL, writers only wait on each
other and each transaction is a few rows, so 10 s is far above any expected wait."""

Migration = Callable[[sqlite3.Connection], None]


def utc_now() -> datetime:
    """The current time, timezone-aware UTC."""
    return datetime.now(timezone.utc)


def to_iso(at: datetime | None) -> str:
    """``at`` (default now) as an ISO-8601 UTC string; naive datetimes are taken to be UTC."""
    at = at or utc_now()
    if at.tzinfo is None:
        at = at.replace(tzinfo=timezone.utc)
    return at.astimezone(timezone.utc).isoformat(timespec="microseconds")


def connect(path: Path) -> sqlite3.Connection:
    """Open ``path`` in WAL mode with a busy timeout; rows come back as :class:`sqlite3.Row`.

    WAL lets readers run while one process writes, and a committed transaction survives the
    writer process being killed (``synchronous=NORMAL`` only risks the last commits on a power
    loss, not on a process crash).
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    conn = sqlite3.connect(str(path), timeout=BUSY_TIMEOUT_MS / 1000, isolation_level=None)
    conn.row_factory = sqlite3.Row
    conn.execute(f"PRAGMA busy_timeout={BUSY_TIMEOUT_MS}")
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute("PRAGMA synchronous=NORMAL")
    conn.execute("PRAGMA foreign_keys=ON")
    return conn


@contextmanager
def transaction(path: Path) -> Iterator[sqlite3.Connection]:
    """A connection inside ``BEGIN IMMEDIATE`` … ``COMMIT`` (rolled back on error), closed afterwards."""
    conn = connect(path)
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
    """An ordered, named list of schema migrations for one store.

    Example:
        >>> history_migrations = Migrations("history")
        >>> @history_migrations
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

        Each migration runs in its own transaction together with its ``_migrations`` row, so a
        crash never leaves a half-applied migration recorded. Safe to call from several
        processes at once (``BEGIN IMMEDIATE`` serialises them; the loser sees the row).

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
