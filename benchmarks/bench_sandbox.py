"""Warm-run cost of the sandbox against the unsafe in-process reference.

Run: ``python benchmarks/bench_sandbox.py [--repeat N]`` (about 30-40 s). Prints, per reference
script, the median wall time of a warm sandboxed run, of the same script exec'd in this process,
their ratio, and whether the target (sandbox <= 1.2 x in-process + 50 ms) holds.

BLAS/OpenMP threads are pinned to 1 here as in the worker, so both sides compute alike.
"""

from __future__ import annotations

import os

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_var] = "1"

import argparse  # noqa: E402
import statistics  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from auto_analyst.config import Settings  # noqa: E402
from auto_analyst.execution.sandbox import Sandbox, run_in_process  # noqa: E402

SCRIPTS = {
    "groupby 100k rows": (
        "sales",
        "out = df.groupby('region').agg(total=('amount', 'sum'), mean=('amount', 'mean'), n=('amount', 'size'))\n"
        "show(out.sort_values('total', ascending=False))",
    ),
    "OLS fit (statsmodels)": (
        "sales",
        "import statsmodels.formula.api as smf\n"
        "model = smf.ols('amount ~ price + qty + C(region)', data=df).fit()\n"
        "show(model.params, name='coefficients')\nprint(round(model.rsquared, 4))",
    ),
    "plotly figure (5k points)": (
        "sales",
        "import plotly.express as px\n"
        "fig = px.scatter(df.head(5000), x='price', y='amount', color='region', title='Amount by price')\n"
        "fig.show()",
    ),
    "RandomForest 10k rows": (
        "small",
        "from sklearn.ensemble import RandomForestRegressor\n"
        "X = df[['price', 'qty']]; y = df['amount']\n"
        "rf = RandomForestRegressor(n_estimators=30, max_depth=8, random_state=0).fit(X, y)\n"
        "show(pd.Series(rf.feature_importances_, index=X.columns), name='importance')",
    ),
}


def make_tables(n: int = 100_000) -> dict[str, pd.DataFrame]:
    rng = np.random.default_rng(0)
    price = rng.uniform(1, 100, n)
    qty = rng.integers(1, 20, n)
    frame = pd.DataFrame({
        "region": rng.choice(["north", "south", "east", "west", "centre"], n),
        "price": price,
        "qty": qty,
        "amount": price * qty + rng.normal(0, 10, n),
    })
    return {"sales": frame, "small": frame.head(10_000).copy()}


def time_pair(boxed, local, repeat: int, gap: float) -> tuple[float, float]:
    """Median seconds of ``repeat`` runs of each, interleaved so that load from other processes on
    the machine hits both sides alike; one untimed warm-up each (first imports, caches).

    ``gap`` seconds pass (untimed) before each run, as model calls separate real runs; with 0 the
    sandbox's housekeeping (gc, forking the next run's child) lands inside the timed runs.
    """
    samples: tuple[list[float], list[float]] = ([], [])
    for i in range(repeat + 1):
        for side, fn in enumerate((boxed, local)):
            time.sleep(gap)
            t0 = time.perf_counter()
            result = fn()
            elapsed = time.perf_counter() - t0
            if not result.ok:
                raise SystemExit(f"run failed: {result.error}\n{result.traceback}")
            if i:
                samples[side].append(elapsed)
    return statistics.median(samples[0]), statistics.median(samples[1])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=7, help="timed runs per script (median is reported)")
    parser.add_argument("--gap", type=float, default=0.2, help="untimed pause before each run, seconds (0 = back to back)")
    args = parser.parse_args()
    tables = make_tables()
    with tempfile.TemporaryDirectory(prefix="aa-bench-") as tmp:
        home = Path(tmp)
        paths = {}
        for name, frame in tables.items():
            paths[name] = home / f"{name}.parquet"
            frame.to_parquet(paths[name])
        settings = Settings.load({"home": home, "run_timeout": 60})
        t0 = time.perf_counter()
        sandbox = Sandbox(settings, home / "work", home / "figures")
        sandbox.start()
        start_s = time.perf_counter() - t0
        t0 = time.perf_counter()
        sandbox.load_tables(paths, "sales")
        load_s = time.perf_counter() - t0
        t0 = time.perf_counter()
        sandbox.run("pass")
        empty_s = time.perf_counter() - t0
        rows = []
        try:
            for label, (active, code) in SCRIPTS.items():
                sandbox.set_active(active)
                boxed, local = time_pair(
                    lambda code=code: sandbox.run(code),
                    lambda code=code, active=active: run_in_process(code, tables, active, figures_dir=home / "figures"),
                    args.repeat,
                    args.gap,
                )
                rows.append((label, boxed, local))
        finally:
            sandbox.close()
    print(f"sandbox start (cold zygote incl. imports): {start_s * 1000:8.0f} ms")
    print(f"load 2 tables (100k + 10k rows):            {load_s * 1000:8.0f} ms")
    print(f"empty run ('pass'):                         {empty_s * 1000:8.1f} ms")
    print()
    header = f"{'script':<28} {'sandbox ms':>11} {'in-process ms':>14} {'ratio':>7} {'overhead ms':>12} {'target':>8}"
    print(header)
    print("-" * len(header))
    all_ok = True
    for label, boxed, local in rows:
        ok = boxed <= 1.2 * local + 0.050
        all_ok &= ok
        print(f"{label:<28} {boxed * 1000:11.1f} {local * 1000:14.1f} {boxed / local:7.2f} {(boxed - local) * 1000:12.1f} {'ok' if ok else 'MISSED':>8}")
    print(f"\nmedian of {args.repeat} warm runs each, {args.gap:g} s apart; target: sandbox <= 1.2 x in-process + 50 ms")
    return 0 if all_ok else 1


if __name__ == "__main__":
    sys.exit(main())
