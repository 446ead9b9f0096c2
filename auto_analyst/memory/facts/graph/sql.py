"""The graph store on SQL: nodes and edges as rows, the depth-2 walk as two indexed queries per depth.

The default engine, because it needs no service and several processes (the web workers, the CLI
next to ``serve``) may read and write the same database at once; an embedded graph engine such as
Kùzu allows one read-write process per database (see docs/memory.md, "Graph engine"). The tables
live in the storage's database (:mod:`auto_analyst.storage`): ``home/history.sqlite3`` by default,
PostgreSQL when ``database_url`` is set. Each write is one transaction committed before the call
returns, so a ``kill -9`` loses nothing committed. The walk is the bounded two-step of
:meth:`GraphStore.walk` over two indexed queries (``reach``, ``endpoints``). The SQL is what
SQLite and PostgreSQL share (``ON CONFLICT``, window-free ``UNION ALL`` of ``LIMIT`` branches,
``"user"`` quoted).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from functools import lru_cache
from typing import Any

from auto_analyst.memory.facts.model import ENDPOINT_ROLES, Fact, Link
from auto_analyst.memory.facts.graph.base import GraphStore, Mention, SeenTable
from auto_analyst.storage import Migrations, autoid, engine_for, read, real, sqlite_file, transaction

__all__ = ["SqlGraph", "migrations", "entity_migrations"]

entity_migrations = Migrations("entities")
"""The memory stream and the entity knowledge store (their tables predate the facts; the names stay)."""


@entity_migrations
def m001_entities(conn: Any) -> None:
    conn.exec_driver_sql(
        f"""CREATE TABLE entity_stream (
            {autoid(conn)}, "user" TEXT NOT NULL, session TEXT NOT NULL,
            entity TEXT NOT NULL, kind TEXT NOT NULL, at TEXT NOT NULL)""")
    conn.exec_driver_sql('CREATE INDEX entity_stream_user ON entity_stream ("user", id)')
    conn.exec_driver_sql(
        """CREATE TABLE entity_store (
            "user" TEXT NOT NULL, entity TEXT NOT NULL, kind TEXT NOT NULL, count INTEGER NOT NULL,
            first_seen TEXT NOT NULL, last_seen TEXT NOT NULL, PRIMARY KEY ("user", entity, kind))""")


migrations = Migrations("graph")


@migrations
def m001_facts(conn: Any) -> None:
    conn.exec_driver_sql(
        f"""CREATE TABLE facts (
            "user" TEXT NOT NULL, id TEXT NOT NULL, session TEXT NOT NULL, turn INTEGER NOT NULL, at TEXT NOT NULL,
            question TEXT NOT NULL, kind TEXT NOT NULL, subject TEXT NOT NULL, relation TEXT NOT NULL,
            object TEXT NOT NULL, value {real(conn)}, unit TEXT NOT NULL, stats_json TEXT NOT NULL, tbl TEXT NOT NULL,
            fingerprint TEXT NOT NULL, filter TEXT NOT NULL, source TEXT NOT NULL, uses INTEGER NOT NULL DEFAULT 0,
            last_used TEXT NOT NULL DEFAULT '', PRIMARY KEY ("user", id))""")
    conn.exec_driver_sql('CREATE INDEX facts_user_at ON facts ("user", at)')
    conn.exec_driver_sql(
        """CREATE TABLE fact_links (
            "user" TEXT NOT NULL, fact TEXT NOT NULL, entity TEXT NOT NULL, kind TEXT NOT NULL, role TEXT NOT NULL,
            path INTEGER NOT NULL, at TEXT NOT NULL, uses INTEGER NOT NULL DEFAULT 0,
            PRIMARY KEY ("user", fact, entity, role))""")
    # the fact's time and use count are repeated on its links: "the newest N facts of an entity, with what the
    # ranking needs" is then one index range, with no second query
    conn.exec_driver_sql('CREATE INDEX fact_links_entity ON fact_links ("user", entity, at)')
    conn.exec_driver_sql('CREATE INDEX fact_links_endpoint ON fact_links ("user", entity, path, at)')
    conn.exec_driver_sql(
        """CREATE TABLE fact_tables (
            "user" TEXT NOT NULL, fingerprint TEXT NOT NULL, name TEXT NOT NULL, source TEXT NOT NULL,
            size BIGINT NOT NULL, mtime_ns BIGINT NOT NULL, seen_at TEXT NOT NULL,
            PRIMARY KEY ("user", fingerprint, source))""")


@migrations
def m002_fact_entities(conn: Any) -> None:
    """The entities the facts link, with how many facts link each (read for every question: kept small)."""
    conn.exec_driver_sql(
        """CREATE TABLE fact_entities (
            "user" TEXT NOT NULL, entity TEXT NOT NULL, kind TEXT NOT NULL, facts INTEGER NOT NULL,
            PRIMARY KEY ("user", entity, kind))""")


_FACT_COLUMNS = ('id, "user", session, turn, at, question, kind, subject, relation, object, value, unit, stats_json, '
                 "tbl, fingerprint, filter, source, uses, last_used")


@lru_cache(maxsize=128)
def _sql(statement: str, *expanding: str):
    # one TextClause per statement: SQLAlchemy then finds its compiled form by the object's memoised cache key
    # instead of building a new clause and key for each call (~15 us a statement)
    from sqlalchemy import bindparam, text

    t = text(statement)
    return t.bindparams(*(bindparam(name, expanding=True) for name in expanding)) if expanding else t


def _placeholder(conn: Any) -> str:
    """The DB-API driver's positional placeholder (sqlite3: ``?``; psycopg: ``%s``)."""
    return "?" if conn.dialect.paramstyle == "qmark" else "%s"


