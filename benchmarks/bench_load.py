"""Benchmark: auto_analyst.load vs pandas' default read_csv on a generated mixed CSV.

Generates a CSV (default 1,000,000 rows × 20 columns: ints, floats, IDs with leading zeros,
categories, ISO and day-first dates, currency text, percents with placeholders, yes/no, free
text), then loads it in a fresh subprocess with each reader and prints wall time, CPU time,
peak memory (``resource.getrusage`` maxrss of the child) and whether the types came out right.

The readers alternate for ``--repeat`` rounds (a fresh process each time) and the best wall time
of each is compared: on a shared machine the slowest runs measure the neighbours, not the reader.
Every run's times are printed so the spread is visible.

Three figures are printed side by side, with the targets of issue 12 (item 8):
  - time: auto_analyst / pandas, best wall time of each (target ≤ 1.5);
  - memory: auto_analyst / pandas, lowest peak RSS of each (target ≤ 1.2);
  - linearity: auto_analyst's time at each ``--scale`` size and the cost of each extra million
    rows between consecutive sizes, largest over smallest (target: about 1, i.e. linear from 100k
    to 3M rows).

Usage:
    python benchmarks/bench_load.py [--rows 1000000] [--repeat 3] [--scale 100000,1000000,3000000]
                                    [--keep PATH]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

CHILD = r"""
import json, resource, sys, time
path, which = sys.argv[1], sys.argv[2]
import pandas as pd
if which == "auto_analyst":
    from auto_analyst.data.load import load
t0, c0 = time.perf_counter(), time.process_time()
df = pd.read_csv(path) if which == "pandas" else load(path, max_file_mb=2000).frame
elapsed, cpu = time.perf_counter() - t0, time.process_time() - c0
peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
print(json.dumps({"seconds": elapsed, "cpu": cpu, "peak_mb": peak_mb, "shape": list(df.shape),
                  "dtypes": {c: str(t) for c, t in df.dtypes.items()},
                  "zip0": str(df["zip"].iloc[0]), "amount0": str(df["amount"].iloc[0])}))
