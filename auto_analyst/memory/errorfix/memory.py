"""Error-fix memory: remembered "error summary -> correction" pairs, searched when generated code fails.

Where it lives:

* the entries (source of truth) - tables of the storage's database (:mod:`.store`; SQLite under
  ``settings.home`` by default, PostgreSQL with ``database_url``).
* the index - a Chroma collection of the entries' embeddings, rebuilt from the entries whenever it is missing,
  fails to open, disagrees in count, or a writer died between the database and the Chroma write. By default a
  local ``PersistentClient`` under ``settings.home / "error_memory" / "chroma"``; with ``chroma_url``, a Chroma
  server (``chromadb.HttpClient``, served by ``chroma run``) shared by every process and machine.
* ``error_memory/.lock`` - for the local index only: a file lock held for every write and every (re)opening of
  Chroma. Two processes writing one Chroma path corrupt it (docs/error_memory.md, "Several processes"), and ``serve``
  and a CLI command may run at once. With a Chroma server, which serialises its own writes, the same
  sequence (commit, index write, mark clean) is guarded by a database lock (:func:`auto_analyst.storage.named_lock`).

A process's open Chroma client keeps the HNSW index in memory and does not see another process's writes, and
writing through such a stale client would overwrite them. So every index change raises a generation counter
in SQLite; before each write (under the lock) and each search, a process whose client is older reopens it
(:mod:`.index`).

chromadb is imported only when the index is first needed.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, Self

from auto_analyst.config import Settings
from auto_analyst.errors import AutoAnalystError, BadInputError
from auto_analyst.memory.errorfix.anonymize import anonymize
from auto_analyst.memory.errorfix.entry import ErrorFixEntry
from auto_analyst.memory.errorfix.index import index_for
from auto_analyst.memory.errorfix.store import GLOBAL, ErrorStore, document_hash, entry_id

if TYPE_CHECKING:
    from auto_analyst.memory.errorfix.protocols import VectorIndexPort

__all__ = ["GLOBAL", "MIN_SCORE", "ErrorFixEntry", "ErrorMemory", "anonymize"]

log = logging.getLogger(__name__)

_SCOPES = ("all", "user", "global")
# Lowest cosine similarity a hit needs, per ``settings.embedding``. Without a floor, an unrelated entry of the
# user's own would be put before a relevant global one. "hashing": measured on the benchmark corpus
# (benchmarks/bench_error_memory.py, 200 queries x 600 entries): entries of another error kind score median
# 0.07 / 95th percentile 0.25, entries of the same kind >= 0.42 (5th percentile); 0.2 leans to recall because
# long tracebacks dilute scores. Other embeddings have other scales and no measurement here: no floor.
MIN_SCORE: dict[str, float] = {"hashing": 0.2}


class ErrorMemory:
    """The error-fix store of one ``AUTO_ANALYST_HOME``: thread-safe, safe with several processes.

    Nothing is opened until first use. Use as a context manager or call :meth:`close`.

    Args:
        settings: uses ``home``, ``embedding``, ``error_memory_k``, ``memory_retention_days``,
            ``memory_max_entries``.
        index: the vector index of the entries (default :func:`~.index.index_for` the settings: local Chroma under
            ``home``, or the Chroma server of ``chroma_url``); any :class:`~.protocols.VectorIndexPort`.
        clock: returns the current POSIX time in seconds (tests pass a fake one).
        lock_timeout: seconds to wait for another process's write before giving up.

    Raises (from any method):
        AutoAnalystError: the lock was not obtained within ``lock_timeout``, the SQLite file is damaged, or
            the index cannot be built (e.g. the chosen embedding needs a network that is missing).
        BadInputError: an invalid argument or ``embedding`` setting.
    """

    def __init__(self, settings: Settings, *, index: VectorIndexPort | None = None,
                 clock: Callable[[], float] = time.time, lock_timeout: float = 60.0) -> None:
        self.settings = settings
        self.root = Path(settings.home) / "error_memory"
        self.sqlite_path = self.root / "errors.sqlite3"  # an earlier version's store, imported once
        self.chroma_path = self.root / "chroma"
        self.lock_path = self.root / ".lock"
        self._clock = clock
        self._lock_timeout = lock_timeout
        self._mutex = threading.RLock()
        self._store: ErrorStore | None = None
        self._flock: Any = None
        self._index: VectorIndexPort = index if index is not None else index_for(settings, self.chroma_path)
        # A shared index (a server) serialises its own writes; the commit-index-mark sequence is then guarded by a
        # database lock, a local one by the file lock.
        self.remote = self._index.shared

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
                self._index.add(store, [row])
        return ErrorFixEntry.from_row(stored)

    def search(self, text: str, *, user: str, k: int | None = None, error_type: str | None = None,
               min_score: float | None = None) -> list[ErrorFixEntry]:
        """The ``k`` entries most similar to ``text`` among the user's own and the global ones.

        Hits scoring below ``min_score`` are dropped, the top ``k`` of the rest by cosine similarity are taken,
        and among them the user's own entries come before global ones (each group by descending score).
        Another user's entries are never returned: every hit's scope is checked against SQLite.

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
        floor = MIN_SCORE.get(self.settings.embedding, 0.0) if min_score is None else float(min_score)

        def keep(row: dict[str, Any]) -> bool:
            return row["scope"] in scopes and (not error_type or row["error_type"] == error_type)

        with self._mutex:
            store = self._ensure_store()
            total = store.count()
            if not total:
                return []
            query = self._index.embed([text])
            # Chroma's metadata filter costs ~15-20 ms at 10,000 entries against ~2 ms unfiltered (measured
            # here), so over-fetch without it and filter against SQLite; fall back to the filter only when too
            # few allowed hits came back and unseen entries could still pass the floor.
            fetch = min(total, max(40, 8 * k))
            pairs = self._query(store, query, fetch)
            rows = store.get_many([i for i, _ in pairs])
            hits = [(rows[i], sc) for i, sc in pairs if i in rows and keep(rows[i]) and sc >= floor]
            if len(hits) < k and fetch < total and pairs and pairs[-1][1] >= floor:
                pairs = self._query(store, query, 2 * k + 4, scopes, error_type)
                rows = store.get_many([i for i, _ in pairs])
                hits = [(rows[i], sc) for i, sc in pairs if i in rows and keep(rows[i]) and sc >= floor]
        top = sorted((ErrorFixEntry.from_row(r, score=sc) for r, sc in hits), key=lambda e: -(e.score or 0.0))[:k]
        return sorted(top, key=lambda e: e.user != scope)  # stable: own first, each group still by score

    def _query(self, store: ErrorStore, embedding: list[Any], n: int, scopes: list[str] | None = None,
               error_type: str | None = None) -> list[tuple[str, float]]:
        """(id, cosine similarity) of the ``n`` nearest entries, best first; reopens (maybe rebuilds) once on failure."""
        for attempt in (1, 2):
            if not self._index.current(store):
                with self._locked():
                    self._sync_index()
            try:
                return self._index.query(embedding, n, scopes=scopes, error_type=error_type)
            except Exception as exc:  # any index failure: reopen (and maybe rebuild) once
                if attempt == 2:
                    raise AutoAnalystError(f"The error-fix memory index failed: {exc}. Run `auto-analyst memory reindex`.") from exc
                log.warning("error memory query failed (%s); reopening the index", exc)
                self._index.invalidate()
        return []  # pragma: no cover

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
            store = self._ensure_store()
            return self._index.reindex(store)

    def index_count(self) -> int:
        """Entries in the Chroma index (equals the SQLite count when healthy; for diagnostics and tests)."""
        with self._locked():
            self._sync_index()
            return self._index.count()

    def close(self) -> None:
        """Release Chroma and SQLite (the object reopens them lazily if used again)."""
        with self._mutex:
            self._index.close()
            if self._store is not None:
                self._store.close()
                self._store = None

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
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
                from sqlalchemy.exc import DatabaseError

                from auto_analyst.storage import database_url

                if not self.remote:
                    self.root.mkdir(parents=True, exist_ok=True)
                    self._flock = FileLock(str(self.lock_path), timeout=self._lock_timeout)
                try:
                    self._store = ErrorStore(database_url(self.settings), legacy_path=self.sqlite_path)
                except (sqlite3.DatabaseError, DatabaseError) as exc:
                    raise AutoAnalystError(
                        f"The error-fix memory's database cannot be used ({exc}); check database_url, or move "
                        f"{self.sqlite_path} aside if it is damaged."
                    ) from exc
            return self._store

    @contextmanager
    def _locked(self) -> Iterator[None]:
        from filelock import Timeout

        with self._mutex:
            store = self._ensure_store()
            if self.remote:
                from auto_analyst.storage import named_lock

                try:
                    with named_lock(store.engine, "error_memory_index", timeout=self._lock_timeout):
                        yield
                except TimeoutError as exc:
                    raise AutoAnalystError(f"The error-fix index is busy ({exc}); try again later.") from None
                return
            try:
                with self._flock:
                    yield
            except Timeout:
                raise AutoAnalystError(
                    f"Another process has held {self.lock_path} for over {self._lock_timeout:.0f} s; try again later."
                ) from None

    def _delete(self, ids: list[str]) -> int:
        if not ids:
            return 0
        with self._locked():
            store = self._sync_index()
            gone = store.delete(ids)
            if gone:
                self._index.delete(store, gone)
            return len(gone)

    def _sync_index(self) -> ErrorStore:
        """The store, with the index made current (file lock held)."""
        store = self._ensure_store()
        self._index.sync(store)
        return store
