"""A grouped aggregate over a big CSV: the session's DuckDB path against pandas, side by side in one run.

For each ``--rows`` N it writes an N-row CSV under a temporary directory (deleted afterwards) and answers
``mean(value), count(*) by grp`` three ways, each in a fresh process so its peak memory (``ru_maxrss``,
imports included; their time is not) is its own:

* ``duckdb load+query``: what a session does with a file past ``duckdb_min_mb``: ``load_duckdb`` (DuckDB
  reads the CSV into the session's database file and describes it with SUMMARIZE and samples), then the
  aggregate in SQL on a read-only connection, bringing back only the result. Nothing is loaded into pandas.
* ``duckdb query``: the same aggregate again on the kept database file (a later question of the session).
* ``pandas``: ``pd.read_csv`` of the whole file, then ``groupby`` (the bare minimum of any pandas path).
* ``pandas session``: what a session does without DuckDB: its loader (``load``, with its repairs; the file is
  over the default ``max_file_mb`` of 200, so the limit is lifted here) and its description, then ``groupby``.
  The sandbox's worker would then load a Parquet copy of it once more, which this does not count.

The engines must agree on every group's mean and count. Prints time, peak RSS and the ratios.

    python benchmarks/bench_duck.py --rows 10000000 --rows 2000000
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

SQL = "SELECT grp, avg(value) AS mean_value, count(*) AS n FROM {table} GROUP BY grp ORDER BY grp"

CHILD = r"""
import json, resource, sys, time
engine, path, folder = sys.argv[1], sys.argv[2], sys.argv[3]
sql = sys.argv[4]
if engine.startswith("duckdb"):  # imports are not timed (a server has them already); their memory counts
    import duckdb
    from pathlib import Path
    from auto_analyst.config import Settings
    from auto_analyst.data.duck import TABLE, load_duckdb, read_only
    import auto_analyst.data.duck_describe
else:
    import pandas as pd
    if engine == "pandas session":
        from auto_analyst.data.description import describe_tables
        from auto_analyst.data.load import load
t = time.perf_counter()
phases = {}
if engine.startswith("duckdb"):
    settings = Settings.load({"home": folder, "duckdb_min_mb": 1})
    table = load_duckdb(path, Path(folder) / "duck", settings, name="big")
    phases["load"] = time.perf_counter() - t
    q = time.perf_counter()
    with read_only(table.database) as con:
        out = con.sql(sql.format(table=TABLE)).df()
    phases["query"] = time.perf_counter() - q
elif engine == "pandas":
    frame = pd.read_csv(path)
    phases["load"] = time.perf_counter() - t
    q = time.perf_counter()
    out = frame.groupby("grp").agg(mean_value=("value", "mean"), n=("value", "size")).reset_index()
    phases["query"] = time.perf_counter() - q
else:  # the session's pandas path: its loader (over max_file_mb's default 200) and its description
    loaded = load(path, max_file_mb=100_000)
    describe_tables({"big": loaded})
    frame = loaded.frame
    phases["load"] = time.perf_counter() - t
    q = time.perf_counter()
    out = frame.groupby("grp").agg(mean_value=("value", "mean"), n=("value", "size")).reset_index()
    phases["query"] = time.perf_counter() - q
print(json.dumps({"seconds": time.perf_counter() - t, "phases": phases,
                  "peak_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
                  "grp": [str(g) for g in out["grp"]], "mean": [float(m) for m in out["mean_value"]],
                  "n": [int(n) for n in out["n"]]}))
"""


def make_csv(path: Path, rows: int) -> None:
    """N rows: 50 groups, a float value, an integer quantity and a date (DuckDB writes it, streaming)."""
    import duckdb

    duckdb.sql(f"COPY (SELECT 'g' || lpad((i % 50)::VARCHAR, 2, '0') AS grp, (i * 7919 % 100003) / 100.0 AS value, "
               f"i % 97 AS qty, DATE '2020-01-01' + (i % 1500)::INTEGER AS day FROM range({rows}) t(i)) "
               f"TO '{path}' (HEADER)")


def run(engine: str, path: Path, folder: Path) -> dict:
    out = subprocess.run([sys.executable, "-c", CHILD, engine, str(path), str(folder), SQL], capture_output=True,
                         text=True)
    if out.returncode != 0:
        raise SystemExit(f"{engine} failed:\n{out.stderr[-3000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def bench(rows: int) -> None:
    with tempfile.TemporaryDirectory(prefix="bench-duck-") as tmp:
        path, folder = Path(tmp) / "big.csv", Path(tmp) / "session"
        folder.mkdir()
        t = time.perf_counter()
        make_csv(path, rows)
        print(f"\n{rows:,} rows, {path.stat().st_size / 2**20:.0f} MiB CSV (written in {time.perf_counter() - t:.1f} s)")
        res = {name: run(name, path, folder) for name in ("duckdb load+query", "duckdb query", "pandas", "pandas session")}
        for name, r in res.items():
            ph = r["phases"]
            print(f"  {name:18s} {r['seconds']:7.2f} s (load {ph['load']:6.2f} s, aggregate {ph['query']:5.2f} s)  "
                  f"peak RSS {r['peak_mb']:6.0f} MB  groups {len(r['grp'])}")
        db = next((folder / "duck").glob("*.duckdb"))
        print(f"  DuckDB database file {db.stat().st_size / 2**20:.0f} MiB")
        d, p = res["duckdb load+query"], res["pandas"]
        assert d["grp"] == p["grp"] and d["n"] == p["n"] and len(d["grp"]) == 50, "the engines disagree on the groups"
        assert all(abs(a - b) < 1e-6 for a, b in zip(d["mean"], p["mean"])), "the engines disagree on the means"
        assert sum(d["n"]) == rows
        q, ps = res["duckdb query"], res["pandas session"]
        assert ps["n"] == d["n"] and all(abs(a - b) < 1e-6 for a, b in zip(ps["mean"], d["mean"]))
        print(f"  pandas / duckdb: time {p['seconds'] / d['seconds']:.2f}x (first question), "
              f"{p['seconds'] / q['seconds']:.1f}x (later question); peak memory {p['peak_mb'] / d['peak_mb']:.1f}x")
        print(f"  pandas session / duckdb: time {ps['seconds'] / d['seconds']:.2f}x (first question), peak memory "
              f"{ps['peak_mb'] / d['peak_mb']:.1f}x; all 50 groups agree")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, action="append", help="rows of the CSV (repeat for several sizes)")
    args = ap.parse_args()
    for rows in args.rows or [10_000_000]:
        bench(rows)


if __name__ == "__main__":
    main()
