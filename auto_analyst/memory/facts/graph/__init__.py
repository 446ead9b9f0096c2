"""The user's graph store: the memory stream, the entity knowledge store and the facts, in one engine.

:func:`open_graph` picks the engine from ``settings.graph_url``:

* ``""`` (default): :class:`~auto_analyst.memory.facts.graph.sql.SqlGraph` in the storage's database
  (``home/history.sqlite3``, or PostgreSQL with ``database_url``); several processes at once;
* ``kuzu:PATH``: Kùzu embedded (one read-write process per database);
* ``bolt://…`` / ``neo4j://…`` (``neo4j+s://``, ``bolt+s://``): a Neo4j server;
* ``falkor://host:port`` (or ``falkordb://``, ``redis://``): a FalkorDB server.

The last three are :class:`~auto_analyst.memory.facts.graph.cypher.CypherGraph` over one Cypher text with
a thin connection adapter each (:mod:`auto_analyst.memory.facts.graph.adapters`).
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING

from auto_analyst.errors import BadInputError

if TYPE_CHECKING:
    from auto_analyst.config import Settings
    from auto_analyst.memory.facts.graph.base import GraphStore

__all__ = ["open_graph", "SCHEMES"]

SCHEMES = ("kuzu:", "bolt://", "bolt+s://", "neo4j://", "neo4j+s://", "falkor://", "falkordb://", "redis://")

_OPEN: dict[str, GraphStore] = {}
_LOCK = threading.Lock()


def open_graph(settings: Settings) -> GraphStore:
    """The graph store ``settings`` configure (a server connection is shared by the whole process).

    Raises:
        BadInputError: ``graph_url`` has an unknown scheme.
        StorageError: the engine's driver is not installed or the server cannot be reached.
    """
    url = (settings.graph_url or "").strip()
    if not url:
        from auto_analyst.memory.facts.graph.sql import SqlGraph
        from auto_analyst.storage import database_url

        return SqlGraph(database_url(settings))
    if not url.startswith(SCHEMES):
        raise BadInputError(f"graph_url {url!r} is not one I can open; use kuzu:PATH, bolt://HOST:7687, "
                            "neo4j://HOST:7687 or falkor://HOST:6379 (or leave it empty for the embedded SQLite store).")
    with _LOCK:
        if url not in _OPEN:
            from auto_analyst.memory.facts.graph.adapters import connect
            from auto_analyst.memory.facts.graph.cypher import CypherGraph

            _OPEN[url] = CypherGraph(connect(url, settings))
        return _OPEN[url]