def _recount_entities(conn: Any, user: str) -> None:
    conn.execute(_sql('DELETE FROM fact_entities WHERE "user" = :u'), {"u": user})
    conn.execute(_sql("""INSERT INTO fact_entities ("user", entity, kind, facts)
                         SELECT "user", entity, kind, COUNT(*) FROM fact_links WHERE "user" = :u
                         GROUP BY "user", entity, kind"""), {"u": user})


class SqlGraph(GraphStore):
    """The graph store in the storage's database.

    Args:
        target: a database URL, a SQLite file Path or an Engine (see :func:`auto_analyst.storage.engine_for`).
    """

    def __init__(self, target: Any):
        self.engine = engine_for(target)
        self.path = sqlite_file(self.engine)
        entity_migrations.ensure(self.engine)
        migrations.ensure(self.engine)

    # -- memory stream and entity knowledge store -----------------------------------------------------

    def record_mentions(self, user: str, session: str, pairs: Sequence[tuple[str, str]], at: str) -> int:
        rows = [{"u": user, "s": session, "e": name, "k": kind, "at": at} for name, kind in pairs]
        with transaction(self.engine) as conn:
            conn.execute(_sql('INSERT INTO entity_stream ("user", session, entity, kind, at) '
                              "VALUES (:u, :s, :e, :k, :at)"), rows)
            conn.execute(_sql(
                """INSERT INTO entity_store ("user", entity, kind, count, first_seen, last_seen)
                   VALUES (:u, :e, :k, 1, :at, :at) ON CONFLICT ("user", entity, kind) DO UPDATE SET
                   count = entity_store.count + 1,
                   last_seen = CASE WHEN excluded.last_seen > entity_store.last_seen
                               THEN excluded.last_seen ELSE entity_store.last_seen END"""), rows)
        return len(pairs)

    def entity_counts(self, user: str) -> list[tuple[str, str, int, str]]:
        with read(self.engine) as conn:
            rows = conn.execute(_sql('SELECT entity, kind, count, last_seen FROM entity_store WHERE "user" = :u'),
                                {"u": user}).all()
        return [(r[0], r[1], int(r[2]), r[3]) for r in rows]

    def stream(self, user: str, limit: int) -> list[Mention]:
        with read(self.engine) as conn:
            rows = conn.execute(_sql('SELECT id, session, entity, kind, at FROM entity_stream WHERE "user" = :u '
                                     "ORDER BY id DESC LIMIT :n"), {"u": user, "n": int(limit)}).all()
        return [Mention(str(r[0]), r[1], r[2], r[3], r[4]) for r in rows]

    def forget_mentions(self, user: str, session: str | None = None) -> int:
        with transaction(self.engine) as conn:
            if session is None:
                n = conn.execute(_sql('DELETE FROM entity_stream WHERE "user" = :u'), {"u": user}).rowcount
            else:
                n = conn.execute(_sql('DELETE FROM entity_stream WHERE "user" = :u AND session = :s'),
                                 {"u": user, "s": session}).rowcount
            conn.execute(_sql('DELETE FROM entity_store WHERE "user" = :u'), {"u": user})
            conn.execute(_sql(
                """INSERT INTO entity_store ("user", entity, kind, count, first_seen, last_seen)
                   SELECT "user", entity, kind, COUNT(*), MIN(at), MAX(at) FROM entity_stream
                   WHERE "user" = :u GROUP BY "user", entity, kind"""), {"u": user})
        return n

    # -- facts ----------------------------------------------------------------------------------------

    def add_facts(self, facts: Sequence[Fact]) -> int:
        self.version += 1
        facts = list({(f.user, f.id): f for f in (x.with_id() for x in facts)}.values())
        if not facts:
            return 0
        with transaction(self.engine) as conn:
            have = set()
            for user in {f.user for f in facts}:
                have |= {(user, r[0]) for r in conn.execute(
                    _sql('SELECT id FROM facts WHERE "user" = :u AND id IN :ids', "ids"),
                    {"u": user, "ids": [f.id for f in facts if f.user == user]})}
            new = [f for f in facts if (f.user, f.id) not in have]
            if not new:
                return 0
            conn.execute(_sql(
                f"INSERT INTO facts ({_FACT_COLUMNS}) VALUES (:id, :u, :session, :turn, :at, :question, :kind, "
                ":subject, :relation, :object, :value, :unit, :stats, :tbl, :fp, :filter, :source, :uses, :last)"),
                [{"id": f.id, "u": f.user, "session": f.session, "turn": f.turn, "at": f.at, "question": f.question,
                  "kind": f.kind, "subject": f.subject, "relation": f.relation, "object": f.object, "value": f.value,
                  "unit": f.unit, "stats": json.dumps(f.stats), "tbl": f.table, "fp": f.fingerprint,
                  "filter": f.filter, "source": f.source, "uses": f.uses, "last": f.last_used} for f in new])
            links = list(dict.fromkeys((f.user, f.id, lk.entity, lk.kind, lk.role, int(lk.role in ENDPOINT_ROLES), f.at)
                                       for f in new for lk in f.links))
            if links:
                conn.execute(_sql('INSERT INTO fact_links ("user", fact, entity, kind, role, path, at) '
                                  "VALUES (:u, :f, :e, :k, :r, :p, :at) ON CONFLICT DO NOTHING"),
                             [dict(zip(("u", "f", "e", "k", "r", "p", "at"), lk)) for lk in links])
                counts: dict[tuple[str, str, str], int] = {}
                for user, _, entity, kind, _, _, _ in links:
                    counts[(user, entity, kind)] = counts.get((user, entity, kind), 0) + 1
                conn.execute(_sql('INSERT INTO fact_entities ("user", entity, kind, facts) VALUES (:u, :e, :k, :n) '
                                  'ON CONFLICT ("user", entity, kind) DO UPDATE SET '
                                  "facts = fact_entities.facts + excluded.facts"),
                             [{"u": u, "e": e, "k": k, "n": n} for (u, e, k), n in counts.items()])
        return len(new)

    def reach(self, user: str, entities: Sequence[str], endpoints_only: bool, limit: int) -> list[tuple]:
        # The hot path of every question: plain DB-API statements (SQLAlchemy's text() compiles a 200-branch
        # union and 500 expanding parameters on each call, and iterating a Result fetches row by row).
        entities = list(dict.fromkeys(entities))
        path = " AND path = 1" if endpoints_only else ""
        links: list[tuple] = []
        with read(self.engine) as conn:
            q = _placeholder(conn)
            for k in range(0, len(entities), 200):  # SQLite allows 500 terms in one compound SELECT
                chunk = entities[k:k + 200]
                union = " UNION ALL ".join(
                    f'SELECT * FROM (SELECT fact, entity, at, uses FROM fact_links WHERE "user" = {q} AND entity = {q}'
                    f"{path} ORDER BY at DESC, fact LIMIT {int(limit)}) AS b{i}" for i in range(len(chunk)))
                links += conn.exec_driver_sql(union, tuple(x for e in chunk for x in (user, e))).fetchall()
        return [(f, e, at, uses, "") for f, e, at, uses in links]

    def endpoints(self, user: str, facts: Sequence[str]) -> list[tuple[str, str]]:
        facts = list(dict.fromkeys(facts))
        if not facts:
            return []
        with read(self.engine) as conn:
            q = _placeholder(conn)
            return [(r[0], r[1]) for r in conn.exec_driver_sql(
                f'SELECT fact, entity FROM fact_links WHERE "user" = {q} AND path = 1 AND fact IN '
                f'({", ".join([q] * len(facts))})', (user, *facts)).fetchall()]

    def get_facts(self, user: str, ids: Sequence[str], links: bool = True) -> list[Fact]:
        ids = list(dict.fromkeys(ids))
        if not ids:
            return []
        with read(self.engine) as conn:  # read for every question: plain driver statements, as in reach()
            q = _placeholder(conn)
            marks = ", ".join([q] * len(ids))
            rows = conn.exec_driver_sql(f'SELECT {_FACT_COLUMNS} FROM facts WHERE "user" = {q} AND id IN ({marks})',
                                        (user, *ids)).fetchall()
            found = conn.exec_driver_sql(f'SELECT fact, entity, kind, role FROM fact_links WHERE "user" = {q} '
                                         f"AND fact IN ({marks})", (user, *ids)).fetchall() if links else []
        return _facts(rows, found, order=ids)

    def list_facts(self, user: str, limit: int | None = None, text: str = "", session: str | None = None) -> list[Fact]:
        sql, args = f'SELECT {_FACT_COLUMNS} FROM facts WHERE "user" = :u', {"u": user}
        if session is not None:
            sql += " AND session = :s"
            args["s"] = session
        if text:
            sql += (" AND LOWER(subject || ' ' || relation || ' ' || object || ' ' || filter || ' ' || tbl || ' ' || "
                    "question) LIKE :t")
            args["t"] = "%" + text.lower() + "%"
        sql += " ORDER BY at DESC, id"
        if limit is not None:
            sql += " LIMIT :n"
            args["n"] = int(limit)
        with read(self.engine) as conn:
            rows = conn.execute(_sql(sql), args).all()
            ids = [r[0] for r in rows]
            links = []
            for k in range(0, len(ids), 500):
                links += conn.execute(_sql('SELECT fact, entity, kind, role FROM fact_links WHERE "user" = :u '
                                           "AND fact IN :ids", "ids"), {"u": user, "ids": ids[k:k + 500]}).all()
        return _facts(rows, links, order=ids)

    def forget_facts(self, user: str, ids: Iterable[str] | None = None, session: str | None = None) -> int:
        self.version += 1
        with transaction(self.engine) as conn:
            if ids is not None:
                ids = list(ids)
                if not ids:
                    return 0
                n = conn.execute(_sql('DELETE FROM facts WHERE "user" = :u AND id IN :ids', "ids"),
                                 {"u": user, "ids": ids}).rowcount
                conn.execute(_sql('DELETE FROM fact_links WHERE "user" = :u AND fact IN :ids', "ids"),
                             {"u": user, "ids": ids})
                _recount_entities(conn, user)
                return n
            if session is not None:
                conn.execute(_sql('DELETE FROM fact_links WHERE "user" = :u AND fact IN '
                                  '(SELECT id FROM facts WHERE "user" = :u AND session = :s)'), {"u": user, "s": session})
                n = conn.execute(_sql('DELETE FROM facts WHERE "user" = :u AND session = :s'),
                                 {"u": user, "s": session}).rowcount
                _recount_entities(conn, user)
                return n
            for table in ("fact_entities", "fact_links", "fact_tables"):
                conn.execute(_sql(f'DELETE FROM {table} WHERE "user" = :u'), {"u": user})
            return conn.execute(_sql('DELETE FROM facts WHERE "user" = :u'), {"u": user}).rowcount

    def mark_used(self, user: str, ids: Sequence[str], at: str) -> None:
        if ids:
            with transaction(self.engine) as conn:
                args = {"at": at, "u": user, "ids": list(dict.fromkeys(ids))}
                conn.execute(_sql('UPDATE facts SET uses = uses + 1, last_used = :at WHERE "user" = :u AND id IN :ids',
                                  "ids"), args)
                conn.execute(_sql('UPDATE fact_links SET uses = uses + 1 WHERE "user" = :u AND fact IN :ids', "ids"), args)

    def known_entities(self, user: str) -> list[tuple[str, str]]:
        with read(self.engine) as conn:
            rows = conn.execute(_sql('SELECT entity, kind FROM fact_entities WHERE "user" = :u AND facts > 0'),
                                {"u": user}).all()
        return [(r[0], r[1]) for r in rows]

    # -- tables ---------------------------------------------------------------------------------------

    def record_tables(self, user: str, tables: Sequence[SeenTable]) -> None:
        if tables:
            with transaction(self.engine) as conn:
                conn.execute(_sql(
                    """INSERT INTO fact_tables ("user", fingerprint, name, source, size, mtime_ns, seen_at)
                       VALUES (:u, :fp, :name, :source, :size, :mtime, :seen)
                       ON CONFLICT ("user", fingerprint, source) DO UPDATE SET name = excluded.name,
                       size = excluded.size, mtime_ns = excluded.mtime_ns, seen_at = excluded.seen_at"""),
                    [{"u": user, "fp": t.fingerprint, "name": t.name, "source": t.source, "size": t.size,
                      "mtime": t.mtime_ns, "seen": t.seen_at} for t in tables])

    def tables(self, user: str) -> list[SeenTable]:
        with read(self.engine) as conn:
            rows = conn.execute(_sql('SELECT fingerprint, name, source, size, mtime_ns, seen_at FROM fact_tables '
                                     'WHERE "user" = :u'), {"u": user}).all()
        return [SeenTable(r[0], r[1], r[2], int(r[3]), int(r[4]), r[5]) for r in rows]


def _facts(rows: list, links: list, order: Sequence[str]) -> list[Fact]:
    # rows this store wrote from validated Facts: built without validating again (5x faster, read per question)
    by_fact: dict[str, list[Link]] = {}
    for fact, entity, kind, role in links:
        by_fact.setdefault(fact, []).append(Link.model_construct(entity=entity, kind=kind, role=role))
    found = {}
    for r in rows:
        found[r[0]] = Fact.model_construct(
            id=r[0], user=r[1], session=r[2], turn=int(r[3]), at=r[4], question=r[5], kind=r[6], subject=r[7],
            relation=r[8], object=r[9], value=r[10], unit=r[11], stats=json.loads(r[12] or "{}"), table=r[13],
            fingerprint=r[14], filter=r[15], source=r[16], uses=int(r[17]), last_used=r[18],
            links=by_fact.get(r[0], []), stale=False)
    return [found[i] for i in order if i in found]
