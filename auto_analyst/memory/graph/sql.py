"""The graph store on SQL: nodes and edges as rows, the depth-2 walk as two indexed queries per depth.

The default engine, because it needs no service and several processes (the web workers, the CLI
next to ``serve``) may read and write the same file at once; an embedded graph engine such as Kùzu
allows one read-write process per database (see docs/memory.md, "Graph engine"). Tables live in
``history.sqlite3`` beside the history (WAL, each call a short transaction that is committed before
it returns, so a ``kill -9`` loses nothing committed). The walk is the bounded two-step of
:meth:`GraphStore.walk` over two indexed queries (``reach``, ``endpoints``). The SQL is the common subset
of SQLite and PostgreSQL (``ON CONFLICT``, ``IN`` lists); the statements go through
:func:`connect` / :func:`transaction` of :mod:`auto_analyst.memory.migrations`.
"""

from __future__ import annotations

import json
import sqlite3
import threading
from collections.abc import Iterable, Sequence
from pathlib import Path

from auto_analyst.memory.facts import ENDPOINT_ROLES, Fact, Link
from auto_analyst.memory.graph.base import GraphStore, Mention, SeenTable
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
            path INTEGER NOT NULL, at TEXT NOT NULL, PRIMARY KEY (user, fact, entity, role))"""
    )
    # the fact's time is repeated on its links so "the newest N facts of an entity" is one index range
    conn.execute("CREATE INDEX fact_links_entity ON fact_links (user, entity, at)")
    conn.execute("CREATE INDEX fact_links_endpoint ON fact_links (user, entity, path, at)")
    conn.execute(
        """CREATE TABLE fact_tables (
            user TEXT NOT NULL, fingerprint TEXT NOT NULL, name TEXT NOT NULL, source TEXT NOT NULL,
            size INTEGER NOT NULL, mtime_ns INTEGER NOT NULL, seen_at TEXT NOT NULL,
            PRIMARY KEY (user, fingerprint, source))"""
    )


@migrations
def m002_fact_entities(conn: sqlite3.Connection) -> None:
    """The entities the facts link, with how many facts link each (read for every question: kept small)."""
    conn.execute(
        """CREATE TABLE fact_entities (
            user TEXT NOT NULL, entity TEXT NOT NULL, kind TEXT NOT NULL, facts INTEGER NOT NULL,
            PRIMARY KEY (user, entity, kind))"""
    )
    conn.execute("""INSERT INTO fact_entities (user, entity, kind, facts)
                    SELECT user, entity, kind, COUNT(*) FROM fact_links GROUP BY user, entity, kind""")


def _recount_entities(conn: sqlite3.Connection, user: str) -> None:
    conn.execute("DELETE FROM fact_entities WHERE user = ?", (user,))
    conn.execute("""INSERT INTO fact_entities (user, entity, kind, facts)
                    SELECT user, entity, kind, COUNT(*) FROM fact_links WHERE user = ? GROUP BY user, entity, kind""",
                 (user,))


_FACT_COLUMNS = ("id, user, session, turn, at, question, kind, subject, relation, object, value, unit, stats_json, "
                 "tbl, fingerprint, filter, source, uses, last_used")

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
        facts = list({(f.user, f.id): f for f in (x.with_id() for x in facts)}.values())
        if not facts:
            return 0
        with transaction(self.path) as conn:
            new = [f for f in facts if conn.execute("SELECT 1 FROM facts WHERE user = ? AND id = ?",
                                                    (f.user, f.id)).fetchone() is None]
            conn.executemany(
                f"INSERT INTO facts ({_FACT_COLUMNS}) VALUES ({', '.join('?' * 19)})",
                [(f.id, f.user, f.session, f.turn, f.at, f.question, f.kind, f.subject, f.relation, f.object,
                  f.value, f.unit, json.dumps(f.stats), f.table, f.fingerprint, f.filter, f.source, f.uses,
                  f.last_used) for f in new])
            links = list(dict.fromkeys((f.user, f.id, lk.entity, lk.kind, lk.role, int(lk.role in ENDPOINT_ROLES), f.at)
                                       for f in new for lk in f.links))
            conn.executemany("INSERT INTO fact_links (user, fact, entity, kind, role, path, at) "
                             "VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (user, fact, entity, role) DO NOTHING", links)
            counts: dict[tuple[str, str, str], int] = {}
            for user, _, entity, kind, _, _, _ in links:
                counts[(user, entity, kind)] = counts.get((user, entity, kind), 0) + 1
            conn.executemany("INSERT INTO fact_entities (user, entity, kind, facts) VALUES (?, ?, ?, ?) "
                             "ON CONFLICT (user, entity, kind) DO UPDATE SET facts = fact_entities.facts + excluded.facts",
                             [(*k, n) for k, n in counts.items()])
        return len(new)

    def reach(self, user: str, entities: Sequence[str], endpoints_only: bool, limit: int) -> list[tuple]:
        entities = list(dict.fromkeys(entities))
        path = " AND path = 1" if endpoints_only else ""
        branch = (f"SELECT * FROM (SELECT fact, entity, at FROM fact_links WHERE user = ? AND entity = ?{path} "
                  "ORDER BY at DESC, fact LIMIT ?)")
        links: list[tuple] = []
        with _reading(self.path) as conn:
            for k in range(0, len(entities), 200):  # SQLite allows 500 terms in one compound SELECT
                chunk = entities[k:k + 200]
                args = [x for e in chunk for x in (user, e, int(limit))]
                links += conn.execute(" UNION ALL ".join([branch] * len(chunk)), args).fetchall()
            ids = list(dict.fromkeys(r[0] for r in links))
            used: dict[str, tuple] = {}
            for k in range(0, len(ids), 500):
                chunk = ids[k:k + 500]
                used.update((r[0], (r[1], r[2])) for r in conn.execute(
                    f"SELECT id, uses, last_used FROM facts WHERE user = ? AND id IN ({', '.join('?' * len(chunk))})",
                    [user, *chunk]))
        return [(f, e, at, *used.get(f, (0, ""))) for f, e, at in links]

    def endpoints(self, user: str, facts: Sequence[str]) -> list[tuple[str, str]]:
        facts = list(dict.fromkeys(facts))
        if not facts:
            return []
        with _reading(self.path) as conn:
            return [(r[0], r[1]) for r in conn.execute(
                f"SELECT fact, entity FROM fact_links WHERE user = ? AND path = 1 AND fact IN ({', '.join('?' * len(facts))})",
                [user, *facts])]

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
                _recount_entities(conn, user)
                return n
            if session is not None:
                conn.execute("DELETE FROM fact_links WHERE user = ? AND fact IN "
                             "(SELECT id FROM facts WHERE user = ? AND session = ?)", (user, user, session))
                n = conn.execute("DELETE FROM facts WHERE user = ? AND session = ?", (user, session)).rowcount
                _recount_entities(conn, user)
                return n
            conn.execute("DELETE FROM fact_entities WHERE user = ?", (user,))
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
            rows = conn.execute("SELECT entity, kind FROM fact_entities WHERE user = ? AND facts > 0", (user,)).fetchall()
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


_READERS = threading.local()


class _reading:
    """The calling thread's read connection to ``path`` (kept open: opening one costs ~3 ms of PRAGMAs, paid
    several times per question otherwise). In autocommit mode every statement reads the latest commit."""

    def __init__(self, path: Path):
        conns = getattr(_READERS, "conns", None)
        if conns is None:
            conns = _READERS.conns = {}
        key = str(path)
        if key not in conns:
            conns[key] = connect(path)
        self.conn = conns[key]

    def __enter__(self) -> sqlite3.Connection:
        return self.conn

    def __exit__(self, *exc: object) -> None:
        pass
