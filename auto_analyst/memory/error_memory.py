"""Error-fix memory: remembered "error summary -> correction" pairs, searched when generated code fails.

Layout under ``settings.home / "error_memory"``:

* ``errors.sqlite3`` - every entry (source of truth, WAL mode; see :mod:`.error_store`).
* ``chroma/`` - a Chroma ``PersistentClient`` index of the entries' embeddings, rebuilt from SQLite whenever it
  is missing, fails to open, disagrees in count, or a writer died between the SQLite and the Chroma write.
* ``.lock`` - a file lock held for every write and every (re)opening of Chroma. Two processes writing one
  Chroma path corrupt it (DESIGN.md, "Chroma and processes"), and ``serve`` and a CLI command may run at once.

A process's open Chroma client keeps the HNSW index in memory and does not see another process's writes, and
writing through such a stale client would overwrite them. So every index change raises a generation counter
in SQLite; before each write (under the lock) and each search, a process whose client is older reopens it.

chromadb is imported only when the index is first needed.
"""

from __future__ import annotations

import logging
import shutil
import threading
import time
from contextlib import contextmanager
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Callable, Iterator

from pydantic import BaseModel

from auto_analyst.config import Settings
from auto_analyst.errors import AutoAnalystError, BadInputError
from auto_analyst.memory.anonymize import anonymize
from auto_analyst.memory.error_store import GLOBAL, ErrorStore, document_hash, entry_id

__all__ = ["ErrorFixEntry", "ErrorMemory", "anonymize", "GLOBAL", "MIN_SCORE"]

log = logging.getLogger(__name__)

COLLECTION_PREFIX = "error_fix-"
_SCOPES = ("all", "user", "global")
# Lowest cosine similarity a hit needs, per ``settings.embedding``. Without a floor, an unrelated entry of the
# user's own would be put before a relevant global one. "hashing": measured on the benchmark corpus
# (benchmarks/bench_error_memory.py, 200 queries x 600 entries): entries of another error kind score median
# 0.07 / 95th percentile 0.25, entries of the same kind >= 0.42 (5th percentile); 0.2 leans to recall because
# long tracebacks dilute scores. Other embeddings have other scales and no measurement here: no floor.
MIN_SCORE: dict[str, float] = {"hashing": 0.2}


class ErrorFixEntry(BaseModel):
    """One remembered error and its correction.

    Attributes:
        document: ``"Error Summary: ...\\nCorrection: ..."`` - the text embedded and shown to the fixer.
        user: the owning user id, or ``"global"`` for entries shared with every user.
        human: the correction came from a person rather than from the fix loop.
        created_at, last_used_at: UTC times.
        use_count: times added or used in a fix prompt (starts at 1).
        score: cosine similarity to the query (-1..1), set by :meth:`ErrorMemory.search`; None elsewhere.
    """

    id: str
    document: str
    error_type: str
    agent: str
    agent_version: str
    dataset_fingerprint: str
    user: str
    human: bool
    created_at: datetime
    last_used_at: datetime
    use_count: int
    score: float | None = None

    @classmethod
    def from_row(cls, row: dict[str, Any], score: float | None = None) -> "ErrorFixEntry":
        return cls(
            id=row["id"], document=row["document"], error_type=row["error_type"], agent=row["agent"],
            agent_version=row["agent_version"], dataset_fingerprint=row["dataset_fingerprint"], user=row["scope"],
            human=bool(row["human"]), created_at=_utc(row["created_at"]), last_used_at=_utc(row["last_used_at"]),
            use_count=int(row["use_count"]), score=score,
        )


def _utc(ts: float) -> datetime:
    return datetime.fromtimestamp(float(ts), tz=timezone.utc)


