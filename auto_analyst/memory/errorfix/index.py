"""The Chroma side of the error-fix memory: a derived index of the database's entries, repaired from them.

Two kinds of client: a local ``PersistentClient`` (default) or, with the setting ``chroma_url``, a Chroma
server (``HttpClient``; ``chroma run --path DIR --port PORT`` serves one).

A process's open local client keeps the HNSW index in memory and does not see another process's writes;
writing through such a stale client would overwrite them (two writers corrupt a store: docs/error_memory.md, "Several
processes"). So every index change raises a generation counter in the database (:meth:`~.store.ErrorStore.generation`),
and :meth:`ChromaIndex.sync` reopens a local client whenever the counter moved (a server is always current, so
its client stays open). Every method that opens or writes expects the caller to hold the store's lock.

chromadb is imported only here, and only when a method runs.
"""

from __future__ import annotations

import logging
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from auto_analyst.errors import AutoAnalystError

if TYPE_CHECKING:
    from auto_analyst.memory.errorfix.protocols import IndexedEntriesPort as ErrorStore

__all__ = ["COLLECTION_PREFIX", "HNSW", "ChromaIndex", "index_for"]

log = logging.getLogger(__name__)

COLLECTION_PREFIX = "error_fix-"
# Chroma's defaults (ef 100, 16 neighbours) missed the exact top hit for 1-4% of queries among near-duplicate
# entries (450 entries differing in one token, measured here); these values missed none and cost no measurable
# query time. They apply when a collection is created (a reindex recreates it).
HNSW = {"space": "cosine", "ef_construction": 200, "ef_search": 200, "max_neighbors": 32}


def index_for(settings: Any, path: Path) -> ChromaIndex:
    """The index the settings choose: the Chroma server of ``chroma_url`` if set, else a local Chroma at ``path``
    (another vector index plugs in as any :class:`~.protocols.VectorIndexPort` passed to ``ErrorMemory``)."""
    return ChromaIndex(path, settings)


