"""Time to the first answer: an offline ``auto-analyst ask`` on a small CSV against ``python -c "import pandas"``.

Run: ``python benchmarks/bench_first_answer.py [--repeat N] [--baseline DIR]``. Both are whole processes,
timed side by side (interleaved) from a fresh state folder each time; prints the medians of the wall time
and of the CPU time (user + system of the process and every process it waited for: the sandbox's zygote
and sessions included) and their ratios against the target of issue 12 (ask within 3x of importing
pandas). The CPU ratio is the one to read on a loaded machine: the wall time there mostly measures the
other processes. ``--baseline DIR`` (``git archive COMMIT | tar -x -C DIR``; not under /tmp, which the
sandbox hides) times that checkout in the same rounds.
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


def _time(argv: list[str], env: dict[str, str], cwd: Path = REPO) -> tuple[float, float]:
    """(wall seconds, CPU seconds of the process and what it waited for) of one run of ``argv``."""
    with tempfile.TemporaryFile() as err:
        t0 = time.perf_counter()
        proc = subprocess.Popen(argv, env=env, cwd=cwd, stdout=subprocess.DEVNULL, stderr=err)
        _, status, usage = os.wait4(proc.pid, 0)
        elapsed = time.perf_counter() - t0
        proc.returncode = os.waitstatus_to_exitcode(status)
        if proc.returncode != 0:
            err.seek(0)
            raise SystemExit(f"{argv[:3]} failed ({proc.returncode}): {err.read().decode(errors='replace')[-1500:]}")
    return elapsed, usage.ru_utime + usage.ru_stime


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--baseline", type=Path, default=None,
                        help="another checkout (e.g. `git archive` of an older commit) to time side by side")
    args = parser.parse_args()
    ask, pandas, base = [], [], []
    argv = [sys.executable, "-m", "auto_analyst.cli", "ask", str(REPO / "datasets" / "iris.csv"), QUESTION]
    checkouts = [(REPO, ask)] + ([(args.baseline.resolve(), base)] if args.baseline else [])
    for i in range(args.repeat + 1):  # round 0 is untimed: it writes the checkouts' bytecode caches
        for code, runs in checkouts:
            with tempfile.TemporaryDirectory(prefix="aa-first-") as home:
                env = dict(os.environ, AUTO_ANALYST_HOME=home, LITELLM_LOCAL_MODEL_COST_MAP="True", PYTHONPATH=str(code))
                took = _time(argv, env, cwd=code)
            if i:
                runs.append(took)
        took = _time([sys.executable, "-c", "import pandas"], dict(os.environ))
        if i:
            pandas.append(took)
    print(f"machine: {os.cpu_count()} cores, load average {os.getloadavg()[0]:.2f} at the end "
          "(figures taken under load are noisy; the CPU ratio less so)")
    p, pc = (statistics.median(x) for x in zip(*pandas))
    rows = [("auto-analyst ask (offline, iris.csv)", ask)] + ([(f"baseline {args.baseline}", base)] if base else [])
    for label, runs in rows:
        w, c = (statistics.median(x) for x in zip(*runs))
        print(f"{label}: wall {w:6.2f} s ({w / p:.2f}x), CPU {c:6.2f} s ({c / pc:.2f}x)  "
              f"(runs: {', '.join(f'{x:.2f}' for x, _ in runs)})")
    print(f"python -c 'import pandas': wall {p:6.2f} s, CPU {pc:6.2f} s")
    a, ac = (statistics.median(x) for x in zip(*ask))
    print(f"ratio: wall {a / p:.2f}x, CPU {ac / pc:.2f}x   target: <= 3x   {'ok' if a <= 3 * p else 'MISSED'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
