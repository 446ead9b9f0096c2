"""A big PostgreSQL table: "average amount by region" in the database vs the whole table read with pandas.

Usage:
    python benchmarks/bench_sources.py --url postgresql://user@127.0.0.1:PORT/db [--rows 10000000] [--keep]

Makes the table ``aa_bench_sales`` (region text, amount double precision; ``--rows`` rows from generate_series,
kept between runs unless the row count differs), then, each in a fresh process so the peak memory (ru_maxrss) is
that mode's alone:

* ``engine``: a session of the product connected to the database; a script whose ``sql()`` query is one GROUP BY
  runs through the host's read-only path (``sql_runs.SqlSandbox``) and the sandbox;
* ``describe``: only connecting and describing (catalog + first rows), the part every question pays once;
* ``pandas``: ``pd.read_sql("SELECT region, amount FROM aa_bench_sales")`` then ``groupby().mean()``, what
  a tool that loads tables into pandas does.

Prints seconds and peak RSS (MiB) of each, and whether the answers agree. A benchmark, not a timed test.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
TABLE = "aa_bench_sales"
QUERY = f"SELECT region, avg(amount) AS mean_amount FROM {TABLE} GROUP BY region ORDER BY region"


def _engine(url: str):
    from sqlalchemy import create_engine

    return create_engine(url.replace("postgresql://", "postgresql+psycopg://", 1))


def make_table(url: str, rows: int) -> None:
    from sqlalchemy import text

    eng = _engine(url)
    with eng.begin() as c:
        have = c.execute(text("SELECT to_regclass(:t) IS NOT NULL"), {"t": TABLE}).scalar()
        if have and c.execute(text(f"SELECT count(*) FROM {TABLE}")).scalar() == rows:
            return
        c.execute(text(f"DROP TABLE IF EXISTS {TABLE}"))
        c.execute(text(f"CREATE TABLE {TABLE} (id bigint, region text, amount double precision)"))
        c.execute(text(f"INSERT INTO {TABLE} SELECT g, (ARRAY['East','North','South','West','Central'])[1 + g % 5], "
                       f"round(((g * 7919) % 100000) / 100.0, 2) FROM generate_series(1::bigint, {rows}::bigint) AS g"))
        c.execute(text(f"ANALYZE {TABLE}"))
    eng.dispose()


def _peak_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def mode_engine(url: str) -> dict:
    import tempfile

    os.environ["AUTO_ANALYST_HOME"] = tempfile.mkdtemp(prefix="aa-bench-")
    from auto_analyst import Analyst

    t0 = time.perf_counter()
    s = Analyst().session()
    s.connect(url, [TABLE])
    described = time.perf_counter() - t0
    r = s.run_code(f"means = sql({QUERY!r})\nshow(means, name='mean amount by region')")
    total = time.perf_counter() - t0
    queries = list(s._runner.sandbox.queries)
    s.close()
    rows = {row[0]: round(float(row[1]), 6) for row in r.tables[0].rows} if r.tables else {}
    return {"seconds": round(total, 2), "describe_seconds": round(described, 2), "peak_mib": round(_peak_mib(), 1),
            "status": r.status, "result": rows, "query_seconds": queries[0]["seconds"] if queries else None}


def mode_describe(url: str) -> dict:
    from auto_analyst.data.sql_source import SqlSource, load_sql_tables

    t0 = time.perf_counter()
    src = SqlSource(url)
    load_sql_tables(src, [TABLE])
    return {"seconds": round(time.perf_counter() - t0, 2), "peak_mib": round(_peak_mib(), 1)}


def mode_pandas(url: str) -> dict:
    import pandas as pd

    t0 = time.perf_counter()
    eng = _engine(url)
    with eng.connect() as c:
        frame = pd.read_sql(f"SELECT region, amount FROM {TABLE}", c)
    means = frame.groupby("region")["amount"].mean()
    return {"seconds": round(time.perf_counter() - t0, 2), "peak_mib": round(_peak_mib(), 1),
            "result": {k: round(float(v), 6) for k, v in means.items()}}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--url", required=True)
    ap.add_argument("--rows", type=int, default=10_000_000)
    ap.add_argument("--mode", choices=["engine", "describe", "pandas"], default=None, help=argparse.SUPPRESS)
    ap.add_argument("--keep", action="store_true", help="keep the table afterwards")
    args = ap.parse_args(argv)
    if args.mode:
        print(json.dumps({"engine": mode_engine, "describe": mode_describe, "pandas": mode_pandas}[args.mode](args.url)))
        return 0
    t0 = time.perf_counter()
    make_table(args.url, args.rows)
    print(f"table {TABLE}: {args.rows:,} rows ready in {time.perf_counter() - t0:.1f} s", flush=True)
    out = {}
    for mode in ("describe", "engine", "pandas"):
        p = subprocess.run([sys.executable, __file__, "--url", args.url, "--mode", mode], capture_output=True, text=True,
                           env={**os.environ, "PYTHONPATH": str(REPO)})
        if p.returncode:
            print(f"{mode}: failed\n{p.stderr[-2000:]}")
            return 1
        out[mode] = json.loads(p.stdout.strip().splitlines()[-1])
        extra = f"  (the GROUP BY in the database: {out[mode]['query_seconds']} s)" if mode == "engine" else ""
        print(f"{mode:<9} {out[mode]['seconds']:8.2f} s  peak RSS {out[mode]['peak_mib']:8.1f} MiB{extra}", flush=True)
    agree = out["engine"]["result"] and all(abs(out["engine"]["result"][k] - v) < 1e-6
                                             for k, v in out["pandas"]["result"].items())
    print(f"answers agree: {bool(agree)}")
    if not args.keep:
        from sqlalchemy import text

        eng = _engine(args.url)
        with eng.begin() as c:
            c.execute(text(f"DROP TABLE IF EXISTS {TABLE}"))
        eng.dispose()
    return 0 if agree else 1


if __name__ == "__main__":
    sys.exit(main())
