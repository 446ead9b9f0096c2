"""The table of error-fix entries: the source of truth from which the Chroma index is (re)built.

The entries live in the storage's database (tables ``error_entries`` and ``error_meta``; SQLite by
default, PostgreSQL with ``database_url``). Times are POSIX seconds (UTC). A process killed
mid-write loses at most the transaction it had not committed, never a committed one. Callers
serialise index writes across processes with the lock of
:class:`auto_analyst.memory.errorfix.memory.ErrorMemory`; the database's own locking covers readers.

Earlier versions kept the entries in their own file, ``error_memory/errors.sqlite3``; its rows are
imported once, the first time the store opens (:meth:`ErrorStore.import_legacy`).
"""

from __future__ import annotations

import hashlib
import re
import sqlite3
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any


from auto_analyst.storage import Migrations, engine_for, greatest, read, real, transaction
from auto_analyst.storage import cached_text as text  # one clause per SQL text (see cached_text)

__all__ = ["GLOBAL", "ErrorStore", "document_hash", "entry_id", "normalise_document", "migrations"]

GLOBAL = "global"

migrations = Migrations("errors")


@migrations
def m001_entries(conn) -> None:
    conn.exec_driver_sql(f"""CREATE TABLE error_entries (
        id TEXT PRIMARY KEY, scope TEXT NOT NULL, doc_hash TEXT NOT NULL, document TEXT NOT NULL,
        error_type TEXT NOT NULL, agent TEXT NOT NULL, agent_version TEXT NOT NULL,
        dataset_fingerprint TEXT NOT NULL, human INTEGER NOT NULL DEFAULT 0, created_at {real(conn)} NOT NULL,
        last_used_at {real(conn)} NOT NULL, use_count INTEGER NOT NULL DEFAULT 1, UNIQUE (scope, doc_hash))""")
    conn.exec_driver_sql("CREATE INDEX error_entries_scope ON error_entries (scope, last_used_at)")
    conn.exec_driver_sql("CREATE INDEX error_entries_lru ON error_entries (last_used_at, use_count)")
    conn.exec_driver_sql("CREATE TABLE error_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)")

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
    """Access to the error-fix entries; every method is one transaction, safe from any thread.

    Args:
        target: the database (an Engine, a URL, or a SQLite file Path).
        legacy_path: an ``errors.sqlite3`` of an earlier version whose rows are imported once.

    Raises:
        sqlalchemy.exc.DatabaseError: the database cannot be used.
        sqlite3.DatabaseError: ``legacy_path`` exists but is not a usable SQLite database.
    """

    def __init__(self, target: Any, legacy_path: Path | None = None) -> None:
        self.engine = engine_for(target)
        migrations.ensure(self.engine)
        if legacy_path is not None and Path(legacy_path).is_file():
            self.import_legacy(Path(legacy_path))

    # -- meta ---------------------------------------------------------------------------------------------
    def meta(self, key: str, default: str | None = None) -> str | None:
        with read(self.engine) as conn:
            row = conn.execute(text("SELECT value FROM error_meta WHERE key = :k"), {"k": key}).first()
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
        with transaction(self.engine) as conn:
            existing = conn.execute(text("SELECT id FROM error_entries WHERE scope = :s AND doc_hash = :h"),
                                    {"s": row["scope"], "h": row["doc_hash"]}).first()
            if existing:
                conn.execute(text(f"UPDATE error_entries SET use_count = use_count + 1, last_used_at = :now, "
                                  f"human = {greatest('human', ':human')} WHERE id = :id"),
                             {"now": now, "human": int(row["human"]), "id": existing[0]})
                return _get(conn, existing[0]), False  # type: ignore[return-value]
            conn.execute(text(f"INSERT INTO error_entries ({', '.join(COLUMNS)}) "
                              f"VALUES ({', '.join(':' + c for c in COLUMNS)})"), {c: row[c] for c in COLUMNS})
            _bump(conn)
            return _get(conn, row["id"]), True  # type: ignore[return-value]

    def get(self, id: str) -> dict[str, Any] | None:
        with read(self.engine) as conn:
            return _get(conn, id)

    def get_many(self, ids: list[str]) -> dict[str, dict[str, Any]]:
        out: dict[str, dict[str, Any]] = {}
        with read(self.engine) as conn:
            for chunk in _chunks(ids, 500):
                out.update({r["id"]: r for r in _select(conn, "WHERE id IN :ids", {"ids": chunk}, expand=True)})
        return out

    def select(self, scopes: list[str] | None = None) -> list[dict[str, Any]]:
        """Rows in the given scopes (all rows for None), most recently used first."""
        with read(self.engine) as conn:
            if scopes is None:
                return _select(conn, "ORDER BY last_used_at DESC, id")
            return _select(conn, "WHERE scope IN :ids ORDER BY last_used_at DESC, id", {"ids": list(scopes)},
                           expand=True)

    def iter_all(self, batch: int = 1000) -> Iterator[list[dict[str, Any]]]:
        """All rows in batches of ``batch`` (for reindexing), ordered by id."""
        last = ""
        while True:
            with read(self.engine) as conn:
                rows = _select(conn, "WHERE id > :last ORDER BY id LIMIT :n", {"last": last, "n": int(batch)})
            if not rows:
                return
            yield rows
            last = rows[-1]["id"]

    def count(self) -> int:
        with read(self.engine) as conn:
            return int(conn.exec_driver_sql("SELECT COUNT(*) FROM error_entries").scalar())

    def touch(self, ids: list[str], now: float) -> None:
        """Raise the use count and last-used time of ``ids`` (unknown ids are ignored)."""
        if not ids:
            return
        with transaction(self.engine) as conn:
            conn.execute(text("UPDATE error_entries SET use_count = use_count + 1, last_used_at = :now WHERE id = :id"),
                         [{"now": now, "id": i} for i in ids])

    def delete(self, ids: Iterable[str]) -> list[str]:
        """Delete ``ids``; returns those that existed. Marks the index dirty when any did."""
        ids = list(ids)
        gone: list[str] = []
        with transaction(self.engine) as conn:
            for chunk in _chunks(ids, 500):
                stmt = text("DELETE FROM error_entries WHERE id IN :ids RETURNING id").bindparams(
                    _expanding("ids"))
                gone += [r[0] for r in conn.execute(stmt, {"ids": chunk})]
            if gone:
                _bump(conn)
        return gone

    def ids_in_scope(self, scope: str) -> list[str]:
        with read(self.engine) as conn:
            return list(conn.execute(text("SELECT id FROM error_entries WHERE scope = :s"), {"s": scope}).scalars())

    def prune_candidates(self, older_than: float, max_entries: int) -> list[str]:
        """Ids last used before ``older_than`` (POSIX s), plus the least recently used ones past ``max_entries``."""
        with read(self.engine) as conn:
            stale = list(conn.execute(text("SELECT id FROM error_entries WHERE last_used_at < :t"),
                                      {"t": older_than}).scalars())
            total = int(conn.exec_driver_sql("SELECT COUNT(*) FROM error_entries").scalar())
            keep = total - len(stale)
            extra: list[str] = []
            if keep > max_entries:
                extra = list(conn.execute(text(
                    "SELECT id FROM error_entries WHERE last_used_at >= :t "
                    "ORDER BY last_used_at ASC, use_count ASC, id LIMIT :n"),
                    {"t": older_than, "n": keep - max_entries}).scalars())
            return stale + extra

    def mark_clean(self, *, rebuilt: bool = False) -> None:
        """Record that the Chroma index holds exactly the rows of this table.

        Args:
            rebuilt: the index was rebuilt; raise the generation so other processes reopen it.
        """
        with transaction(self.engine) as conn:
            if rebuilt:
                _bump(conn)
            _set_meta(conn, "index_dirty", "0")

    def import_legacy(self, path: Path) -> int:
        """Copy the rows of an earlier version's ``errors.sqlite3`` (once: the file is then renamed
        ``errors.sqlite3.imported``). Returns the rows imported; the index is marked dirty, so it is rebuilt."""
        src = sqlite3.connect(str(path))
        try:
            src.row_factory = sqlite3.Row
            has = src.execute("SELECT 1 FROM sqlite_master WHERE name = 'entries'").fetchone()
            rows = [dict(r) for r in src.execute("SELECT * FROM entries")] if has else []
        finally:
            src.close()
        with transaction(self.engine) as conn:
            for r in rows:
                conn.execute(text(f"INSERT INTO error_entries ({', '.join(COLUMNS)}) "
                                  f"VALUES ({', '.join(':' + c for c in COLUMNS)}) ON CONFLICT DO NOTHING"),
                             {c: r[c] for c in COLUMNS})
            if rows:
                _bump(conn)
        for suffix in ("", "-wal", "-shm"):
            p = Path(str(path) + suffix)
            if p.exists():
                p.replace(Path(str(path) + ".imported" + suffix))
        return len(rows)

    def close(self) -> None:
        """Nothing to release: connections belong to the process's pool."""


