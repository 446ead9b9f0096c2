"""Benchmark of fact retrieval: fill N facts for one user (and as many for other users), then time questions.

Usage:
    python benchmarks/bench_facts.py [--n 10000] [--queries 200] [--backends sql,kuzu]

For each backend, prints the time to fill (one ``add_facts`` per answered turn of 20 facts), p50/p95 of
``fact_recall.retrieve`` in milliseconds (question entities → depth-2 walk → ranking → reading the top facts;
target: p50 <= 20 ms at 10,000 facts, from issue 16), and, side by side, the tokens of a prompt's memory part
without and with the facts (the facts part is what ``ContextBuilder`` kept under ``memory_budget_tokens``).
Questions name one or two of the generated values and columns ("mean revenue for West", "is churn higher for
Premium than for Basic"), so every query walks a real neighbourhood.
"""

from __future__ import annotations

import argparse
import random
import statistics
import tempfile
import time
from pathlib import Path

from auto_analyst.config import Settings
from auto_analyst.memory.context.builder import ContextBuilder
from auto_analyst.memory.facts.recall import retrieve
from auto_analyst.memory.facts.model import Fact, Link, render_fact
from auto_analyst.storage.times import to_iso
from auto_analyst.memory.scope import Scope
from auto_analyst.memory.context.short_term import MemoryItem, ShortTermMemory

GROUPS = {"region": ["North", "South", "East", "West", "Central"], "plan": ["Basic", "Standard", "Premium"],
          "category": [f"cat{i}" for i in range(40)], "store": [f"store{i}" for i in range(150)]}
MEASURES = ["revenue", "units", "price", "margin", "tenure", "discount", "cost", "score"]

RECURSIVE_WALK = """
WITH RECURSIVE seed(entity) AS (VALUES {seeds}),
walk(fact, depth, via) AS (
    SELECT l.fact, 1, l.entity FROM fact_links l JOIN seed s ON l.entity = s.entity WHERE l."user" = ?
    UNION
    SELECT l2.fact, w.depth + 1, w.via FROM walk w
    JOIN fact_links l1 ON l1."user" = ? AND l1.fact = w.fact AND l1.path = 1
    JOIN fact_links l2 ON l2."user" = ? AND l2.entity = l1.entity AND l2.path = 1 AND l2.fact <> w.fact
    WHERE w.depth < 2)
SELECT fact, via, MIN(depth) FROM walk GROUP BY fact, via
"""
"""The walk as first written (an unbounded recursive query), kept here to measure the bounded walk against."""
METRICS = ["mean", "total", "median", "max"]


def make_facts(user: str, n: int, rng: random.Random, per_turn: int = 20) -> list[list[Fact]]:
    """``n`` facts in turns of ``per_turn``: each turn one metric of one measure by one grouping column."""
    turns, t = [], 0
    while sum(len(b) for b in turns) < n:
        t += 1
        col = rng.choice(list(GROUPS))
        measure, metric = rng.choice(MEASURES), rng.choice(METRICS)
        values = rng.sample(GROUPS[col], min(per_turn, len(GROUPS[col])))
        at = to_iso(None)
        batch = []
        for v in values:
            subject = f"{col}={v}"
            x = round(rng.uniform(1, 1000), 4)
            batch.append(Fact(
                user=user, session=f"s{t // 10}", turn=t, at=at, question=f"{metric} {measure} by {col}",
                kind="grouped", subject=subject, relation=f"{metric} {measure}", object=str(x), value=x,
                table=f"table{t % 5}", fingerprint=f"fp{t % 5}", source="t",
                links=[Link(entity=subject, kind="value", role="subject"), Link(entity=col, kind="column", role="group"),
                       Link(entity=measure, kind="column", role="measure"),
                       Link(entity=metric, kind="method", role="method"),
                       Link(entity=f"table{t % 5}", kind="table", role="table")]).with_id())
        turns.append(batch)
    return turns


def open_backend(name: str, folder: Path):
    if name == "sql":
        from auto_analyst.memory.facts.graph.sql import SqlGraph

        return SqlGraph(folder / "history.sqlite3")
    from auto_analyst.memory.facts.graph.adapters import connect
    from auto_analyst.memory.facts.graph.cypher import CypherGraph

    return CypherGraph(connect(f"kuzu:{folder / 'graph.kuzu'}"))


