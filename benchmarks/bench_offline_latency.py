"""Latency of a warm session with the embedded offline model: question to answer, sandbox run included.

Usage:
    python benchmarks/bench_offline_latency.py [--rounds 3]

One session over a generated sales table answers a warm-up question, then a fixed list of plain
questions (aggregates, filters, rankings, top N, follow-ups, a chart, a test) ``--rounds`` times.
Prints p50 and p95 of the total time per answer (``Result.timings['total']``) and of the planning
step alone (the reader). The issue's target is p50 ≤ 100 ms on a quiet machine; figures taken
while other work runs are only indicative.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

QUESTIONS = [
    "What is the mean price?", "total revenue by region", "average revenue in 2023 for Garden",
    "Which region has the highest total revenue?", "top 3 categories by total revenue", "now only for 2024",
    "same for units", "How many orders per category?", "median price where units > 10",
    "the most expensive order", "compare total revenue of North and South", "bar chart of total revenue by category",
    "is price normally distributed?", "average revenue by month", "what share of revenue comes from Tools?",
]


def pct(values: list[float], q: float) -> float:
    values = sorted(values)
    return values[min(len(values) - 1, int(q * len(values)))]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args(argv)
    from auto_analyst import Analyst, Settings
    from tests.helpers import sales_table

    totals, planning = [], []
    with tempfile.TemporaryDirectory() as home, Analyst(settings=Settings.load({"home": Path(home)})) as analyst:
        s = analyst.session()
        s.add_frame("sales", sales_table(seed=3))
        t0 = time.perf_counter()
        s.ask("How many rows are there?")  # warm-up: the worker starts and imports pandas, plotly, scipy
        warm = time.perf_counter() - t0
        for _ in range(args.rounds):
            s.reset_memory()
            for q in QUESTIONS:
                r = s.ask(q)
                totals.append(r.timings.get("total", 0.0))
                planning.append(r.timings.get("planning", 0.0))
    ms = lambda x: f"{1000 * x:7.1f} ms"  # noqa: E731
    print(f"offline latency, warm session ({len(totals)} answers; first answer incl. start-up {warm:.1f} s):")
    print(f"  total     p50 {ms(statistics.median(totals))}   p95 {ms(pct(totals, 0.95))}")
    print(f"  planning  p50 {ms(statistics.median(planning))}   p95 {ms(pct(planning, 0.95))}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
