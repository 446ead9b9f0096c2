"""Queue throughput with 1 and 2 workers (the ratio), and memory per open session on a worker.

Needs Redis (``--redis redis://127.0.0.1:6379``). Starts the workers itself; a pool of client threads,
each its own session on iris, runs a small pandas script repeatedly through :class:`QueueSandbox`.

    python benchmarks/bench_scale.py --redis redis://127.0.0.1:6379 --clients 8 --seconds 20
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

SCRIPT = "out = df.groupby('species')['petal_length'].agg(['mean', 'max'])\nprint(out)"


def pss_mb(pid: int) -> float:
    """Proportional set size of a process and its descendants, in MB (smaps_rollup)."""
    total, todo = 0.0, [pid]
    while todo:
        p = todo.pop()
        try:
            for line in Path(f"/proc/{p}/smaps_rollup").read_text().splitlines():
                if line.startswith("Pss:"):
                    total += int(line.split()[1]) / 1024
            todo += [int(c) for c in subprocess.run(["pgrep", "-P", str(p)], capture_output=True, text=True).stdout.split()]
        except OSError:
            continue
    return total


def run(redis_url: str, workers: int, clients: int, seconds: float, home: Path) -> tuple[float, float]:
    from auto_analyst.config import Settings
    from auto_analyst.queue import routing
    from auto_analyst.queue.connection import redis_for
    from auto_analyst.queue.remote import QueueSandbox

    import redis as _r

    _r.Redis.from_url(redis_url).flushdb()
    env = dict(os.environ, AUTO_ANALYST_HOME=str(home), AUTO_ANALYST_QUEUE_URL=redis_url)
    procs = [subprocess.Popen([sys.executable, "-m", "auto_analyst.cli", "worker", "--name", f"b{i}"], env=env,
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL) for i in range(workers)]
    try:
        while len(routing.live_workers(redis_for(redis_url))) < workers:
            time.sleep(0.2)
        settings = Settings.load({"home": home, "queue_url": redis_url})
        import pandas as pd

        iris = Path(__file__).resolve().parents[1] / "datasets" / "iris.csv"
        boxes = []
        for c in range(clients):
            folder = home / "bench" / str(c)
            folder.mkdir(parents=True, exist_ok=True)
            pd.read_csv(iris).to_parquet(folder / "iris.parquet")
            box = QueueSandbox(settings, folder / "work", folder / "figures")
            box.load_tables({"iris": folder / "iris.parquet"}, "iris")
            box.run(SCRIPT)  # warm
            boxes.append(box)
        before = sum(pss_mb(p.pid) for p in procs)
        done, stop = [0], time.monotonic() + seconds

        def client(box):
            while time.monotonic() < stop:
                assert box.run(SCRIPT).ok
                done[0] += 1

        threads = [threading.Thread(target=client, args=(b,)) for b in boxes]
        t0 = time.monotonic()
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        rate = done[0] / (time.monotonic() - t0)
        per_session = before / clients
        return rate, per_session
    finally:
        for p in procs:
            p.terminate()
        for p in procs:
            p.wait(30)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--redis", required=True)
    ap.add_argument("--clients", type=int, default=8)
    ap.add_argument("--seconds", type=float, default=20)
    args = ap.parse_args()
    url = args.redis.rstrip("/") + "/13"
    with tempfile.TemporaryDirectory() as tmp:
        r1, m1 = run(url, 1, args.clients, args.seconds, Path(tmp) / "one")
        r2, m2 = run(url, 2, args.clients, args.seconds, Path(tmp) / "two")
    print(f"1 worker : {r1:6.1f} runs/s   workers' PSS per open session {m1:6.1f} MB")
    print(f"2 workers: {r2:6.1f} runs/s   workers' PSS per open session {m2:6.1f} MB")
    print(f"throughput ratio 2/1 workers: {r2 / r1:.2f}x ({args.clients} clients, {os.cpu_count()} cores)")


if __name__ == "__main__":
    main()
