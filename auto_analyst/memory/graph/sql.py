"""The graph store on SQL: nodes and edges as rows, the depth-2 walk as one recursive query.

The default engine, because it needs no service and several processes (the web workers, the CLI
next to ``serve``) may read and write the same file at once; an embedded graph engine such as Kùzu
allows one read-write process per database (see docs/memory.md, "Graph engine"). Tables live in
``history.sqlite3`` beside the history (WAL, each call a short transaction that is committed before
it returns, so a ``kill -9`` loses nothing committed). The SQL is the common subset of SQLite and
PostgreSQL (``WITH RECURSIVE``, ``ON CONFLICT``); the statements go through :func:`connect` /
:func:`transaction` of :mod:`auto_analyst.memory.migrations`.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterable, Sequence
from pathlib import Path

from auto_analyst.memory.facts import ENDPOINT_ROLES, Fact, Link
from auto_analyst.memory.graph.base import GraphStore, Mention, SeenTable, Walked
from auto_analyst.memory.migrations import Migrations, connect, transaction

__all__ = ["SqlGraph", "migrations", "entity_migrations"]

entity_migrations = Migrations("entities")
"""The memory stream and the entity knowledge store (their tables predate the facts; the name stays)."""


@entity_migrations
def m001_entities(conn: sqlite3.Connection) -> None:
    conn.execute(
        """CREATE TABLE entity_stream (
            id INTEGER PRIMARY KEY AUTOINCREMENT, user TEXT NOT NULL, session TEXT NOT NULL,
            entity TEXT NOT NULL, kind TEXT NOT NULL, at TEXT NOT NULL)"""
    )
    conn.execute("CREATE INDEX entity_stream_user ON entity_stream (user, id)")
    conn.execute(
        """CREATE TABLE entity_store (
            user TEXT NOT NULL, entity TEXT NOT NULL, kind TEXT NOT NULL, count INTEGER NOT NULL,
            first_seen TEXT NOT NULL, last_seen TEXT NOT NULL, PRIMARY KEY (user, entity, kind))"""
    )


migrations = Migrations("graph")


@migrations
def m001_facts(conn: sqlite3.Connection) -> None:
    conn.execute(
        """CREATE TABLE facts (
            user TEXT NOT NULL, id TEXT NOT NULL, session TEXT NOT NULL, turn INTEGER NOT NULL, at TEXT NOT NULL,
            question TEXT NOT NULL, kind TEXT NOT NULL, subject TEXT NOT NULL, relation TEXT NOT NULL,
            object TEXT NOT NULL, value REAL, unit TEXT NOT NULL, stats_json TEXT NOT NULL, tbl TEXT NOT NULL,
            fingerprint TEXT NOT NULL, filter TEXT NOT NULL, source TEXT NOT NULL, uses INTEGER NOT NULL DEFAULT 0,
            last_used TEXT NOT NULL DEFAULT '', PRIMARY KEY (user, id))"""
    )
    conn.execute("CREATE INDEX facts_user_at ON facts (user, at)")
    conn.execute(
        """CREATE TABLE fact_links (
            user TEXT NOT NULL, fact TEXT NOT NULL, entity TEXT NOT NULL, kind TEXT NOT NULL, role TEXT NOT NULL,
            path INTEGER NOT NULL, PRIMARY KEY (user, fact, entity, role))"""
    )
    conn.execute("CREATE INDEX fact_links_entity ON fact_links (user, entity, path)")
    conn.execute(
        """CREATE TABLE fact_tables (
            user TEXT NOT NULL, fingerprint TEXT NOT NULL, name TEXT NOT NULL, source TEXT NOT NULL,
            size INTEGER NOT NULL, mtime_ns INTEGER NOT NULL, seen_at TEXT NOT NULL,
            PRIMARY KEY (user, fingerprint, source))"""
    )


_FACT_COLUMNS = ("id, user, session, turn, at, question, kind, subject, relation, object, value, unit, stats_json, "
                 "tbl, fingerprint, filter, source, uses, last_used")

_WALK = """
WITH RECURSIVE seed(entity) AS (VALUES {seeds}),
walk(fact, depth, via) AS (
    SELECT l.fact, 1, l.entity FROM fact_links l JOIN seed s ON l.entity = s.entity WHERE l.user = ?
    UNION
    SELECT l2.fact, w.depth + 1, w.via FROM walk w
    JOIN fact_links l1 ON l1.user = ? AND l1.fact = w.fact AND l1.path = 1
    JOIN fact_links l2 ON l2.user = ? AND l2.entity = l1.entity AND l2.path = 1 AND l2.fact <> w.fact
    WHERE w.depth < ?
)
SELECT w.fact, w.via, MIN(w.depth) AS depth, f.at, f.uses, f.last_used
FROM walk w JOIN facts f ON f.user = ? AND f.id = w.fact
GROUP BY w.fact, w.via, f.at, f.uses, f.last_used
"""


class SqlGraph(GraphStore):
    """The graph store in an SQLite file (default: ``settings.home / "history.sqlite3"``)."""

    def __init__(self, path: Path):
        self.path = Path(path)
        entity_migrations.apply(self.path)
        migrations.apply(self.path)

    # -- memory stream and entity knowledge store -----------------------------------------------------

    def record_mentions(self, user: str, session: str, pairs: Sequence[tuple[str, str]], at: str) -> int:
        with transaction(self.path) as conn:
            for name, kind in pairs:
                conn.execute("INSERT INTO entity_stream (user, session, entity, kind, at) VALUES (?, ?, ?, ?, ?)",
                             (user, session, name, kind, at))
                conn.execute(
                    """INSERT INTO entity_store (user, entity, kind, count, first_seen, last_seen)
                       VALUES (?, ?, ?, 1, ?, ?) ON CONFLICT (user, entity, kind) DO UPDATE SET
                       count = entity_store.count + 1,
                       last_seen = CASE WHEN excluded.last_seen > entity_store.last_seen
                                   THEN excluded.last_seen ELSE entity_store.last_seen END""",
                    (user, name, kind, at, at))
        return len(pairs)

    def entity_counts(self, user: str) -> list[tuple[str, str, int, str]]:
        with _reading(self.path) as conn:
            rows = conn.execute("SELECT entity, kind, count, last_seen FROM entity_store WHERE user = ?",
                                (user,)).fetchall()
        return [(r[0], r[1], int(r[2]), r[3]) for r in rows]

    def stream(self, user: str, limit: int) -> list[Mention]:
        with _reading(self.path) as conn:
            rows = conn.execute("SELECT id, session, entity, kind, at FROM entity_stream WHERE user = ? "
                                "ORDER BY id DESC LIMIT ?", (user, int(limit))).fetchall()
        return [Mention(str(r[0]), r[1], r[2], r[3], r[4]) for r in rows]

    def forget_mentions(self, user: str, session: str | None = None) -> int:
        with transaction(self.path) as conn:
            if session is None:
                n = conn.execute("DELETE FROM entity_stream WHERE user = ?", (user,)).rowcount
            else:
                n = conn.execute("DELETE FROM entity_stream WHERE user = ? AND session = ?", (user, session)).rowcount
            conn.execute("DELETE FROM entity_store WHERE user = ?", (user,))
            conn.execute(
                """INSERT INTO entity_store (user, entity, kind, count, first_seen, last_seen)
                   SELECT user, entity, kind, COUNT(*), MIN(at), MAX(at) FROM entity_stream
                   WHERE user = ? GROUP BY user, entity, kind""", (user,))
        return n

    # -- facts ----------------------------------------------------------------------------------------

    def add_facts(self, facts: Sequence[Fact]) -> int:
        added = 0
        with transaction(self.path) as conn:
            for f in facts:
                f = f.with_id()
                cur = conn.execute(
                    f"INSERT INTO facts ({_FACT_COLUMNS}) VALUES ({', '.join('?' * 19)}) "
                    "ON CONFLICT (user, id) DO NOTHING",
                    (f.id, f.user, f.session, f.turn, f.at, f.question, f.kind, f.subject, f.relation, f.object,
                     f.value, f.unit, json.dumps(f.stats), f.table, f.fingerprint, f.filter, f.source, f.uses,
                     f.last_used))
                if cur.rowcount <= 0:
                    continue
                added += 1
                conn.executemany(
                    "INSERT INTO fact_links (user, fact, entity, kind, role, path) VALUES (?, ?, ?, ?, ?, ?) "
                    "ON CONFLICT (user, fact, entity, role) DO NOTHING",
                    [(f.user, f.id, lk.entity, lk.kind, lk.role, int(lk.role in ENDPOINT_ROLES)) for lk in f.links])
        return added

    def walk(self, user: str, seeds: Sequence[str], depth: int) -> list[Walked]:
        seeds = list(dict.fromkeys(seeds))
        if not seeds or depth < 1:
            return []
        sql = _WALK.format(seeds=", ".join("(?)" for _ in seeds))
        with _reading(self.path) as conn:
            rows = conn.execute(sql, [*seeds, user, user, user, int(depth), user]).fetchall()
        return [Walked(r[0], r[1], int(r[2]), r[3], int(r[4]), r[5]) for r in rows]

    def get_facts(self, user: str, ids: Sequence[str]) -> list[Fact]:
        ids = list(dict.fromkeys(ids))
        if not ids:
            return []
        marks = ", ".join("?" for _ in ids)
        with _reading(self.path) as conn:
            rows = conn.execute(f"SELECT {_FACT_COLUMNS} FROM facts WHERE user = ? AND id IN ({marks})",
                                [user, *ids]).fetchall()
            links = conn.execute(f"SELECT fact, entity, kind, role FROM fact_links WHERE user = ? AND fact IN ({marks})",
                                 [user, *ids]).fetchall()
        return _facts(rows, links, order=ids)

    def list_facts(self, user: str, limit: int | None = None, text: str = "", session: str | None = None) -> list[Fact]:
        sql, args = f"SELECT {_FACT_COLUMNS} FROM facts WHERE user = ?", [user]
        if session is not None:
            sql += " AND session = ?"
            args.append(session)
        if text:
            sql += (" AND LOWER(subject || ' ' || relation || ' ' || object || ' ' || filter || ' ' || tbl || ' ' || "
                    "question) LIKE ?")
            args.append("%" + text.lower() + "%")
        sql += " ORDER BY at DESC, id"
        if limit is not None:
            sql += " LIMIT ?"
            args.append(int(limit))
        with _reading(self.path) as conn:
            rows = conn.execute(sql, args).fetchall()
            ids = [r[0] for r in rows]
            links = []
            for k in range(0, len(ids), 500):
                chunk = ids[k:k + 500]
                links += conn.execute(f"SELECT fact, entity, kind, role FROM fact_links WHERE user = ? AND fact IN "
                                      f"({', '.join('?' for _ in chunk)})", [user, *chunk]).fetchall()
        return _facts(rows, links, order=ids)

    def forget_facts(self, user: str, ids: Iterable[str] | None = None, session: str | None = None) -> int:
        with transaction(self.path) as conn:
            if ids is not None:
                ids = list(ids)
                n = 0
                for i in ids:
                    n += conn.execute("DELETE FROM facts WHERE user = ? AND id = ?", (user, i)).rowcount
                    conn.execute("DELETE FROM fact_links WHERE user = ? AND fact = ?", (user, i))
                return n
            if session is not None:
                conn.execute("DELETE FROM fact_links WHERE user = ? AND fact IN "
                             "(SELECT id FROM facts WHERE user = ? AND session = ?)", (user, user, session))
                return conn.execute("DELETE FROM facts WHERE user = ? AND session = ?", (user, session)).rowcount
            conn.execute("DELETE FROM fact_links WHERE user = ?", (user,))
            conn.execute("DELETE FROM fact_tables WHERE user = ?", (user,))
            return conn.execute("DELETE FROM facts WHERE user = ?", (user,)).rowcount

    def mark_used(self, user: str, ids: Sequence[str], at: str) -> None:
        if not ids:
            return
        with transaction(self.path) as conn:
            conn.executemany("UPDATE facts SET uses = uses + 1, last_used = ? WHERE user = ? AND id = ?",
                             [(at, user, i) for i in dict.fromkeys(ids)])

    def known_entities(self, user: str) -> list[tuple[str, str]]:
        with _reading(self.path) as conn:
            rows = conn.execute("SELECT DISTINCT entity, kind FROM fact_links WHERE user = ?", (user,)).fetchall()
        return [(r[0], r[1]) for r in rows]

    # -- tables ---------------------------------------------------------------------------------------

    def record_tables(self, user: str, tables: Sequence[SeenTable]) -> None:
        if not tables:
            return
        with transaction(self.path) as conn:
            conn.executemany(
                """INSERT INTO fact_tables (user, fingerprint, name, source, size, mtime_ns, seen_at)
                   VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (user, fingerprint, source) DO UPDATE SET
                   name = excluded.name, size = excluded.size, mtime_ns = excluded.mtime_ns, seen_at = excluded.seen_at""",
                [(user, *t) for t in tables])

    def tables(self, user: str) -> list[SeenTable]:
        with _reading(self.path) as conn:
            rows = conn.execute("SELECT fingerprint, name, source, size, mtime_ns, seen_at FROM fact_tables "
                                "WHERE user = ?", (user,)).fetchall()
        return [SeenTable(r[0], r[1], r[2], int(r[3]), int(r[4]), r[5]) for r in rows]


def _facts(rows: list, links: list, order: Sequence[str]) -> list[Fact]:
    by_fact: dict[str, list[Link]] = {}
    for fact, entity, kind, role in links:
        by_fact.setdefault(fact, []).append(Link(entity=entity, kind=kind, role=role))
    found = {}
    for r in rows:
        found[r[0]] = Fact(id=r[0], user=r[1], session=r[2], turn=r[3], at=r[4], question=r[5], kind=r[6], subject=r[7],
                           relation=r[8], object=r[9], value=r[10], unit=r[11], stats=json.loads(r[12] or "{}"),
                           table=r[13], fingerprint=r[14], filter=r[15], source=r[16], uses=r[17], last_used=r[18],
                           links=by_fact.get(r[0], []))
    return [found[i] for i in order if i in found]


class _reading:
    """A short-lived connection for reads, closed on exit."""

    def __init__(self, path: Path):
        self.conn = connect(path)

    def __enter__(self) -> sqlite3.Connection:
        return self.conn

    def __exit__(self, *exc: object) -> None:
        self.conn.close()