"""

EXPECTED = {"zip": "str", "store_code": "str", "amount": "float64", "rate": "float64", "active": "bool",
            "order_date": "datetime64", "ship_date": "datetime64", "qty": "int64", "price": "float64"}


def generate(path: Path, rows: int, seed: int = 0) -> None:
    """Write the benchmark CSV (about 140 bytes per row)."""
    rng = np.random.default_rng(seed)
    day0 = np.datetime64("2020-01-01")
    days = day0 + rng.integers(0, 1500, rows).astype("timedelta64[D]")
    amount = rng.uniform(-2000, 20000, rows).round(2)
    rate = rng.uniform(0, 0.5, rows)
    rate_txt = np.char.add(np.char.mod("%.2f", rate * 100), "%").astype(object)
    rate_txt[rng.random(rows) < 0.02] = "N/A"
    frame = pd.DataFrame({
        "id": np.arange(rows),
        "zip": np.char.zfill(rng.integers(0, 99999, rows).astype(str), 5),
        "store_code": np.char.zfill(rng.integers(0, 500, rows).astype(str), 4),
        "region": rng.choice(["North", "South", "East", "West"], rows),
        "product": rng.choice([f"Product {i}" for i in range(200)], rows),
        "qty": rng.integers(1, 100, rows),
        "price": rng.uniform(1, 500, rows).round(2),
        "amount": [f"${a:,.2f}" if a >= 0 else f"(${-a:,.2f})" for a in amount],
        "rate": rate_txt,
        "active": rng.choice(["Yes", "No"], rows),
        "order_date": pd.to_datetime(days).strftime("%Y-%m-%d"),
        "ship_date": pd.to_datetime(days + 3).strftime("%d/%m/%Y"),
        "score": rng.normal(50, 10, rows).round(3),
        "weight": rng.uniform(0, 30, rows).round(1),
        "channel": rng.choice(["web", "store", "phone"], rows),
        "note": rng.choice(["", "gift", "express delivery", "fragile item"], rows),
        "count": rng.integers(0, 1000, rows),
        "lat": rng.uniform(-90, 90, rows).round(5),
        "lon": rng.uniform(-180, 180, rows).round(5),
        "version": rng.choice(["6.10.1", "6.9.2", "7.0.0"], rows),
    })
    frame.to_csv(path, index=False)


def run(path: Path, which: str) -> dict:
    out = subprocess.run([sys.executable, "-c", CHILD, str(path), which], capture_output=True, text=True, check=True)
    return json.loads(out.stdout)


def types_right(dtypes: dict[str, str]) -> list[str]:
    """Columns whose dtype is not the expected one."""
    return [c for c, want in EXPECTED.items() if not dtypes.get(c, "").startswith(want)]


def _generate(path: Path, rows: int) -> None:
    # Generate in a child: a parent that held the frame would pass its peak RSS to the measuring
    # children (Linux keeps ru_maxrss across fork+exec).
    subprocess.run([sys.executable, __file__, "--generate-only", str(path), "--rows", str(rows)], check=True)


def compare(path: Path, repeat: int) -> dict[str, dict]:
    """Alternate the readers ``repeat`` times; print every run; return each reader's best run."""
    runs: dict[str, list[dict]] = {"pandas": [], "auto_analyst": []}
    for _ in range(max(1, repeat)):
        for which, rs in runs.items():
            rs.append(run(path, which))
    best = {which: min(rs, key=lambda r: r["seconds"]) for which, rs in runs.items()}
    for which, r in best.items():
        wrong = types_right(r["dtypes"])
        every = ", ".join(f"{x['seconds']:.2f}" for x in runs[which])
        r["low_peak"] = min(x["peak_mb"] for x in runs[which])
        print(f"{which:>13}: best {r['seconds']:5.2f} s (runs: {every}), cpu {r['cpu']:5.2f} s, "
              f"peak {r['low_peak']:5.0f} MB, types wrong: {', '.join(wrong) or 'none'} "
              f"(zip[0]={r['zip0']!r}, amount[0]={r['amount0']!r})")
    return best


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--repeat", type=int, default=3, help="rounds; each reader runs once per round")
    ap.add_argument("--scale", default="100000,1000000,3000000",
                    help="row counts for the linearity check, comma-separated ('' to skip)")
    ap.add_argument("--keep", type=Path, default=None, help="write the main CSV here and keep it")
    ap.add_argument("--generate-only", type=Path, default=None, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.generate_only:
        generate(args.generate_only, args.rows)
        return
    load1 = os.getloadavg()[0]
    print(f"machine: {os.cpu_count()} cores, load average {load1:.2f} at start")
    with tempfile.TemporaryDirectory() as tmp:
        path = args.keep or Path(tmp) / "bench.csv"
        t0 = time.perf_counter()
        _generate(path, args.rows)
        print(f"generated {args.rows:,} rows × 20 columns, {path.stat().st_size / 2**20:.0f} MB "
              f"in {time.perf_counter() - t0:.1f} s")
        best = compare(path, args.repeat)
        seconds = {}
        for rows in [int(x) for x in args.scale.split(",") if x.strip()]:
            p = path if rows == args.rows else Path(tmp) / f"bench_{rows}.csv"
            if p != path:
                _generate(p, rows)
            r = best["auto_analyst"] if p == path else min((run(p, "auto_analyst") for _ in range(max(1, args.repeat))),
                                                          key=lambda x: x["seconds"])
            seconds[rows] = r["seconds"]
            if p != path:
                p.unlink()
    time_ratio = best["auto_analyst"]["seconds"] / best["pandas"]["seconds"]
    mem_ratio = best["auto_analyst"]["low_peak"] / best["pandas"]["low_peak"]
    wrong = types_right(best["auto_analyst"]["dtypes"])
    print(f"time   auto_analyst / pandas (best of {max(1, args.repeat)}): {time_ratio:.2f}  (target ≤ 1.50: "
          f"{'reached' if time_ratio <= 1.5 else 'NOT reached'})")
    print(f"memory auto_analyst / pandas (peak RSS):   {mem_ratio:.2f}  (target ≤ 1.20: "
          f"{'reached' if mem_ratio <= 1.2 else 'NOT reached'})")
    print(f"types  auto_analyst: {'every type right' if not wrong else 'WRONG: ' + ', '.join(wrong)}")
    if len(seconds) >= 2:
        # Linear means each extra million rows costs the same: compare the marginal cost between
        # consecutive sizes (a fixed cost, such as sniffing, does not count against linearity).
        sizes = sorted(seconds)
        line = ", ".join(f"{n:,} rows {seconds[n]:.2f} s" for n in sizes)
        marginal = [(seconds[b] - seconds[a]) / (b - a) * 1e6 for a, b in zip(sizes, sizes[1:])]
        spread = max(marginal) / max(min(marginal), 1e-9)
        print(f"linear auto_analyst: {line}; seconds per extra million rows "
              f"{', '.join(f'{m:.2f}' for m in marginal)}; largest / smallest {spread:.2f} "
              f"(target about 1: {'reached' if spread <= 1.3 else 'NOT reached'})")
    print(f"load average {load1:.2f} at start, {os.getloadavg()[0]:.2f} at the end "
          "(figures taken under load are noisy; compare ratios from one run)")


if __name__ == "__main__":
    main()
