"""Queue throughput with 1 and 2 workers (the ratio), and memory per open session on the workers.

Needs Redis (``--redis redis://127.0.0.1:6379``; the benchmark uses its database 13 and empties it). Starts
the ``auto-analyst worker`` processes itself; a pool of client threads, each its own session on iris, runs a
small pandas script repeatedly through :class:`QueueSandbox` for ``--seconds``. Memory per open session is the
growth of the workers' proportional set size (PSS, their process trees, ``/proc/PID/smaps_rollup``) from half
the sessions open to all of them, divided by the sessions added: the marginal cost of one more session, apart
from the workers' and zygotes' fixed cost (printed too).

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


def run(redis_url: str, workers: int, clients: int, seconds: float, home: Path) -> tuple[float, float, float]:
    """(runs per second, MB per open session, MB fixed: workers and zygotes) with ``workers`` workers."""
    from auto_analyst.config import Settings
    from auto_analyst.queue import routing
    from auto_analyst.queue.connection import redis_for
    from auto_analyst.queue.remote import QueueSandbox

    import redis as _r

    _r.Redis.from_url(redis_url).flushdb()
    env = dict(os.environ, AUTO_ANALYST_HOME=str(home), AUTO_ANALYST_QUEUE_URL=redis_url)
    home.mkdir(parents=True, exist_ok=True)
    procs = [subprocess.Popen([sys.executable, "-m", "auto_analyst.cli", "worker", "--name", f"b{i}"], env=env,
                              stdout=subprocess.DEVNULL, stderr=open(home / f"worker{i}.log", "wb"))
             for i in range(workers)]
    try:
        deadline = time.monotonic() + 120
        while len(routing.live_workers(redis_for(redis_url))) < workers:
            if time.monotonic() > deadline or any(p.poll() is not None for p in procs):
                raise SystemExit(f"the workers did not come up; see {home}/worker*.log")
            time.sleep(0.2)
        settings = Settings.load({"home": home, "queue_url": redis_url})
        import pandas as pd

        iris = Path(__file__).resolve().parents[1] / "datasets" / "iris.csv"

        def open_session(c: int) -> QueueSandbox:
            folder = home / "bench" / str(c)
            folder.mkdir(parents=True, exist_ok=True)
            pd.read_csv(iris).to_parquet(folder / "iris.parquet")
            box = QueueSandbox(settings, folder / "work", folder / "figures")
            box.load_tables({"iris": folder / "iris.parquet"}, "iris")
            assert box.run(SCRIPT).ok  # warm: the session's sandbox is up on its worker
            return box

        half = max(1, clients // 2)
        boxes = [open_session(c) for c in range(half)]
        time.sleep(1)
        at_half = sum(pss_mb(p.pid) for p in procs)
        boxes += [open_session(c) for c in range(half, clients)]
        time.sleep(1)
        at_all = sum(pss_mb(p.pid) for p in procs)
        per_session = (at_all - at_half) / max(1, clients - half)
        fixed = at_all - per_session * clients
        lock, done, failed, stop = threading.Lock(), [0], [0], time.monotonic() + seconds

        def client(box):
            while time.monotonic() < stop:
                ok = box.run(SCRIPT).ok
                with lock:
                    done[0] += ok
                    failed[0] += not ok

        threads = [threading.Thread(target=client, args=(b,)) for b in boxes]
        t0 = time.monotonic()
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        rate = done[0] / (time.monotonic() - t0)
        assert failed[0] == 0, f"{failed[0]} runs failed"
        return rate, per_session, fixed
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
        r1, m1, f1 = run(url, 1, args.clients, args.seconds, Path(tmp) / "one")
        r2, m2, f2 = run(url, 2, args.clients, args.seconds, Path(tmp) / "two")
    print(f"1 worker : {r1:6.1f} runs/s   PSS per open session {m1:6.1f} MB   fixed {f1:6.0f} MB")
    print(f"2 workers: {r2:6.1f} runs/s   PSS per open session {m2:6.1f} MB   fixed {f2:6.0f} MB")
    print(f"throughput ratio 2/1 workers: {r2 / r1:.2f}x ({args.clients} clients, {os.cpu_count()} cores)")

if __name__ == "__main__":
    main()