class ChromaIndex:
    """One Chroma collection of entry embeddings (``PersistentClient`` at ``path``, or the server of the
    ``chroma_url`` setting), named after the embedding function; implements :class:`~.protocols.VectorIndexPort`.

    Args:
        path: the Chroma directory (deleted and recreated when it cannot be opened).
        settings: the :class:`auto_analyst.config.Settings` whose ``embedding`` chooses the function.
    """

    def __init__(self, path: Path, settings: Any) -> None:
        self.path = Path(path)
        self.settings = settings
        self.url = str(settings.chroma_url or "").strip()
        self.gen = -1  # generation the open client reflects; -1 forces a (re)open
        self._ef: Any = None
        self._client: Any = None
        self.col: Any = None

    @property
    def shared(self) -> bool:
        """True for a server (every process sees every write; writes are serialised by a database lock)."""
        return bool(self.url)

    def current(self, store: ErrorStore) -> bool:
        """Open and reflecting the store's last change (else :meth:`sync` must run, under the lock)."""
        return self.col is not None and store.generation() == self.gen

    def query(self, embedding: list[Any], n: int, *, scopes: list[str] | None = None,
              error_type: str | None = None) -> list[tuple[str, float]]:
        """(id, cosine similarity) of the ``n`` nearest entries, best first; only entries of ``scopes`` (user ids or
        ``"global"``) and ``error_type`` when given. Raises whatever Chroma raises (the caller reopens once)."""
        where: dict[str, Any] | None = {"user": {"$in": list(scopes)}} if scopes is not None else None
        if error_type:
            kind = {"error_type": str(error_type)}
            where = {"$and": [where, kind]} if where else kind
        res = self.col.query(query_embeddings=embedding, n_results=n, where=where, include=["distances"])
        return [(i, 1.0 - float(d)) for i, d in zip(res["ids"][0], res["distances"][0])]

    def add(self, store: ErrorStore, rows: list[dict[str, Any]]) -> None:
        """Index entry rows the store has just committed (see :meth:`write` for a failure)."""
        self.write(store, lambda col: col.add(ids=[r["id"] for r in rows], embeddings=self.embed([r["document"] for r in rows]),
                                              metadatas=[metadata(r) for r in rows]))

    def delete(self, store: ErrorStore, ids: list[str]) -> None:
        """Drop entries the store has just deleted (see :meth:`write` for a failure)."""
        def op(col: Any) -> None:
            for i in range(0, len(ids), 1000):
                col.delete(ids=ids[i : i + 1000])

        self.write(store, op)

    def reindex(self, store: ErrorStore) -> int:
        """Reopen (recreating a directory that cannot be opened) and rebuild from every row; returns the rows indexed."""
        self.close()
        self.open(repair=True)
        return self.rebuild(store)

    def count(self) -> int:
        """Entries in the open collection."""
        return int(self.col.count())

    def invalidate(self) -> None:
        """Forget that the client is current: the next use reopens it (after a failed query)."""
        self.gen = -1

    def function(self) -> Any:
        """The configured embedding function (built on first use).

        Raises:
            BadInputError: an unknown ``embedding`` setting (see :func:`.embedding.make_embedding_function`).
        """
        if self._ef is None:
            from auto_analyst.memory.errorfix.embedding import make_embedding_function

            self._ef = make_embedding_function(self.settings)
        return self._ef

    def embed(self, texts: list[str]) -> list[Any]:
        """Embeddings of ``texts`` (one float32 vector each)."""
        return self.function()(texts)

    def collection_name(self) -> str:
        from auto_analyst.memory.errorfix.embedding import embedding_key

        return COLLECTION_PREFIX + embedding_key(self.function())

    def sync(self, store: ErrorStore) -> None:
        """Make the open collection current: reopen after another process wrote, rebuild if it disagrees
        with SQLite (dirty flag left by a writer that died, or a different count)."""
        if self.col is not None and store.generation() == self.gen:
            return
        if self.url and self.col is not None:
            # A server is current for every client: only a dirty flag (a writer that died) or a count that
            # disagrees means the index lacks something.
            if store.meta("index_dirty") == "1" or self.col.count() != store.count():
                log.info("error memory index on %s is stale; rebuilding it from the database", self.url)
                self.rebuild(store)
            self.gen = store.generation()
            return
        self.close()
        intact = self.open(repair=True)
        if not intact or store.meta("index_dirty") == "1" or self.col.count() != store.count():
            log.info("error memory index is stale; rebuilding it from SQLite")
            self.rebuild(store)
        self.gen = store.generation()

    def open(self, *, repair: bool) -> bool:
        """Open client and collection. Returns False when the directory had to be recreated (empty).

        Raises:
            AutoAnalystError: the directory cannot be opened (after one recreation when ``repair``).
        """
        import chromadb
        from chromadb.config import Settings as ChromaSettings

        name = self.collection_name()
        if self.url:
            try:
                self._client = _http_client(self.url)
                self.col = self._client.get_or_create_collection(name, embedding_function=self._ef, configuration={"hnsw": dict(HNSW)})
                return True
            except Exception as exc:  # noqa: BLE001 - the server is down or refuses: say which
                self.close()
                raise AutoAnalystError(f"Cannot reach the Chroma server at {self.url} ({exc}); start it with "
                                       "`chroma run --path DIR --port PORT` or unset chroma_url.") from exc
        for attempt in (1, 2):
            try:
                self._client = chromadb.PersistentClient(path=str(self.path), settings=ChromaSettings(anonymized_telemetry=False))
                self.col = self._client.get_or_create_collection(name, embedding_function=self._ef, configuration={"hnsw": dict(HNSW)})
                if self.col.count():
                    # Loads the HNSW files now, while the lock keeps writers out, and proves they are readable.
                    self.col.query(query_embeddings=self.embed(["probe"]), n_results=1, include=[])
                return attempt == 1
            except Exception as exc:  # any failure to open means the derived index is unusable
                self.close()
                _drop_cached_system(str(self.path))
                if attempt == 2 or not repair:
                    raise AutoAnalystError(f"Cannot open the error-fix index at {self.path}: {exc}") from exc
                log.warning("error memory index at %s cannot be opened (%s); rebuilding it from SQLite", self.path, exc)
                shutil.rmtree(self.path, ignore_errors=True)
        return False  # pragma: no cover

    def rebuild(self, store: ErrorStore) -> int:
        """Replace the collection by one made from every SQLite row (client open). Returns the rows indexed."""
        name = self.col.name
        for col in self._client.list_collections():
            col_name = str(getattr(col, "name", col))
            if col_name.startswith(COLLECTION_PREFIX):
                # Collections of other embedding settings go too: they would be stale by now.
                self._client.delete_collection(col_name)
        self.col = self._client.create_collection(name, embedding_function=self._ef, configuration={"hnsw": dict(HNSW)})
        batch = max(1, min(1000, int(self._client.get_max_batch_size())))
        n = 0
        for rows in store.iter_all(batch):
            self.col.add(ids=[r["id"] for r in rows], embeddings=self.embed([r["document"] for r in rows]), metadatas=[metadata(r) for r in rows])
            n += len(rows)
        store.mark_clean(rebuilt=True)
        self.gen = store.generation()
        return n

    def write(self, store: ErrorStore, op: Callable[[Any], Any]) -> None:
        """Apply ``op`` to the collection after SQLite committed the change. A failure is logged, not raised:
        the index stays marked dirty and the next :meth:`sync` rebuilds it, so no entry is lost."""
        try:
            op(self.col)
            store.mark_clean()
            self.gen = store.generation()
        except Exception as exc:  # noqa: BLE001 - SQLite already holds the change; the rebuild will catch up
            log.warning("error memory index write failed (%s); it will be rebuilt from SQLite", exc)
            self.gen = -1

    def close(self) -> None:
        if self._client is not None:
            try:
                self._client.close()
            except Exception:  # closing a broken client must not hide the real problem
                log.debug("closing the Chroma client failed", exc_info=True)
        self._client = None
        self.col = None
        self.gen = -1


def metadata(row: dict[str, Any]) -> dict[str, Any]:
    """Chroma metadata of an entry row: only what searches filter on. Everything else is read from SQLite,
    so it never goes stale in the index."""
    return {"user": row["scope"], "error_type": row["error_type"] or "-", "agent": row["agent"] or "-"}


def _http_client(url: str) -> Any:
    """A ``chromadb.HttpClient`` for ``http(s)://host:port`` (telemetry off)."""
    from urllib.parse import urlparse

    import chromadb
    from chromadb.config import Settings as ChromaSettings

    parts = urlparse(url if "://" in url else "http://" + url)
    return chromadb.HttpClient(host=parts.hostname or "127.0.0.1", port=parts.port or 8000,
                               ssl=parts.scheme == "https", settings=ChromaSettings(anonymized_telemetry=False))


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
    except Exception:  # best effort: a half-started system may fail to stop
        log.debug("dropping the cached Chroma system failed", exc_info=True)
