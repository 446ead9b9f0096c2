"""SQLite table of error-fix entries: the source of truth from which the Chroma index is (re)built.

Times are POSIX seconds (UTC). The connection runs in WAL mode with ``synchronous=NORMAL``: a process killed
mid-write loses at most the transaction it had not committed, never a committed one (an OS crash may lose the
last commits, which only costs remembered fixes). Callers serialise writes across processes with the file lock
of :class:`auto_analyst.memory.error_memory.ErrorMemory`; SQLite's own locking covers concurrent readers.
"""

from __future__ import annotations

import hashlib
import re
import sqlite3
import threading
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

__all__ = ["GLOBAL", "ErrorStore", "document_hash", "entry_id", "normalise_document"]

GLOBAL = "global"

_SCHEMA = """
CREATE TABLE IF NOT EXISTS entries (
    id TEXT PRIMARY KEY,
    scope TEXT NOT NULL,
    doc_hash TEXT NOT NULL,
    document TEXT NOT NULL,
    error_type TEXT NOT NULL,
    agent TEXT NOT NULL,
    agent_version TEXT NOT NULL,
    dataset_fingerprint TEXT NOT NULL,
    human INTEGER NOT NULL DEFAULT 0,
    created_at REAL NOT NULL,
    last_used_at REAL NOT NULL,
    use_count INTEGER NOT NULL DEFAULT 1,
    UNIQUE (scope, doc_hash)
);
CREATE INDEX IF NOT EXISTS entries_scope ON entries (scope, last_used_at);
CREATE INDEX IF NOT EXISTS entries_lru ON entries (last_used_at, use_count);
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
"""

COLUMNS = (
    "id", "scope", "doc_hash", "document", "error_type", "agent", "agent_version", "dataset_fingerprint",
    "human", "created_at", "last_used_at", "use_count",
)


def normalise_document(document: str) -> str:
    """Case-folded text with runs of whitespace collapsed: the form whose hash identifies an entry."""
    return re.sub(r"\s+", " ", document).strip().casefold()


def document_hash(document: str) -> str:
    """SHA-256 hex digest of :func:`normalise_document`."""
    return hashlib.sha256(normalise_document(document).encode("utf-8")).hexdigest()


def entry_id(scope: str, doc_hash: str) -> str:
    """Deterministic 16-hex-digit id of (scope, document hash), so a rebuilt index gets the same ids."""
    return hashlib.sha256(f"{scope}\0{doc_hash}".encode()).hexdigest()[:16]


