"""Thin connections from one Cypher text to Kùzu (embedded), Neo4j and FalkorDB: ``run(query, params) -> rows``.

Each adapter only opens the engine, sends a statement with ``$name`` parameters and returns the
result rows as lists; :class:`~auto_analyst.memory.facts.graph.cypher.CypherGraph` writes the Cypher.
Kùzu needs its node and relationship tables declared first (``schema``); Neo4j and FalkorDB are
schemaless and get indexes instead. The drivers are imported only when a URL asks for them.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol
from urllib.parse import urlparse

from auto_analyst.errors import AutoAnalystError, BadInputError
from auto_analyst.extras import require

if TYPE_CHECKING:
    from auto_analyst.config import Settings

__all__ = ["CypherConnection", "KuzuConnection", "Neo4jConnection", "FalkorConnection", "connect", "KUZU_SCHEMA",
           "INDEXES"]

KUZU_SCHEMA = (
    "CREATE NODE TABLE IF NOT EXISTS Entity(key STRING, user STRING, name STRING, kind STRING, count INT64, "
    "first_seen STRING, last_seen STRING, PRIMARY KEY (key))",
    "CREATE NODE TABLE IF NOT EXISTS Fact(key STRING, id STRING, user STRING, session STRING, turn INT64, at STRING, "
    "question STRING, kind STRING, subject STRING, relation STRING, object STRING, value DOUBLE, unit STRING, "
    "stats STRING, tbl STRING, fingerprint STRING, filter STRING, source STRING, uses INT64, last_used STRING, "
    "text STRING, PRIMARY KEY (key))",
    "CREATE NODE TABLE IF NOT EXISTS Mention(key STRING, user STRING, session STRING, entity STRING, kind STRING, "
    "at STRING, PRIMARY KEY (key))",
    "CREATE NODE TABLE IF NOT EXISTS SeenTable(key STRING, user STRING, fingerprint STRING, name STRING, "
    "source STRING, size INT64, mtime_ns INT64, seen_at STRING, PRIMARY KEY (key))",
    "CREATE REL TABLE IF NOT EXISTS ABOUT(FROM Fact TO Entity, role STRING, path INT64)",
)
"""Kùzu's declared tables: the same labels and properties the Cypher of CypherGraph uses."""

INDEXES = {
    "neo4j": ("CREATE CONSTRAINT aa_entity IF NOT EXISTS FOR (e:Entity) REQUIRE e.key IS UNIQUE",
              "CREATE CONSTRAINT aa_fact IF NOT EXISTS FOR (f:Fact) REQUIRE f.key IS UNIQUE",
              "CREATE INDEX aa_fact_user IF NOT EXISTS FOR (f:Fact) ON (f.user)",
              "CREATE INDEX aa_mention_user IF NOT EXISTS FOR (m:Mention) ON (m.user)",
              "CREATE INDEX aa_table_key IF NOT EXISTS FOR (t:SeenTable) ON (t.key)"),
    "falkordb": ("CREATE INDEX FOR (e:Entity) ON (e.key)", "CREATE INDEX FOR (f:Fact) ON (f.key)",
                 "CREATE INDEX FOR (f:Fact) ON (f.user)", "CREATE INDEX FOR (m:Mention) ON (m.user)",
                 "CREATE INDEX FOR (t:SeenTable) ON (t.key)"),
}


class CypherConnection(Protocol):
    """What CypherGraph needs of an engine."""

    dialect: str

    def run(self, query: str, params: dict[str, Any] | None = None) -> list[list[Any]]: ...
    def close(self) -> None: ...