def questions(rng: random.Random, k: int) -> list[str]:
    out = []
    for _ in range(k):
        col = rng.choice(["region", "plan", "category", "store"])
        a, b = rng.sample(GROUPS[col], 2)
        out.append(rng.choice([f"what did we find about {a}?", f"mean {rng.choice(MEASURES)} for {a}",
                               f"is {rng.choice(MEASURES)} higher for {a} than for {b}?"]))
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=10_000)
    ap.add_argument("--queries", type=int, default=200)
    ap.add_argument("--backends", default="sql,kuzu")
    ap.add_argument("--recursive", type=int, default=20,
                    help="Questions also run through the unbounded recursive walk (SQLite), side by side; 0: skip.")
    args = ap.parse_args()
    settings = Settings.load({"home": tempfile.mkdtemp()})
    builder = ContextBuilder(settings)
    short = ShortTermMemory(max_turns=5)
    for i in range(3):
        short.add(MemoryItem(turn=i + 1, question=f"mean revenue by region {i}", standalone_question="",
                             summary="Mean revenue by region: North 514.5, South 529.1, East 474.2, West 518.2.",
                             answer="North 514.5, South 529.1", result_names=[]))
    print(f"{args.n} facts for the user measured (+ {args.n} of another user); {args.queries} questions; "
          f"memory budget {settings.memory_budget_tokens} tokens (measured under load: ratios, not absolutes)")
    for backend in args.backends.split(","):
        rng = random.Random(16)
        with tempfile.TemporaryDirectory() as folder:
            g = open_backend(backend, Path(folder))
            t = time.perf_counter()
            for user in ("alice", "bob"):
                for batch in make_facts(user, args.n, rng):
                    g.add_facts(batch)
            fill = time.perf_counter() - t
            scope = Scope(user="alice", session_id="bench")
            current = {f"fp{i}" for i in range(5)}
            qs = questions(random.Random(5), args.queries)
            retrieve(g, scope, qs[0], current=current)  # warm: first connection, statement cache
            times, without, with_facts, kept = [], [], [], []
            for q in qs:
                t = time.perf_counter()
                found = retrieve(g, scope, q, k=settings.facts_k, current=current)
                times.append((time.perf_counter() - t) * 1000)
                base = builder.build(dataset_description="", question=q, short_term=short)
                full = builder.build(dataset_description="", question=q, short_term=short,
                                     facts=[(h.fact.id, render_fact(h.fact)) for h in found.current])
                without.append(base.tokens("short_term"))
                with_facts.append(full.tokens("short_term") + full.tokens("facts"))
                kept.append(sum(1 for h in full.memory_hits if h.kind == "fact"))
            before = []
            if backend == "sql" and args.recursive:
                from auto_analyst.memory.facts.recall import question_entities

                with g.engine.connect() as conn:
                    for q in qs[: args.recursive]:
                        seeds = question_entities(q, scope, g)
                        t = time.perf_counter()
                        conn.exec_driver_sql(RECURSIVE_WALK.format(seeds=", ".join("(?)" for _ in seeds)),
                                             (*seeds, "alice", "alice", "alice")).fetchall()
                        before.append((time.perf_counter() - t) * 1000)
                        t = time.perf_counter()
                        g.walk("alice", seeds, 2)
                        before.append(-(time.perf_counter() - t) * 1000)
            g.close()
        if before:
            rec = statistics.median([b for b in before if b > 0])
            bounded = statistics.median([-b for b in before if b < 0])
            print(f"[{backend}] walk alone on the same {args.recursive} questions: unbounded recursive query p50 "
                  f"{rec:.1f} ms, bounded walk p50 {bounded:.1f} ms (ratio {rec / bounded:.1f}x)")
        times.sort()
        p50, p95 = statistics.median(times), times[int(0.95 * (len(times) - 1))]
        print(f"[{backend}] fill {fill:.1f} s ({2 * args.n / fill:.0f} facts/s); retrieve p50 {p50:.1f} ms, "
              f"p95 {p95:.1f} ms; target p50 <= 20 ms: {'met' if p50 <= 20 else 'NOT met'} "
              f"(p50/target = {p50 / 20:.2f})")
        print(f"[{backend}] memory part tokens: without facts {statistics.mean(without):.0f}, with facts "
              f"{statistics.mean(with_facts):.0f} (+{statistics.mean(with_facts) - statistics.mean(without):.0f} mean, "
              f"max {max(with_facts)}); facts kept per prompt: mean {statistics.mean(kept):.1f}, max {max(kept)}")


if __name__ == "__main__":
    main()
