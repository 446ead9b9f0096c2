"""The interface of the per-user graph store: memory stream, entity knowledge store, facts, and the tables seen.

Two backends implement it with the same behaviour (``tests/memory/test_facts_graph.py`` runs one
suite on each): :class:`~auto_analyst.memory.facts.graph.sql.SqlGraph` (SQLite with a recursive query, the
default) and :class:`~auto_analyst.memory.facts.graph.cypher.CypherGraph` (Cypher over Kùzu embedded, Neo4j
or FalkorDB). Every method takes the user first and reads or changes only that user's nodes.
"""

from __future__ import annotations

from abc import abstractmethod
from collections.abc import Iterable, Sequence
from typing import NamedTuple, Protocol, runtime_checkable

from auto_analyst.memory.facts.model import Fact

__all__ = ["GraphStore", "Walked", "SeenTable", "Mention", "FRONTIER_FACTS", "PER_SEED", "PER_ENDPOINT"]

FRONTIER_FACTS = 25
"""Facts of one depth whose endpoints the walk follows to the next depth (the best: most question entities, then
newest). Following every fact's endpoints (a recursive query) made the walk visit the whole graph through hub
entities, a column measured in a thousand facts: 2.5 s p50 at 10,000 facts; see docs/memory.md."""

PER_SEED = 200
"""Newest facts read per question entity at depth 1 (a hub such as a much-used column links thousands).
The three bounds were set on benchmarks/bench_facts.py (10,000 facts): they keep every fact joining two
question entities among the newest 200 of each, and the 12 facts a prompt takes come from the top of the ranking."""

PER_ENDPOINT = 10
"""Newest facts read per endpoint entity at depth 2 and beyond (they weigh half; 12 facts reach a prompt)."""


class Walked(NamedTuple):
    """One step of a walk: ``fact`` reached from question entity ``via`` at ``depth``; with its ranking inputs."""

    fact: str
    via: str
    depth: int
    at: str
    uses: int
    last_used: str


class SeenTable(NamedTuple):
    """A table the user had: its fingerprint, name, source file (\"\" for an in-memory frame) and that file's
    size and mtime (ns) when it was seen."""

    fingerprint: str
    name: str
    source: str
    size: int
    mtime_ns: int
    seen_at: str


class Mention(NamedTuple):
    """One row of the memory stream."""

    id: str
    session: str
    entity: str
    kind: str
    at: str


