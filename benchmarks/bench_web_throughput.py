"""Web throughput: N concurrent clients asking offline questions against the served page, vs one client.

Run: ``python benchmarks/bench_web_throughput.py [--clients 20] [--questions 5]``. Starts the app
(werkzeug, threaded, as ``auto-analyst serve``) on a free port; every client opens its own
conversation, uploads a small CSV (untimed), then asks ``--questions`` questions one after the
other through ``/api/sessions/<id>/ask`` and its event stream. Prints answers per second with one
client and with N, their ratio, and the p95 latency of one answer with N clients (issue 12: at
least 1.6x, p95 at most 1 s, on a 2-core machine).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

QUESTIONS = ["total amount", "mean amount by group", "count rows by group", "max amount", "total amount by group"]


def _client(base: str, csv_path: Path, n: int, latencies: list[float], ready: threading.Barrier) -> None:
    import requests

    s = requests.Session()
    page = s.get(base + "/", timeout=60).text
    h = {"X-CSRF-Token": page.split('name="csrf-token" content="')[1].split('"')[0]}
    sid = s.post(base + "/api/sessions", headers=h, timeout=60).json()["session"]["id"]
    with open(csv_path, "rb") as f:
        r = s.post(f"{base}/api/sessions/{sid}/uploads", headers=h, files={"file": (csv_path.name, f)}, timeout=120)
    r.raise_for_status()
    # one untimed question: the session's worker starts (a fork of the warm zygote)
    _ask(s, base, sid, h, "row count")
    ready.wait()
    for i in range(n):
        t0 = time.perf_counter()
        _ask(s, base, sid, h, QUESTIONS[i % len(QUESTIONS)])
        latencies.append(time.perf_counter() - t0)


def _ask(s, base: str, sid: str, h: dict, question: str) -> None:
    job = s.post(f"{base}/api/sessions/{sid}/ask", headers=h, json={"question": question}, timeout=60).json()["job"]
    with s.get(base + job["events"], stream=True, timeout=300) as stream:
        body = stream.text
    if '"status": "ok"' not in body and '"status":"ok"' not in body and "ok" not in body.splitlines()[-1]:
        raise SystemExit(f"question {question!r} did not answer: {body[-500:]}")


def _round(base: str, csv: Path, clients: int, questions: int) -> tuple[float, list[float]]:
    latencies: list[float] = []
    ready = threading.Barrier(clients + 1)
    threads = [threading.Thread(target=_client, args=(base, csv, questions, latencies, ready)) for _ in range(clients)]
    for t in threads:
        t.start()
    ready.wait()
    t0 = time.perf_counter()
    for t in threads:
        t.join()
    wall = time.perf_counter() - t0
    return clients * questions / wall, latencies


def _sandbox_only(clients: int, runs: int) -> None:
    """The sandbox's own share: ``clients`` sessions running a small script concurrently, vs one session."""
    import pandas as pd

    from auto_analyst.config import Settings
    from auto_analyst.execution.sandbox import Sandbox

    code = "out = df.groupby('group')['amount'].agg(['sum', 'mean'])\nshow(out)"
    with tempfile.TemporaryDirectory(prefix="aa-sb-bench-") as tmp:
        home = Path(tmp)
        pd.DataFrame({"group": ["a", "b", "c", "a"] * 250, "amount": [float(i) for i in range(1000)]}).to_parquet(home / "t.parquet")
        settings = Settings.load({"home": home})
        boxes = []
        for k in range(clients):
            sb = Sandbox(settings, home / f"w{k}", home / "figures")
            sb.load_tables({"t": home / "t.parquet"}, "t")
            sb.run("pass")
            boxes.append(sb)

        def work(sb, n, lat):
            for _ in range(n):
                t0 = time.perf_counter()
                assert sb.run(code).ok
                lat.append(time.perf_counter() - t0)

        rates = []
        for group in ([boxes[0]], boxes):
            lat: list[float] = []
            n = runs * (len(boxes) if len(group) == 1 else 1)
            threads = [threading.Thread(target=work, args=(sb, n, lat)) for sb in group]
            t0 = time.perf_counter()
            for t in threads:
                t.start()
            for t in threads:
                t.join()
            rates.append(len(lat) / (time.perf_counter() - t0))
            print(f"sandbox only, {len(group):2d} session(s): {rates[-1]:6.1f} runs/s, median {statistics.median(lat) * 1000:.0f} ms")
        for sb in boxes:
            sb.close()
    print(f"sandbox-only throughput ratio: {rates[1] / rates[0]:.2f}x")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clients", type=int, default=20)
    parser.add_argument("--questions", type=int, default=5)
    parser.add_argument("--sandbox-only", action="store_true", help="time only Sandbox.run from N threads (no web, no model)")
    args = parser.parse_args()
    if args.sandbox_only:
        _sandbox_only(args.clients, args.questions)
        return 0
    import pandas as pd
    from werkzeug.serving import make_server

    from auto_analyst.config import Settings
    from auto_analyst.execution.zygote import Zygote
    from auto_analyst.web import create_app

    with tempfile.TemporaryDirectory(prefix="aa-web-bench-") as tmp:
        home = Path(tmp)
        csv = home / "sales.csv"
        pd.DataFrame({"group": ["a", "b", "c", "a"] * 25, "amount": [float(i) for i in range(100)]}).to_csv(csv, index=False)
        app = create_app({"SETTINGS": Settings.load({"home": home / "state"}), "TESTING": False})
        server = make_server("127.0.0.1", 0, app, threaded=True)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        base = f"http://127.0.0.1:{server.server_port}"
        Zygote.get()  # warm before timing, as a running server is
        try:
            one, lat1 = _round(base, csv, 1, args.questions * 2)
            many, latn = _round(base, csv, args.clients, args.questions)
        finally:
            server.shutdown()
            app.extensions["auto_analyst"].close()
    p95 = statistics.quantiles(latn, n=20)[-1] if len(latn) >= 20 else max(latn)
    print(f"1 client:  {one:6.2f} answers/s (median latency {statistics.median(lat1):.3f} s)")
    print(f"{args.clients} clients: {many:6.2f} answers/s (median latency {statistics.median(latn):.3f} s, p95 {p95:.3f} s)")
    ok = many >= 1.6 * one and p95 <= 1.0
    print(f"throughput ratio: {many / one:.2f}x  target >= 1.6x, p95 <= 1 s: {'ok' if ok else 'MISSED'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