class ErrorStore:
    """Thread-safe access to ``errors.sqlite3``; every method is one transaction.

    Args:
        path: the SQLite file (created with its schema when missing).

    Raises:
        sqlite3.DatabaseError: the file is not a usable SQLite database.
    """

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self._lock = threading.RLock()
        self._db = sqlite3.connect(str(self.path), timeout=30.0, check_same_thread=False, isolation_level=None)
        self._db.row_factory = sqlite3.Row
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=NORMAL")
        self._db.executescript(_SCHEMA)

    # -- meta ---------------------------------------------------------------------------------------------
    def meta(self, key: str, default: str | None = None) -> str | None:
        with self._lock:
            row = self._db.execute("SELECT value FROM meta WHERE key=?", (key,)).fetchone()
        return row[0] if row else default

    def generation(self) -> int:
        """Counter raised by every change of the Chroma index; a differing value means another process wrote."""
        return int(self.meta("generation", "0") or 0)

    # -- entries ------------------------------------------------------------------------------------------
    def upsert(self, row: dict[str, Any], now: float) -> tuple[dict[str, Any], bool]:
        """Insert ``row`` or, when its (scope, doc_hash) exists, raise that entry's use count.

        Marks the index dirty and raises the generation when a new row is inserted (the caller adds it to
        Chroma, then calls :meth:`mark_clean`).

        Returns:
            (the stored row, True when it was inserted).
        """
        with self._lock, self._tx():
            existing = self._db.execute("SELECT id FROM entries WHERE scope=? AND doc_hash=?", (row["scope"], row["doc_hash"])).fetchone()
            if existing:
                self._db.execute(
                    "UPDATE entries SET use_count=use_count+1, last_used_at=?, human=MAX(human, ?) WHERE id=?",
                    (now, int(row["human"]), existing[0]),
                )
                return self._get(existing[0]), False  # type: ignore[return-value]
            self._db.execute(
                f"INSERT INTO entries ({', '.join(COLUMNS)}) VALUES ({', '.join('?' * len(COLUMNS))})",
                [row[c] for c in COLUMNS],
            )
            self._bump()
            return self._get(row["id"]), True  # type: ignore[return-value]

    def get(self, id: str) -> dict[str, Any] | None:
        with self._lock:
            return self._get(id)

    def get_many(self, ids: list[str]) -> dict[str, dict[str, Any]]:
        with self._lock:
            out: dict[str, dict[str, Any]] = {}
            for chunk in _chunks(ids, 500):
                q = f"SELECT * FROM entries WHERE id IN ({','.join('?' * len(chunk))})"
                out.update({r["id"]: dict(r) for r in self._db.execute(q, chunk)})
            return out

    def select(self, scopes: list[str] | None = None) -> list[dict[str, Any]]:
        """Rows in the given scopes (all rows for None), most recently used first."""
        with self._lock:
            if scopes is None:
                rows = self._db.execute("SELECT * FROM entries ORDER BY last_used_at DESC, id")
            else:
                q = f"SELECT * FROM entries WHERE scope IN ({','.join('?' * len(scopes))}) ORDER BY last_used_at DESC, id"
                rows = self._db.execute(q, scopes)
            return [dict(r) for r in rows]

    def iter_all(self, batch: int = 1000) -> Iterator[list[dict[str, Any]]]:
        """All rows in batches of ``batch`` (for reindexing), ordered by id."""
        last = ""
        while True:
            with self._lock:
                rows = [dict(r) for r in self._db.execute("SELECT * FROM entries WHERE id > ? ORDER BY id LIMIT ?", (last, batch))]
            if not rows:
                return
            yield rows
            last = rows[-1]["id"]

    def count(self) -> int:
        with self._lock:
            return int(self._db.execute("SELECT COUNT(*) FROM entries").fetchone()[0])

    def touch(self, ids: list[str], now: float) -> None:
        """Raise the use count and last-used time of ``ids`` (unknown ids are ignored)."""
        with self._lock, self._tx():
            self._db.executemany("UPDATE entries SET use_count=use_count+1, last_used_at=? WHERE id=?", [(now, i) for i in ids])

    def delete(self, ids: Iterable[str]) -> list[str]:
        """Delete ``ids``; returns those that existed. Marks the index dirty when any did."""
        ids = list(ids)
        with self._lock, self._tx():
            gone: list[str] = []
            for chunk in _chunks(ids, 500):
                q = f"DELETE FROM entries WHERE id IN ({','.join('?' * len(chunk))}) RETURNING id"
                gone += [r[0] for r in self._db.execute(q, chunk).fetchall()]
            if gone:
                self._bump()
            return gone

    def ids_in_scope(self, scope: str) -> list[str]:
        with self._lock:
            return [r[0] for r in self._db.execute("SELECT id FROM entries WHERE scope=?", (scope,))]

    def prune_candidates(self, older_than: float, max_entries: int) -> list[str]:
        """Ids last used before ``older_than`` (POSIX s), plus the least recently used ones past ``max_entries``."""
        with self._lock:
            stale = [r[0] for r in self._db.execute("SELECT id FROM entries WHERE last_used_at < ?", (older_than,))]
            keep = self.count() - len(stale)
            extra: list[str] = []
            if keep > max_entries:
                q = "SELECT id FROM entries WHERE last_used_at >= ? ORDER BY last_used_at ASC, use_count ASC, id LIMIT ?"
                extra = [r[0] for r in self._db.execute(q, (older_than, keep - max_entries))]
            return stale + extra

    def mark_clean(self, *, rebuilt: bool = False) -> None:
        """Record that the Chroma index holds exactly the rows of this table.

        Args:
            rebuilt: the index was rebuilt; raise the generation so other processes reopen it.
        """
        with self._lock, self._tx():
            if rebuilt:
                self._bump()
            self._db.execute("INSERT OR REPLACE INTO meta(key, value) VALUES ('index_dirty', '0')")

    def close(self) -> None:
        with self._lock:
            self._db.close()

    # -- helpers ------------------------------------------------------------------------------------------
    def _get(self, id: str) -> dict[str, Any] | None:
        row = self._db.execute("SELECT * FROM entries WHERE id=?", (id,)).fetchone()
        return dict(row) if row else None

    def _bump(self) -> None:
        # Inside the caller's transaction: the row change, "dirty" and the new generation commit together, so
        # a crash before the Chroma write leaves a dirty flag that forces a rebuild at the next open.
        self._db.execute(
            "INSERT INTO meta(key, value) VALUES ('generation', '1') "
            "ON CONFLICT(key) DO UPDATE SET value = CAST(CAST(value AS INTEGER) + 1 AS TEXT)"
        )
        self._db.execute("INSERT OR REPLACE INTO meta(key, value) VALUES ('index_dirty', '1')")

    def _tx(self) -> _Transaction:
        return _Transaction(self._db)


class _Transaction:
    def __init__(self, db: sqlite3.Connection) -> None:
        self.db = db

    def __enter__(self) -> None:
        # IMMEDIATE takes the write lock up front, so two writers never deadlock upgrading a read lock.
        self.db.execute("BEGIN IMMEDIATE")

    def __exit__(self, exc_type: type[BaseException] | None, *_: object) -> None:
        self.db.execute("ROLLBACK" if exc_type else "COMMIT")


def _chunks(items: list[str], size: int) -> Iterator[list[str]]:
    for i in range(0, len(items), size):
        yield items[i : i + size]
