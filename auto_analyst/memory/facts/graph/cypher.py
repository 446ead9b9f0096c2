"""The graph store in Cypher: one text for Kùzu (embedded), Neo4j and FalkorDB, through a connection adapter.

Nodes: ``(:Entity {key, user, name, kind, count, first_seen, last_seen})`` (the knowledge store and
the facts' entities), ``(:Fact {key, id, user, …})``, ``(:Mention {key, user, session, entity, kind,
at})`` (the memory stream) and ``(:SeenTable {key, user, fingerprint, …})``; edges
``(:Fact)-[:ABOUT {role, path}]->(:Entity)``. Every key starts with the user id, and every match
filters on ``user``. Only the subset of Cypher the three engines share is used: MATCH/WHERE/RETURN,
CREATE, MERGE … ON CREATE SET, SET, DETACH DELETE, UNWIND of maps, ``IN`` and ``CONTAINS``.
"""

from __future__ import annotations

import json
import re
import secrets
from collections.abc import Iterable, Sequence
from typing import Any

from auto_analyst.memory.facts.model import ENDPOINT_ROLES, Fact, Link
from auto_analyst.memory.facts.graph.adapters import CypherConnection
from auto_analyst.memory.facts.graph.base import GraphStore, Mention, SeenTable

__all__ = ["CypherGraph"]

SEP = "\x1f"

_PROPS = ("id", "user", "session", "turn", "at", "question", "kind", "subject", "relation", "object", "value", "unit",
          "stats", "tbl", "fingerprint", "filter", "source", "uses", "last_used")
_RETURN = ", ".join(f"f.{p}" for p in _PROPS)


def _ekey(user: str, name: str, kind: str) -> str:
    return SEP.join((user, kind, name))


def _fkey(user: str, fact_id: str) -> str:
    return user + SEP + fact_id