@runtime_checkable
class GraphStore(Protocol):
    """What memory asks of a graph engine (the facts store's contract). Writes are committed before a method returns.

    A Protocol whose engines subclass it explicitly: they must define every abstract method (checked when one is
    built) and share :meth:`walk`, :meth:`forget_user` and :meth:`close`.

    ``version`` counts this process's writes of facts (readers may cache what they derive from the facts).
    """

    version: int = 0

    # -- memory stream and entity knowledge store -----------------------------------------------------

    @abstractmethod
    def record_mentions(self, user: str, session: str, pairs: Sequence[tuple[str, str]], at: str) -> int:
        """Append one mention per (entity, kind) to the stream and count it in the knowledge store."""

    @abstractmethod
    def entity_counts(self, user: str) -> list[tuple[str, str, int, str]]:
        """(entity, kind, count, last_seen) of every entity mentioned by the user."""

    @abstractmethod
    def stream(self, user: str, limit: int) -> list[Mention]:
        """The most recent ``limit`` mentions, newest first."""

    @abstractmethod
    def forget_mentions(self, user: str, session: str | None = None) -> int:
        """Delete the user's mentions (of ``session`` only, if given) and recount; returns mentions deleted."""

    # -- facts ----------------------------------------------------------------------------------------

    @abstractmethod
    def add_facts(self, facts: Sequence[Fact]) -> int:
        """Store facts with their links (a fact already stored under its id is left as it is); returns those added."""

    @abstractmethod
    def reach(self, user: str, entities: Sequence[str], endpoints_only: bool, limit: int) -> list[tuple]:
        """Facts linked to any of ``entities`` (as subject/object only, with ``endpoints_only``), the newest
        ``limit`` per entity: rows ``(fact id, entity, at, uses, last_used)`` (``last_used`` may be "")."""

    @abstractmethod
    def endpoints(self, user: str, facts: Sequence[str]) -> list[tuple[str, str]]:
        """(fact, entity) for every subject/object entity of ``facts``."""

    def walk(self, user: str, seeds: Sequence[str], depth: int, frontier: int = FRONTIER_FACTS) -> list[Walked]:
        """Facts within ``depth`` of the ``seeds`` entities, one row per (fact, seed) at its least depth.

        Depth 1: the newest :data:`PER_SEED` facts linking each seed (any role). Depth d+1: the newest
        :data:`PER_ENDPOINT` facts of each subject/object entity of the ``frontier`` best facts of depth d (most
        seeds reached, then newest). See :data:`FRONTIER_FACTS` for why the walk is bounded.
        """
        seeds = list(dict.fromkeys(seeds))
        if not seeds or depth < 1:
            return []
        best: dict[tuple[str, str], tuple] = {}
        level: dict[str, set[str]] = {}
        for row in self.reach(user, seeds, False, PER_SEED):
            best.setdefault((row[0], row[1]), (1, row[2], row[3], row[4]))
            level.setdefault(row[0], set()).add(row[1])
        for d in range(2, depth + 1):
            if not level:
                break
            at = {f: best[(f, next(iter(v)))][1] for f, v in level.items()}
            top = sorted(level, key=lambda f: (len(level[f]), at[f], f), reverse=True)[:frontier]
            vias: dict[str, set[str]] = {}
            for fact, entity in self.endpoints(user, top):
                vias.setdefault(entity, set()).update(level[fact])
            nxt: dict[str, set[str]] = {}
            for fact, entity, ts, uses, last in self.reach(user, list(vias), True, PER_ENDPOINT) if vias else []:
                for via in vias[entity]:
                    if (fact, via) not in best:
                        best[(fact, via)] = (d, ts, uses, last)
                        nxt.setdefault(fact, set()).add(via)
            level = nxt
        return [Walked(f, via, d, ts, int(uses or 0), last or "") for (f, via), (d, ts, uses, last) in best.items()]

    @abstractmethod
    def get_facts(self, user: str, ids: Sequence[str], links: bool = True) -> list[Fact]:
        """The user's facts with these ids (with their links unless ``links`` is False: a prompt reads none, and they
        are most of what is read), in the order of ``ids``; unknown ids are skipped."""

    @abstractmethod
    def list_facts(self, user: str, limit: int | None = None, text: str = "", session: str | None = None) -> list[Fact]:
        """The user's facts, newest first; ``text``: only those whose subject, relation, object, filter, table or
        question contains it (case-insensitive)."""

    @abstractmethod
    def forget_facts(self, user: str, ids: Iterable[str] | None = None, session: str | None = None) -> int:
        """Delete facts by id, or of a session, or (both None) all the user's facts; returns the number deleted."""

    @abstractmethod
    def mark_used(self, user: str, ids: Sequence[str], at: str) -> None:
        """Count one more use of each fact (it went into a prompt) at ``at``."""

    @abstractmethod
    def known_entities(self, user: str) -> list[tuple[str, str]]:
        """(entity, kind) of every entity the user's facts link, for finding them in questions."""

    # -- tables ---------------------------------------------------------------------------------------

    @abstractmethod
    def record_tables(self, user: str, tables: Sequence[SeenTable]) -> None:
        """Remember tables the user had (upsert on fingerprint + source)."""

    @abstractmethod
    def tables(self, user: str) -> list[SeenTable]:
        """Every table the user was seen with."""

    def forget_user(self, user: str) -> int:
        """Delete the user's facts and entity memory; returns the facts deleted."""
        n = self.forget_facts(user)
        self.forget_mentions(user)
        return n

    def close(self) -> None:
        """Release connections (the SQL backend holds none between calls)."""