# -- helpers ------------------------------------------------------------------------------------------
def _expanding(name: str) -> Any:
    from sqlalchemy import bindparam

    return bindparam(name, expanding=True)


def _select(conn: Any, tail: str, args: dict[str, Any] | None = None, expand: bool = False) -> list[dict[str, Any]]:
    stmt = text(f"SELECT {', '.join(COLUMNS)} FROM error_entries {tail}")
    if expand:
        stmt = stmt.bindparams(_expanding("ids"))
    return [dict(r._mapping) for r in conn.execute(stmt, args or {})]


def _get(conn: Any, id: str) -> dict[str, Any] | None:
    rows = _select(conn, "WHERE id = :id", {"id": id})
    return rows[0] if rows else None


def _set_meta(conn: Any, key: str, value: str) -> None:
    conn.execute(text("INSERT INTO error_meta (key, value) VALUES (:k, :v) "
                      "ON CONFLICT (key) DO UPDATE SET value = excluded.value"), {"k": key, "v": value})


def _bump(conn: Any) -> None:
    # Inside the caller's transaction: the row change, "dirty" and the new generation commit together, so
    # a crash before the Chroma write leaves a dirty flag that forces a rebuild at the next open.
    conn.exec_driver_sql(
        "INSERT INTO error_meta (key, value) VALUES ('generation', '1') "
        "ON CONFLICT (key) DO UPDATE SET value = CAST(CAST(error_meta.value AS INTEGER) + 1 AS TEXT)")
    _set_meta(conn, "index_dirty", "1")


def _chunks(items: list[str], size: int) -> Iterator[list[str]]:
    for i in range(0, len(items), size):
        yield items[i : i + size]
