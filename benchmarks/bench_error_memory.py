"""Benchmark of the error-fix memory: fill N entries, then time searches.

Usage:
    python benchmarks/bench_error_memory.py [--n 10000] [--queries 300] [--home DIR]

Prints the time to fill (one ``add`` per entry, as the fix loop does), p50/p95 of ``search`` in milliseconds
(target: p50 <= 20 ms at 10,000 entries, from issue 5), and top-1 recall: the share of queries, each a
re-worded copy of one stored entry's error, whose top hit is that entry.
Runs offline with the default "hashing" embedding in a temporary AUTO_ANALYST_HOME unless --home is given.
"""

from __future__ import annotations

import argparse
import random
import statistics
import tempfile
import time
from pathlib import Path

from auto_analyst.config import Settings
from auto_analyst.memory.errorfix.memory import ErrorMemory

ERRORS = [
    ("ValueError", "could not convert string to float: {v}", "encode the categorical column {c} with OneHotEncoder in a ColumnTransformer"),
    ("KeyError", "KeyError: {c} not in index after groupby", "reset_index() after the groupby and select {c} from the columns"),
    ("TypeError", "unsupported operand type(s) for +: 'int' and 'str' in column {c}", "convert {c} with pd.to_numeric(errors='coerce') first"),
    ("ValueError", "Invalid frequency: M when resampling {c}", "use 'ME' (month end) instead of 'M' with pandas 3"),
    ("AttributeError", "'DataFrame' object has no attribute {c}", "select the column with df[{c}] and check df.columns"),
    ("ValueError", "Input X contains NaN in {c}; LinearRegression does not accept missing values", "impute with SimpleImputer in a Pipeline"),
    ("IndexError", "single positional indexer is out-of-bounds for {c}", "check len(df) before iloc and handle the empty result"),
    ("ValueError", "time data {v} does not match format '%Y-%m-%d'", "parse {c} with pd.to_datetime(dayfirst=True, format='mixed')"),
    ("MemoryError", "Unable to allocate array for pivot of {c}", "aggregate before pivoting and limit the number of categories"),
    ("ValueError", "Length of values does not match length of index when assigning {c}", "align on the index with merge instead of assigning a list"),
    ("TypeError", "Object of type Timestamp is not JSON serializable for {c}", "convert timestamps with .dt.strftime before to_json"),
    ("ValueError", "shapes (100,3) and (4,) not aligned in statsmodels OLS on {c}", "add_constant to the exog matrix before fitting OLS"),
]
WORDS = ["revenue", "region", "sales", "churn", "tenure", "price", "margin", "customer", "product", "store", "month", "week", "score", "rate", "age", "plan"]


def make_entry(rng: random.Random, i: int) -> tuple[str, str, str]:
    etype, err, fix = rng.choice(ERRORS)
    c, v = f"{rng.choice(WORDS)}_{i}", f"'{rng.choice(WORDS).title()}{i}'"
    extra = " ".join(rng.sample(WORDS, 3))
    return etype, f"{etype} {err.format(c=c, v=v)} while computing {extra}", fix.format(c=c, v=v)


def percentile(values: list[float], q: float) -> float:
    values = sorted(values)
    return values[min(len(values) - 1, round(q * (len(values) - 1)))]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n", type=int, default=10_000, help="entries to fill")
    ap.add_argument("--queries", type=int, default=300, help="searches to time")
    ap.add_argument("--home", type=Path, default=None, help="AUTO_ANALYST_HOME to use (default: a temp dir)")
    args = ap.parse_args()
    rng = random.Random(5)
    with tempfile.TemporaryDirectory() as tmp:
        home = args.home or Path(tmp)
        mem = ErrorMemory(Settings.load({"home": home}))
        entries = [make_entry(rng, i) for i in range(args.n)]
        t0 = time.perf_counter()
        for i, (etype, summary, fix) in enumerate(entries):
            mem.add(summary, fix, error_type=etype, agent="analyst", agent_version="1", dataset_fingerprint=f"d{i % 50}",
                    user=None if i % 3 == 0 else f"user{i % 7}")
        fill_s = time.perf_counter() - t0
        mem.search("warm up", user="user1")
        times, hits = [], 0
        for q in range(args.queries):
            i = rng.randrange(args.n)
            etype, summary, _ = entries[i]
            user = "global" if i % 3 == 0 else f"user{i % 7}"
            t = time.perf_counter()
            res = mem.search(summary.replace(" while computing", "; while computing"), user=user, k=3)
            times.append((time.perf_counter() - t) * 1000)
            hits += bool(res) and res[0].document.startswith(f"Error Summary: {summary}\n")
        print(f"entries: {args.n}  embedding: {mem.settings.embedding}  index: {mem.index_count()}")
        print(f"fill: {fill_s:.1f} s total, {fill_s / args.n * 1000:.2f} ms per add")
        print(f"search (k=3, {args.queries} queries): p50 {statistics.median(times):.2f} ms, p95 {percentile(times, 0.95):.2f} ms")
        print(f"top-1 recall of the re-worded entry: {hits / args.queries:.1%}")
        mem.close()


if __name__ == "__main__":
    main()