class ErrorMemory:
    """The error-fix store of one ``AUTO_ANALYST_HOME``: thread-safe, safe with several processes.

    Nothing is opened until first use. Use as a context manager or call :meth:`close`.

    Args:
        settings: uses ``home``, ``embedding``, ``error_memory_k``, ``memory_retention_days``,
            ``memory_max_entries``.
        clock: returns the current POSIX time in seconds (tests pass a fake one).
        lock_timeout: seconds to wait for another process's write before giving up.

    Raises (from any method):
        AutoAnalystError: the lock was not obtained within ``lock_timeout``, the SQLite file is damaged, or
            the index cannot be built (e.g. the chosen embedding needs a network that is missing).
        BadInputError: an invalid argument or ``embedding`` setting.
    """

    def __init__(self, settings: Settings, *, clock: Callable[[], float] = time.time, lock_timeout: float = 60.0) -> None:
        self.settings = settings
        self.root = Path(settings.home) / "error_memory"
        self.sqlite_path = self.root / "errors.sqlite3"
        self.chroma_path = self.root / "chroma"
        self.lock_path = self.root / ".lock"
        self._clock = clock
        self._lock_timeout = lock_timeout
        self._mutex = threading.RLock()
        self._store: ErrorStore | None = None
        self._flock: Any = None
        self._ef: Any = None
        self._client: Any = None
        self._col: Any = None
        self._gen = -1  # generation the open Chroma client reflects; -1 forces a (re)open

    # -- public API ---------------------------------------------------------------------------------------
    def add(self, error_summary: str, correction: str, *, error_type: str, agent: str, agent_version: str,
            dataset_fingerprint: str, user: str | None, human: bool = False) -> ErrorFixEntry:
        """Remember an error and its fix; the same normalised document within one scope is stored once.

        Args:
            error_summary, correction: non-empty texts. For a global entry, pass them through
                :func:`anonymize` first: this method stores them as given.
            user: the owning user id, or None for the global scope.

        Returns:
            The stored entry; when it already existed, with ``use_count`` raised by one.

        Raises:
            BadInputError: an empty summary/correction or an empty user id.
        """
        if not str(error_summary or "").strip() or not str(correction or "").strip():
            raise BadInputError("An error-fix entry needs a non-empty error summary and correction.")
        scope = self._scope(user)
        document = f"Error Summary: {error_summary.strip()}\nCorrection: {correction.strip()}"
        doc_hash = document_hash(document)
        now = self._clock()
        row = {
            "id": entry_id(scope, doc_hash), "scope": scope, "doc_hash": doc_hash, "document": document,
            "error_type": str(error_type or ""), "agent": str(agent or ""), "agent_version": str(agent_version or ""),
            "dataset_fingerprint": str(dataset_fingerprint or ""), "human": int(bool(human)),
            "created_at": now, "last_used_at": now, "use_count": 1,
        }
        with self._locked():
            store = self._sync_index()
            stored, inserted = store.upsert(row, now)
            if inserted:
                self._index_write(lambda col: col.upsert(ids=[row["id"]], embeddings=self._embed([document]), metadatas=[_meta(row)]))
        return ErrorFixEntry.from_row(stored)

    def search(self, text: str, *, user: str, k: int | None = None, error_type: str | None = None,
               min_score: float | None = None) -> list[ErrorFixEntry]:
        """The ``k`` entries most similar to ``text`` among the user's own and the global ones.

        Hits scoring below ``min_score`` are dropped, the top ``k`` of the rest by cosine similarity are taken,
        and among them the user's own entries come before global ones (each group by descending score).
        Another user's entries are never returned: Chroma filters by scope and every hit is checked again
        against SQLite.

        Args:
            text: the new error (message, traceback excerpt, code) to match.
            user: the asking user's id.
            k: entries to return; default ``settings.error_memory_k``.
            error_type: only entries of this error type (e.g. ``"ValueError"``).
            min_score: lowest cosine similarity kept; default :data:`MIN_SCORE` for the chosen embedding.

        Raises:
            BadInputError: an empty user id.
            AutoAnalystError: the index failed twice, the second time after a rebuild.
        """
        scope = self._scope(user)
        k = self.settings.error_memory_k if k is None else int(k)
        if k <= 0 or not str(text or "").strip():
            return []
        scopes = [scope] if scope == GLOBAL else [scope, GLOBAL]
        where: dict[str, Any] = {"user": {"$in": scopes}}
        if error_type:
            where = {"$and": [where, {"error_type": str(error_type)}]}
        with self._mutex:
            store = self._ensure_store()
            if not store.count():
                return []
            for attempt in (1, 2):
                if self._col is None or store.generation() != self._gen:
                    with self._locked():
                        self._sync_index()
                try:
                    res = self._col.query(query_embeddings=self._embed([text]), n_results=2 * k + 4, where=where, include=["distances"])
                    break
                except Exception as exc:  # noqa: BLE001 - any index failure: reopen (and maybe rebuild) once
                    if attempt == 2:
                        raise AutoAnalystError(f"The error-fix memory index failed: {exc}. Run `auto-analyst memory reindex`.") from exc
                    log.warning("error memory query failed (%s); reopening the index", exc)
                    self._gen = -1
            ids, dists = res["ids"][0], res["distances"][0]
            rows = store.get_many(list(ids))
        floor = MIN_SCORE.get(self.settings.embedding, 0.0) if min_score is None else float(min_score)
        hits = [ErrorFixEntry.from_row(rows[i], score=1.0 - float(d)) for i, d in zip(ids, dists) if i in rows and rows[i]["scope"] in scopes]
        hits = sorted((h for h in hits if (h.score or 0.0) >= floor), key=lambda e: -(e.score or 0.0))[:k]
        return sorted(hits, key=lambda e: e.user != scope)  # stable: own first, each group still by score

    def mark_used(self, ids: list[str]) -> None:
        """Record that these entries were put into a fix prompt (use count +1, last-used time now)."""
        if ids:
            with self._locked():
                self._ensure_store().touch(list(ids), self._clock())

    def list(self, user: str | None = None, scope: str = "all") -> list[ErrorFixEntry]:
        """Entries, most recently used first.

        Args:
            user: None with ``scope="all"`` lists every entry of every user (administration); a user id with
                ``"all"`` lists that user's entries and the global ones.
            scope: ``"all"``, ``"user"`` (only ``user``'s own; needs ``user``) or ``"global"``.

        Raises:
            BadInputError: an unknown scope, or ``scope="user"`` without a user.
        """
        if scope not in _SCOPES:
            raise BadInputError(f"Unknown scope {scope!r}; choose one of {', '.join(_SCOPES)}.")
        if scope == "user" and not user:
            raise BadInputError("scope='user' needs a user id.")
        scopes: list[str] | None
        if scope == "global":
            scopes = [GLOBAL]
        elif scope == "user":
            scopes = [self._scope(user)]
        else:
            scopes = None if user is None else sorted({self._scope(user), GLOBAL})
        return [ErrorFixEntry.from_row(r) for r in self._ensure_store().select(scopes)]

    def get(self, id: str) -> ErrorFixEntry | None:
        """The entry with this id, or None."""
        row = self._ensure_store().get(str(id))
        return ErrorFixEntry.from_row(row) if row else None

    def forget(self, id: str, *, user: str | None = None) -> bool:
        """Delete one entry. With ``user``, only an entry owned by that user is deleted (not a global one).

        Returns:
            True when an entry was deleted.
        """
        row = self._ensure_store().get(str(id))
        if row is None or (user is not None and row["scope"] != self._scope(user)):
            return False
        return self._delete([row["id"]]) == 1

    def clear(self, *, user: str) -> int:
        """Delete every entry of ``user`` (``"global"`` clears the global scope). Returns the number deleted."""
        return self._delete(self._ensure_store().ids_in_scope(self._scope(user)))

    def prune(self) -> int:
        """Delete entries unused for ``settings.memory_retention_days`` days, then the least recently used ones
        past ``settings.memory_max_entries`` (ties: lower use count first). Returns the number deleted."""
        older_than = self._clock() - float(self.settings.memory_retention_days) * 86400.0
        ids = self._ensure_store().prune_candidates(older_than, max(0, int(self.settings.memory_max_entries)))
        return self._delete(ids)

    def reindex(self) -> int:
        """Rebuild the Chroma collection from SQLite (the directory is recreated if it cannot be opened).

        Returns:
            The number of entries indexed.
        """
        with self._locked():
            self._ensure_store()
            self._close_client()
            self._open_chroma(repair=True)
            return self._rebuild()

    def index_count(self) -> int:
        """Entries in the Chroma index (equals the SQLite count when healthy; for diagnostics and tests)."""
        with self._locked():
            self._sync_index()
            return int(self._col.count())

    def close(self) -> None:
        """Release Chroma and SQLite (the object reopens them lazily if used again)."""
        with self._mutex:
            self._close_client()
            if self._store is not None:
                self._store.close()
                self._store = None

    def __enter__(self) -> "ErrorMemory":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    # -- internals ----------------------------------------------------------------------------------------
    @staticmethod
    def _scope(user: str | None) -> str:
        if user is None:
            return GLOBAL
        user = str(user).strip()
        if not user:
            raise BadInputError("An empty user id; pass None for the global scope.")
        return user

    def _ensure_store(self) -> ErrorStore:
        with self._mutex:
            if self._store is None:
                import sqlite3

                from filelock import FileLock

                self.root.mkdir(parents=True, exist_ok=True)
                self._flock = FileLock(str(self.lock_path), timeout=self._lock_timeout)
                try:
                    self._store = ErrorStore(self.sqlite_path)
                except sqlite3.DatabaseError as exc:
                    raise AutoAnalystError(
                        f"The error-fix memory database {self.sqlite_path} is damaged ({exc}); move it aside to start afresh."
                    ) from exc
            return self._store

    @contextmanager
    def _locked(self) -> Iterator[None]:
        from filelock import Timeout

        with self._mutex:
            self._ensure_store()
            try:
                with self._flock:
                    yield
            except Timeout:
                raise AutoAnalystError(
                    f"Another process has held {self.lock_path} for over {self._lock_timeout:.0f} s; try again later."
                ) from None

    def _embedding_function(self) -> Any:
        if self._ef is None:
            from auto_analyst.memory.embedding import make_embedding_function

            self._ef = make_embedding_function(self.settings)
        return self._ef

    def _embed(self, texts: list[str]) -> list[Any]:
        return self._embedding_function()(texts)

    def _collection_name(self) -> str:
        from auto_analyst.memory.embedding import embedding_key

        return COLLECTION_PREFIX + embedding_key(self._embedding_function())

    def _open_chroma(self, *, repair: bool) -> bool:
        """Open client and collection (lock held). Returns False when the directory was recreated.

        With ``repair``, a directory that fails to open is deleted and created empty (SQLite holds the data).
        """
        import chromadb
        from chromadb.config import Settings as ChromaSettings

        name = self._collection_name()
        for attempt in (1, 2):
            try:
                self._client = chromadb.PersistentClient(path=str(self.chroma_path), settings=ChromaSettings(anonymized_telemetry=False))
                self._col = self._client.get_or_create_collection(name, embedding_function=self._ef, configuration={"hnsw": {"space": "cosine"}})
                if self._col.count():
                    # Loads the HNSW files now, while the lock keeps writers out, and proves they are readable.
                    self._col.query(query_embeddings=self._embed(["probe"]), n_results=1, include=[])
                return attempt == 1
            except Exception as exc:  # noqa: BLE001 - any failure to open means the derived index is unusable
                self._close_client()
                _drop_cached_system(str(self.chroma_path))
                if attempt == 2 or not repair:
                    raise AutoAnalystError(f"Cannot open the error-fix index at {self.chroma_path}: {exc}") from exc
                log.warning("error memory index at %s cannot be opened (%s); rebuilding it from SQLite", self.chroma_path, exc)
                shutil.rmtree(self.chroma_path, ignore_errors=True)
        return False  # pragma: no cover

    def _sync_index(self) -> ErrorStore:
        """Make the open collection current (lock held): reopen after another process wrote, rebuild if stale."""
        store = self._ensure_store()
        gen = store.generation()
        if self._col is not None and gen == self._gen:
            return store
        self._close_client()
        intact = self._open_chroma(repair=True)
        if not intact or store.meta("index_dirty") == "1" or self._col.count() != store.count():
            log.info("error memory index is stale; rebuilding it from SQLite")
            self._rebuild()
        self._gen = store.generation()
        return store

    def _rebuild(self) -> int:
        """Replace the collection by one made from every SQLite row (lock held, client open)."""
        store = self._ensure_store()
        name = self._col.name
        for col in self._client.list_collections():
            col_name = getattr(col, "name", col)
            if str(col_name).startswith(COLLECTION_PREFIX):
                # Collections of other embedding settings are dropped too: they would be stale by now.
                self._client.delete_collection(str(col_name))
        self._col = self._client.create_collection(name, embedding_function=self._ef, configuration={"hnsw": {"space": "cosine"}})
        batch = max(1, min(1000, int(self._client.get_max_batch_size())))
        n = 0
        for rows in store.iter_all(batch):
            self._col.add(ids=[r["id"] for r in rows], embeddings=self._embed([r["document"] for r in rows]), metadatas=[_meta(r) for r in rows])
            n += len(rows)
        store.mark_clean(rebuilt=True)
        self._gen = store.generation()
        return n

    def _index_write(self, op: Callable[[Any], Any]) -> None:
        """Apply ``op`` to the collection after SQLite committed (lock held); a failure leaves the index dirty,
        which the next opening repairs, so the entry itself is never lost."""
        store = self._ensure_store()
        try:
            op(self._col)
            store.mark_clean()
            self._gen = store.generation()
        except Exception as exc:  # noqa: BLE001 - SQLite already holds the change; the rebuild will catch up
            log.warning("error memory index write failed (%s); it will be rebuilt from SQLite", exc)
            self._gen = -1

    def _delete(self, ids: list[str]) -> int:
        if not ids:
            return 0
        with self._locked():
            store = self._sync_index()
            gone = store.delete(ids)
            if gone:
                def op(col: Any) -> None:
                    for i in range(0, len(gone), 1000):
                        col.delete(ids=gone[i : i + 1000])

                self._index_write(op)
            return len(gone)

    def _close_client(self) -> None:
        if self._client is not None:
            try:
                self._client.close()
            except Exception:  # noqa: BLE001 - closing a broken client must not hide the real problem
                log.debug("closing the Chroma client failed", exc_info=True)
        self._client = None
        self._col = None
        self._gen = -1


def _drop_cached_system(path: str) -> None:
    """Evict a failed Chroma ``System`` from chromadb's per-path cache.

    chromadb 1.5 caches the System before starting it (``SharedSystemClient._create_system_if_not_exists``), so
    after a failed start every later client for the same path gets the broken one. Private API, checked
    against chromadb 1.5.9.
    """
    try:
        from chromadb.api.shared_system_client import SharedSystemClient

        system = SharedSystemClient._identifier_to_system.pop(path, None)
        SharedSystemClient._identifier_to_refcount.pop(path, None)
        if system is not None:
            system.stop()
    except Exception:  # noqa: BLE001 - best effort: a half-started system may fail to stop
        log.debug("dropping the cached Chroma system failed", exc_info=True)


def _meta(row: dict[str, Any]) -> dict[str, Any]:
    # Only what Chroma filters on: everything else is read from SQLite, so metadata never goes stale.
    return {"user": row["scope"], "error_type": row["error_type"] or "-", "agent": row["agent"] or "-"}