class CypherGraph(GraphStore):
    """The graph store over a :class:`~auto_analyst.memory.facts.graph.adapters.CypherConnection`."""

    def __init__(self, conn: CypherConnection):
        self.conn = conn

    def _run(self, query: str, **params: Any) -> list[list[Any]]:
        # Kùzu refuses parameters a statement does not use
        used = {k: v for k, v in params.items() if re.search(r"\$" + k + r"\b", query)}
        return self.conn.run(query, used)

    # -- memory stream and entity knowledge store -----------------------------------------------------

    def record_mentions(self, user: str, session: str, pairs: Sequence[tuple[str, str]], at: str) -> int:
        rows = [{"key": _ekey(user, n, k), "name": n, "kind": k,
                 "mention": SEP.join((user, at, secrets.token_hex(6)))} for n, k in pairs]
        self._run("UNWIND $rows AS r MERGE (e:Entity {key: r.key}) ON CREATE SET e.user = $user, e.name = r.name, "
                  "e.kind = r.kind, e.count = 0, e.first_seen = $at, e.last_seen = $at", rows=rows, user=user, at=at)
        self._run("UNWIND $rows AS r MATCH (e:Entity {key: r.key}) SET e.count = e.count + 1, "
                  "e.first_seen = CASE WHEN e.first_seen = '' OR e.first_seen > $at THEN $at ELSE e.first_seen END, "
                  "e.last_seen = CASE WHEN e.last_seen < $at THEN $at ELSE e.last_seen END", rows=rows, at=at)
        self._run("UNWIND $rows AS r CREATE (:Mention {key: r.mention, user: $user, session: $session, "
                  "entity: r.name, kind: r.kind, at: $at})", rows=rows, user=user, session=session, at=at)
        return len(pairs)

    def entity_counts(self, user: str) -> list[tuple[str, str, int, str]]:
        rows = self._run("MATCH (e:Entity) WHERE e.user = $user AND e.count > 0 "
                         "RETURN e.name, e.kind, e.count, e.last_seen", user=user)
        return [(r[0], r[1], int(r[2]), r[3]) for r in rows]

    def stream(self, user: str, limit: int) -> list[Mention]:
        rows = self._run(f"MATCH (m:Mention) WHERE m.user = $user RETURN m.key, m.session, m.entity, m.kind, m.at "
                         f"ORDER BY m.at DESC, m.key DESC LIMIT {int(limit)}", user=user)
        return [Mention(*r) for r in rows]

    def forget_mentions(self, user: str, session: str | None = None) -> int:
        where = "m.user = $user" + (" AND m.session = $session" if session is not None else "")
        n = int(self._run(f"MATCH (m:Mention) WHERE {where} RETURN count(m)", user=user, session=session)[0][0])
        self._run(f"MATCH (m:Mention) WHERE {where} DELETE m", user=user, session=session)
        self._run("MATCH (e:Entity) WHERE e.user = $user SET e.count = 0, e.first_seen = '', e.last_seen = ''", user=user)
        left = self._run("MATCH (m:Mention) WHERE m.user = $user RETURN m.entity, m.kind, count(m), min(m.at), max(m.at)",
                         user=user)
        rows = [{"key": _ekey(user, r[0], r[1]), "count": int(r[2]), "first": r[3], "last": r[4]} for r in left]
        if rows:
            self._run("UNWIND $rows AS r MATCH (e:Entity {key: r.key}) SET e.count = r.count, e.first_seen = r.first, "
                      "e.last_seen = r.last", rows=rows)
        return n

    # -- facts ----------------------------------------------------------------------------------------

    def add_facts(self, facts: Sequence[Fact]) -> int:
        self.version += 1
        facts = [f.with_id() for f in facts]
        if not facts:
            return 0
        keys = [_fkey(f.user, f.id) for f in facts]
        existing = {r[0] for r in self._run("MATCH (f:Fact) WHERE f.key IN $keys RETURN f.key", keys=keys)}
        new = list({k: f for k, f in zip(keys, facts) if k not in existing}.items())
        if not new:
            return 0
        rows = [{"key": k, "id": f.id, "user": f.user, "session": f.session, "turn": f.turn, "at": f.at,
                 "question": f.question, "kind": f.kind, "subject": f.subject, "relation": f.relation,
                 "object": f.object, "value": f.value, "unit": f.unit, "stats": json.dumps(f.stats), "tbl": f.table,
                 "fingerprint": f.fingerprint, "filter": f.filter, "source": f.source, "uses": f.uses,
                 "last_used": f.last_used, "text": _text(f)} for k, f in new]
        self._run("UNWIND $rows AS r CREATE (:Fact {key: r.key, id: r.id, user: r.user, session: r.session, "
                  "turn: r.turn, at: r.at, question: r.question, kind: r.kind, subject: r.subject, "
                  "relation: r.relation, object: r.object, value: r.value, unit: r.unit, stats: r.stats, tbl: r.tbl, "
                  "fingerprint: r.fingerprint, filter: r.filter, source: r.source, uses: r.uses, "
                  "last_used: r.last_used, text: r.text})", rows=rows)
        links = [{"fact": k, "key": _ekey(f.user, lk.entity, lk.kind), "user": f.user, "name": lk.entity,
                  "kind": lk.kind, "role": lk.role, "path": int(lk.role in ENDPOINT_ROLES)}
                 for k, f in new for lk in f.links]
        if links:
            self._run("UNWIND $links AS l MERGE (e:Entity {key: l.key}) ON CREATE SET e.user = l.user, "
                      "e.name = l.name, e.kind = l.kind, e.count = 0, e.first_seen = '', e.last_seen = ''", links=links)
            self._run("UNWIND $links AS l MATCH (f:Fact {key: l.fact}), (e:Entity {key: l.key}) "
                      "CREATE (f)-[:ABOUT {role: l.role, path: l.path}]->(e)", links=links)
        return len(new)

    def reach(self, user: str, entities: Sequence[str], endpoints_only: bool, limit: int) -> list[tuple]:
        path = " AND a.path = 1" if endpoints_only else ""
        rows = self._run(f"MATCH (f:Fact)-[a:ABOUT]->(e:Entity) WHERE e.user = $user AND e.name IN $names{path} "
                         "RETURN DISTINCT f.id, e.name, f.at, f.uses, f.last_used", user=user, names=list(entities))
        rows.sort(key=lambda r: (r[2], r[0]), reverse=True)  # newest first, as the SQL backend's window
        taken: dict[str, int] = {}
        out = []
        for r in rows:
            if taken.get(r[1], 0) < limit:
                taken[r[1]] = taken.get(r[1], 0) + 1
                out.append((r[0], r[1], r[2], int(r[3] or 0), r[4] or ""))
        return out

    def endpoints(self, user: str, facts: Sequence[str]) -> list[tuple[str, str]]:
        rows = self._run("MATCH (f:Fact)-[a:ABOUT]->(e:Entity) WHERE f.key IN $keys AND a.path = 1 RETURN f.id, e.name",
                         keys=[_fkey(user, i) for i in facts])
        return [(r[0], r[1]) for r in rows]

    def get_facts(self, user: str, ids: Sequence[str], links: bool = True) -> list[Fact]:
        ids = list(dict.fromkeys(ids))
        return self._facts(user, "f.key IN $keys", order=ids, with_links=links,
                           keys=[_fkey(user, i) for i in ids]) if ids else []

    def list_facts(self, user: str, limit: int | None = None, text: str = "", session: str | None = None) -> list[Fact]:
        where = "f.user = $user" + (" AND f.session = $session" if session is not None else "")
        where += " AND f.text CONTAINS $text" if text else ""
        tail = " ORDER BY f.at DESC, f.id" + (f" LIMIT {int(limit)}" if limit is not None else "")
        return self._facts(user, where, tail=tail, user_=user, session=session, text=text.lower())

    def _facts(self, user: str, where: str, order: Sequence[str] | None = None, tail: str = "", with_links: bool = True,
               **params) -> list[Fact]:
        params = {("user" if k == "user_" else k): v for k, v in params.items() if v is not None}
        params.setdefault("user", user)
        rows = self._run(f"MATCH (f:Fact) WHERE {where} AND f.user = $user RETURN {_RETURN}{tail}", **params)
        keys = [_fkey(user, r[0]) for r in rows]
        links: dict[str, list[Link]] = {}
        for k in range(0, len(keys) if with_links else 0, 500):
            for fid, name, kind, role in self._run(
                    "MATCH (f:Fact)-[a:ABOUT]->(e:Entity) WHERE f.key IN $keys RETURN f.id, e.name, e.kind, a.role",
                    keys=keys[k:k + 500]):
                links.setdefault(fid, []).append(Link(entity=name, kind=kind, role=role))
        found = {}
        for r in rows:
            p = dict(zip(_PROPS, r))
            found[p["id"]] = Fact(id=p["id"], user=p["user"], session=p["session"], turn=int(p["turn"]), at=p["at"],
                                  question=p["question"], kind=p["kind"], subject=p["subject"], relation=p["relation"],
                                  object=p["object"], value=p["value"], unit=p["unit"],
                                  stats=json.loads(p["stats"] or "{}"), table=p["tbl"], fingerprint=p["fingerprint"],
                                  filter=p["filter"], source=p["source"], uses=int(p["uses"] or 0),
                                  last_used=p["last_used"] or "", links=links.get(p["id"], []))
        return [found[i] for i in (order if order is not None else [r[0] for r in rows]) if i in found]

    def forget_facts(self, user: str, ids: Iterable[str] | None = None, session: str | None = None) -> int:
        self.version += 1
        if ids is not None:
            where, params = "f.key IN $keys", {"keys": [_fkey(user, i) for i in ids]}
        elif session is not None:
            where, params = "f.user = $user AND f.session = $session", {"user": user, "session": session}
        else:
            where, params = "f.user = $user", {"user": user}
        n = int(self._run(f"MATCH (f:Fact) WHERE {where} RETURN count(f)", **params)[0][0])
        self._run(f"MATCH (f:Fact) WHERE {where} DETACH DELETE f", **params)
        if ids is None and session is None:
            self._run("MATCH (t:SeenTable) WHERE t.user = $user DELETE t", user=user)
        return n

    def mark_used(self, user: str, ids: Sequence[str], at: str) -> None:
        if ids:
            self._run("MATCH (f:Fact) WHERE f.key IN $keys SET f.uses = f.uses + 1, f.last_used = $at",
                      keys=[_fkey(user, i) for i in dict.fromkeys(ids)], at=at)

    def known_entities(self, user: str) -> list[tuple[str, str]]:
        rows = self._run("MATCH (f:Fact)-[:ABOUT]->(e:Entity) WHERE e.user = $user RETURN DISTINCT e.name, e.kind",
                         user=user)
        return [(r[0], r[1]) for r in rows]

    # -- tables ---------------------------------------------------------------------------------------

    def record_tables(self, user: str, tables: Sequence[SeenTable]) -> None:
        rows = [{"key": SEP.join((user, t.fingerprint, t.source)), **t._asdict()} for t in tables]
        if rows:
            self._run("UNWIND $rows AS r MERGE (t:SeenTable {key: r.key}) SET t.user = $user, "
                      "t.fingerprint = r.fingerprint, t.name = r.name, t.source = r.source, t.size = r.size, "
                      "t.mtime_ns = r.mtime_ns, t.seen_at = r.seen_at", rows=rows, user=user)

    def tables(self, user: str) -> list[SeenTable]:
        rows = self._run("MATCH (t:SeenTable) WHERE t.user = $user "
                         "RETURN t.fingerprint, t.name, t.source, t.size, t.mtime_ns, t.seen_at", user=user)
        return [SeenTable(r[0], r[1], r[2], int(r[3]), int(r[4]), r[5]) for r in rows]

    def close(self) -> None:
        self.conn.close()


def _text(f: Fact) -> str:
    return " ".join((f.subject, f.relation, f.object, f.filter, f.table, f.question)).lower()