class KuzuConnection:
    """Kùzu embedded: ``kuzu:PATH`` (one read-write process per database; fine for one person's machine)."""

    dialect = "kuzu"

    def __init__(self, path: str | Path):
        kuzu = require("kuzu")
        Path(path).parent.mkdir(parents=True, exist_ok=True)
        try:
            self._db = kuzu.Database(str(path))
        except RuntimeError as exc:
            raise AutoAnalystError(f"The Kùzu database {path} cannot be opened ({exc}); Kùzu allows one process "
                                   "at a time: close the other one, or leave graph_url empty for the SQLite store.") from None
        self._conn = kuzu.Connection(self._db)
        self._lock = threading.Lock()  # one Kùzu connection is not safe across threads
        for statement in KUZU_SCHEMA:
            self._conn.execute(statement)

    def run(self, query: str, params: dict[str, Any] | None = None) -> list[list[Any]]:
        with self._lock:
            result = self._conn.execute(query, params or {})
            rows = []
            while result.has_next():
                rows.append(list(result.get_next()))
            return rows

    def close(self) -> None:
        self._conn.close()
        self._db.close()


class Neo4jConnection:
    """A Neo4j server: ``bolt://user:password@host:7687`` or ``neo4j://…`` (the neo4j driver, auto-commit)."""

    dialect = "neo4j"

    def __init__(self, url: str, driver: Any = None, database: str | None = None):
        if driver is None:
            neo4j = require("neo4j")
            parsed = urlparse(url)
            auth = (parsed.username, parsed.password or "") if parsed.username else None
            clean = parsed._replace(netloc=parsed.hostname + (f":{parsed.port}" if parsed.port else "")).geturl()
            driver = neo4j.GraphDatabase.driver(clean, auth=auth)
        self._driver, self._database = driver, database or (urlparse(url).path.strip("/") or None)
        for statement in INDEXES["neo4j"]:
            self.run(statement)

    def run(self, query: str, params: dict[str, Any] | None = None) -> list[list[Any]]:
        records, _, _ = self._driver.execute_query(query, params or {}, database_=self._database)
        return [list(r.values()) for r in records]

    def close(self) -> None:
        self._driver.close()


class FalkorConnection:
    """A FalkorDB server: ``falkor://[:password@]host:6379[/graph]`` (default graph ``auto_analyst``)."""

    dialect = "falkordb"

    def __init__(self, url: str, graph: Any = None):
        if graph is None:
            FalkorDB = require("falkordb").FalkorDB
            parsed = urlparse(url)
            db = FalkorDB(host=parsed.hostname or "localhost", port=parsed.port or 6379,
                          password=parsed.password or None)
            graph = db.select_graph(parsed.path.strip("/") or "auto_analyst")
        self._graph = graph
        for statement in INDEXES["falkordb"]:
            try:
                self.run(statement)
            except Exception:  # noqa: BLE001 - the index exists already (FalkorDB has no IF NOT EXISTS)
                pass

    def run(self, query: str, params: dict[str, Any] | None = None) -> list[list[Any]]:
        return [list(row) for row in (self._graph.query(query, params or {}).result_set or [])]

    def close(self) -> None:
        pass


def connect(url: str, settings: Settings | None = None) -> CypherConnection:
    """The adapter for ``url`` (see :func:`auto_analyst.memory.facts.graph.open_graph` for the schemes).

    Raises:
        BadInputError: unknown scheme or missing driver.
        AutoAnalystError: the engine cannot be opened or reached.
    """
    if url.startswith("kuzu:"):
        path = url[len("kuzu:"):].removeprefix("//")
        if not path and settings is not None:
            path = str(settings.home / "graph.kuzu")
        return KuzuConnection(Path(path).expanduser())
    try:
        if url.startswith(("bolt://", "bolt+s://", "neo4j://", "neo4j+s://")):
            return Neo4jConnection(url)
        if url.startswith(("falkor://", "falkordb://", "redis://")):
            return FalkorConnection(url)
    except (BadInputError, AutoAnalystError):
        raise
    except Exception as exc:  # noqa: BLE001 - any driver error: one sentence
        raise AutoAnalystError(f"The graph server at {urlparse(url).hostname} cannot be reached "
                               f"({type(exc).__name__}: {str(exc)[:160]}); start it, or leave graph_url empty.") from None
    raise BadInputError(f"graph_url {url!r} has a scheme I do not know.")
