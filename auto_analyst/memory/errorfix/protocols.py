"""The contracts of the error-fix memory: the store the rest of the package uses, its vector index, and what the
index reads from the entries' database.

Implemented by :class:`~auto_analyst.memory.errorfix.memory.ErrorMemory`,
:class:`~auto_analyst.memory.errorfix.index.ChromaIndex` (local or server) and
:class:`~auto_analyst.memory.errorfix.store.ErrorStore` (SQLite or PostgreSQL);
``tests/memory/test_contracts.py`` runs one suite against every backend.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, Protocol, runtime_checkable

from auto_analyst.memory.errorfix.entry import ErrorFixEntry

__all__ = ["ErrorFixPort", "IndexedEntriesPort", "VectorIndexPort"]


@runtime_checkable
class IndexedEntriesPort(Protocol):
    """What a vector index reads from the entries' database (the source of truth it is rebuilt from)."""

    def generation(self) -> int:
        """A counter raised by every change of the entries (an index that saw an older one is stale)."""

    def meta(self, key: str, default: str | None = None) -> str | None:
        """A bookkeeping value (``index_dirty`` is ``"1"`` while an index write may be missing)."""

    def count(self) -> int:
        """Entries stored."""

    def iter_all(self, batch: int = 1000) -> Iterator[list[dict[str, Any]]]:
        """Every entry row (``id``, ``scope``, ``document``, ``error_type``, ``agent``...), ``batch`` at a time."""

    def mark_clean(self, *, rebuilt: bool = False) -> None:
        """Record that the index holds every committed change."""


@runtime_checkable
class VectorIndexPort(Protocol):
    """A nearest-neighbour index of the entries' documents, derived from the database and repaired from it.

    Every method that opens or writes runs with the error-fix memory's lock held (a file lock, or a database lock
    when ``shared``). Writes come after the database committed: a failed index write is logged and leaves the
    index marked dirty, so the next :meth:`sync` rebuilds it and no entry is lost.
    """

    shared: bool
    """True when every process sees every write (a server): no file lock is needed, only a database lock."""

    def embed(self, texts: list[str]) -> list[Any]:
        """One vector per text, from the configured embedding function."""

    def current(self, store: IndexedEntriesPort) -> bool:
        """Open and reflecting ``store``'s last change."""

    def sync(self, store: IndexedEntriesPort) -> None:
        """Make the index current: reopen after another process wrote; rebuild when it disagrees with ``store``."""

    def query(self, embedding: list[Any], n: int, *, scopes: list[str] | None = None,
              error_type: str | None = None) -> list[tuple[str, float]]:
        """(entry id, cosine similarity in -1..1) of the ``n`` nearest entries, best first; only entries owned by
        one of ``scopes`` and of ``error_type`` when given. Raises on an index failure (the caller reopens once)."""

    def add(self, store: IndexedEntriesPort, rows: list[dict[str, Any]]) -> None:
        """Index rows ``store`` has just committed."""

    def delete(self, store: IndexedEntriesPort, ids: list[str]) -> None:
        """Drop entries ``store`` has just deleted."""

    def reindex(self, store: IndexedEntriesPort) -> int:
        """Rebuild from every row of ``store`` (recreating an index that cannot be opened); returns rows indexed."""

    def count(self) -> int:
        """Entries in the index (equals ``store.count()`` when healthy)."""

    def invalidate(self) -> None:
        """Make the next use reopen the index."""

    def close(self) -> None:
        """Release the client (it reopens on next use)."""


@runtime_checkable
class ErrorFixPort(Protocol):
    """The error-fix memory as the rest of the package uses it (``MemoryStores.errors``)."""

    def add(self, error_summary: str, correction: str, *, error_type: str, agent: str, agent_version: str,
            dataset_fingerprint: str, user: str | None, human: bool = False) -> ErrorFixEntry:
        """Remember an error and its fix (``user`` None: shared with every user); stored once per scope."""

    def search(self, text: str, *, user: str, k: int | None = None, error_type: str | None = None,
               min_score: float | None = None) -> list[ErrorFixEntry]:
        """The ``k`` entries most similar to ``text`` among the user's own and the global ones (own first)."""

    def mark_used(self, ids: list[str]) -> None:
        """Count a use of each entry (it went into a fix prompt)."""

    def list(self, user: str | None = None, scope: str = "all") -> list[ErrorFixEntry]:
        """Entries, most recently used first (``scope``: ``"all"``, ``"user"`` or ``"global"``)."""

    def get(self, id: str) -> ErrorFixEntry | None:
        """One entry by id."""

    def forget(self, id: str, *, user: str | None = None) -> bool:
        """Delete one entry (of ``user`` only, if given); True if it existed."""

    def clear(self, *, user: str) -> int:
        """Delete every entry of ``user``; returns how many."""

    def prune(self) -> int:
        """Delete entries unused past the retention, then the least recently used past the size cap."""

    def reindex(self) -> int:
        """Rebuild the vector index from the database; returns the entries indexed."""

    def close(self) -> None:
        """Release the index and the database (reopened lazily)."""
