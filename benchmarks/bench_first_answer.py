"""Time to the first answer: an offline ``auto-analyst ask`` on a small CSV against ``python -c "import pandas"``.

Run: ``python benchmarks/bench_first_answer.py [--repeat N]``. Both are whole processes, timed side by
side (interleaved) from a fresh state folder each time; prints the medians and their ratio against the
target of issue 12 (ask within 3x of importing pandas).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
QUESTION = "mean petal_length by species"


def _time(argv: list[str], env: dict[str, str], cwd: Path = REPO) -> float:
    t0 = time.perf_counter()
    proc = subprocess.run(argv, env=env, capture_output=True, text=True, cwd=cwd)
    elapsed = time.perf_counter() - t0
    if proc.returncode != 0:
        raise SystemExit(f"{argv[:3]} failed ({proc.returncode}): {proc.stderr[-1500:]}")
    return elapsed


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--baseline", type=Path, default=None,
                        help="another checkout (e.g. `git archive` of an older commit) to time side by side")
    args = parser.parse_args()
    ask, pandas, base = [], [], []
    argv = [sys.executable, "-m", "auto_analyst.cli", "ask", str(REPO / "datasets" / "iris.csv"), QUESTION]
    for _ in range(args.repeat):
        with tempfile.TemporaryDirectory(prefix="aa-first-") as home:
            env = dict(os.environ, AUTO_ANALYST_HOME=home, LITELLM_LOCAL_MODEL_COST_MAP="True", PYTHONPATH=str(REPO))
            ask.append(_time(argv, env))
        if args.baseline:
            with tempfile.TemporaryDirectory(prefix="aa-first-") as home:
                env = dict(os.environ, AUTO_ANALYST_HOME=home, LITELLM_LOCAL_MODEL_COST_MAP="True",
                           PYTHONPATH=str(args.baseline), PYTHONDONTWRITEBYTECODE="1")
                base.append(_time(argv, env, cwd=args.baseline))
        pandas.append(_time([sys.executable, "-c", "import pandas"], dict(os.environ)))
    a, p = statistics.median(ask), statistics.median(pandas)
    print(f"auto-analyst ask (offline, iris.csv): {a:6.2f} s  (runs: {', '.join(f'{x:.2f}' for x in ask)})")
    if base:
        b = statistics.median(base)
        print(f"  baseline {args.baseline}: {b:6.2f} s  ({b / p:.2f}x)")
    print(f"python -c 'import pandas':            {p:6.2f} s")
    print(f"ratio: {a / p:.2f}x   target: <= 3x   {'ok' if a <= 3 * p else 'MISSED'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
