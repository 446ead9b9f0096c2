"""Entity memory: stream, knowledge store ranking by count and recency, isolation, extraction."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from auto_analyst.cli.context import CliContext
from auto_analyst.memory.facts.entities import HALF_LIFE_HOURS, EntityMemory, extract_entities, score

NOW = datetime(2024, 6, 10, 12, 0, tzinfo=timezone.utc)


def hours_ago(h: float) -> datetime:
    return NOW - timedelta(hours=h)


@pytest.fixture
def mem(tmp_path: Path) -> EntityMemory:
    return EntityMemory(path=tmp_path / "history.sqlite3", half_life_hours=24.0)


def test_half_life_and_score_formula() -> None:
    assert HALF_LIFE_HOURS == pytest.approx(138.2826, abs=1e-4)
    assert 0.5 ** (1 / HALF_LIFE_HOURS) == pytest.approx(0.995)
    assert score(4, 48, 24) == 1.0
    assert score(3, 24, 24) == 1.5
    assert score(2, -5, 24) == 2.0  # future timestamps count as now


def test_ranking_by_count_and_recency(mem: EntityMemory) -> None:
    for h in (50, 49, 48, 48):  # 4 mentions, last 48 h ago (2 half-lives): 4 * 0.25 = 1.0
        mem.record("alice", "s1", [("revenue", "column")], at=hours_ago(h))
    for h in (30, 24, 24):  # 3 mentions in separate calls, last 24 h ago: 3 * 0.5 = 1.5
        mem.record("alice", "s1", [("groupby", "method")], at=hours_ago(h))
    mem.record("alice", "s1", [("churn", "concept"), ("churn", "concept")], at=hours_ago(0))  # deduplicated: 1.0
    mem.record("alice", "s1", [("tenure", "column")], at=hours_ago(72))  # 1 * 0.125
    top = mem.top("alice", n=10, now=NOW)
    assert [(e.entity, e.kind, e.count, e.score) for e in top] == [
        ("groupby", "method", 3, 1.5),
        ("revenue", "column", 4, 1.0),  # ties with churn at 1.0; the higher count wins
        ("churn", "concept", 1, 1.0),
        ("tenure", "column", 1, 0.125),
    ]
    assert [e.entity for e in mem.top("alice", n=2, now=NOW)] == ["groupby", "revenue"]
    assert [e.entity for e in mem.top("alice", now=NOW, kinds=["column"])] == ["revenue", "tenure"]
    # A day later, recency moves churn (1 mention, 24 h old: 0.5) below revenue (72 h old: 0.5, count 4).
    later = [(e.entity, e.score) for e in mem.top("alice", now=NOW + timedelta(hours=24))]
    assert later == [("groupby", 0.75), ("revenue", 0.5), ("churn", 0.5), ("tenure", 0.0625)]
    assert top[0].last_seen == "2024-06-09T12:00:00.000000+00:00"


def test_stream_isolation_and_forgetting(mem: EntityMemory) -> None:
    mem.record("alice", "s1", [("revenue", "column"), ("mean", "method")], at=hours_ago(2))
    mem.record("bob", "s9", [("salary", "column")], at=hours_ago(1))
    mem.record("alice", "s2", [("revenue", "column")], at=hours_ago(1))
    assert [(r.entity, r.session, r.at) for r in mem.stream("alice", limit=10)] == [
        ("revenue", "s2", "2024-06-10T11:00:00.000000+00:00"),
        ("mean", "s1", "2024-06-10T10:00:00.000000+00:00"),
        ("revenue", "s1", "2024-06-10T10:00:00.000000+00:00"),
    ]
    assert [e.entity for e in mem.top("bob", now=NOW)] == ["salary"]
    assert mem.forget_session("alice", "s2") == 1
    assert [(e.entity, e.count) for e in mem.top("alice", now=NOW)] == [("mean", 1), ("revenue", 1)]  # full tie: by name
    assert mem.forget_user("alice") == 2
    assert mem.top("alice", now=NOW) == [] and mem.stream("alice") == []
    assert len(mem.stream("bob")) == 1
    with pytest.raises(ValueError):
        mem.record("alice", "s1", [("x", "colour")])


def test_extract_entities_from_question_and_code() -> None:
    columns = ["Churn", "MonthlyCharges", "tenure", "Contract", "customer_id", "TotalCharges"]
    question = "Is churn higher for customers with high monthly charges? Break down by contract, and run a t-test."
    code = (
        "g = df.groupby('Contract')['MonthlyCharges'].mean()\n"
        "from scipy.stats import ttest_ind\n"
        "print(ttest_ind(df[df.Churn == 'Yes'].tenure, df[df.Churn == 'No'].tenure))"
    )
    assert extract_entities(question, code, columns) == [
        ("Churn", "column"),
        ("MonthlyCharges", "column"),
        ("tenure", "column"),
        ("Contract", "column"),
        ("groupby", "method"),
        ("mean", "method"),
        ("t-test", "method"),
        ("customer", "concept"),
    ]


def test_extract_entities_concepts_tables_and_nothing() -> None:
    assert extract_entities("What drives revenue growth? Fit a random forest.", "", ["region"], tables=["sales"]) == [
        ("random forest", "method"), ("revenue", "concept"), ("growth", "concept")]
    assert extract_entities("Show the sales table correlations", "sales.corr()", [], tables=["sales"]) == [
        ("sales", "table"), ("correlation", "method")]
    assert extract_entities("What is the average age?", "", ["Age"]) == [("Age", "column"), ("mean", "method")]
    assert extract_entities("hello there", "", ["a", "b"]) == []
    assert extract_entities("Plot a histogram of price", "df.price.hist()", ["price"]) == [
        ("price", "column"), ("histogram", "method")]


def test_entities_cli(settings) -> None:
    import json

    from click.testing import CliRunner

    from auto_analyst.cli.entities import entities

    mem = EntityMemory(settings)
    mem.record("alice", "s1", [("revenue", "column"), ("mean", "method")])
    mem.record("alice", "s1", [("revenue", "column")])
    mem.record("bob", "s2", [("salary", "column")])
    obj = CliContext(settings, "alice")
    out = CliRunner().invoke(entities, ["--n", "1", "--json"], obj=obj)
    assert out.exit_code == 0, out.output
    assert [(e["entity"], e["kind"], e["count"]) for e in json.loads(out.output)] == [("revenue", "column", 2)]
    text = CliRunner().invoke(entities, [], obj=obj).output
    assert "revenue" in text and "mean" in text and "salary" not in text
    assert CliRunner().invoke(entities, [], obj=CliContext(settings, "carol")).output == "No entities yet.\n"
