"""A grouped aggregate over a big CSV: DuckDB (the file stays on disk) against pandas (read_csv + groupby).

Each engine runs in its own process so its peak memory (ru_maxrss) is its own. Prints time, peak RSS
and the ratios, measured side by side in one run.

    python benchmarks/bench_duck.py --rows 10000000
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

CHILD = r"""
import json, resource, sys, time
engine, path = sys.argv[1], sys.argv[2]
t = time.perf_counter()
if engine == "duckdb":
    from auto_analyst.data.duck import grouped_aggregate_sql, open_table
    con = open_table(path, "big")
    out = con.sql(grouped_aggregate_sql("big", "grp", "value", "mean")).df()
else:
    import pandas as pd
    out = pd.read_csv(path).groupby("grp")["value"].mean().reset_index()
print(json.dumps({"seconds": time.perf_counter() - t, "peak_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
                  "groups": len(out), "first": float(out.iloc[0, 1])}))
"""


def make_csv(path: Path, rows: int) -> None:
    import duckdb

    duckdb.sql(f"COPY (SELECT 'g' || (i % 50) AS grp, (i * 7919 % 100003) / 100.0 AS value, i AS id "
               f"FROM range({rows}) t(i)) TO '{path}' (HEADER)")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=10_000_000)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "big.csv"
        t = time.perf_counter()
        make_csv(path, args.rows)
        print(f"{args.rows:,} rows, {path.stat().st_size / 2**20:.0f} MiB CSV (made in {time.perf_counter() - t:.1f} s)")
        res = {}
        for engine in ("duckdb", "pandas"):
            out = subprocess.run([sys.executable, "-c", CHILD, engine, str(path)], capture_output=True, text=True, check=True)
            res[engine] = json.loads(out.stdout.strip().splitlines()[-1])
            r = res[engine]
            print(f"{engine:7s} {r['seconds']:7.2f} s  peak {r['peak_mb']:7.0f} MB  groups {r['groups']}  first {r['first']:.4f}")
        assert abs(res["duckdb"]["first"] - res["pandas"]["first"]) < 1e-6, "the engines disagree"
        print(f"pandas/duckdb: time {res['pandas']['seconds'] / res['duckdb']['seconds']:.1f}x, "
              f"peak memory {res['pandas']['peak_mb'] / res['duckdb']['peak_mb']:.1f}x")


if __name__ == "__main__":
    main()
