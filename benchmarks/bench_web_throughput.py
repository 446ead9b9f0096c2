"""Web throughput: N concurrent clients asking offline questions against ``auto-analyst serve``, vs one client.

Run: ``python benchmarks/bench_web_throughput.py [--clients 20] [--questions 5] [--processes 2 --workers 2]
[--baseline DIR]``. Starts ``auto-analyst serve`` (the embedded default: one command, SQLite, local Chroma,
no services) as its own process on a free port, from a fresh state folder with accounts ``bench0..`` (made
with ``users add``); every client logs in through the real login form, opens its own conversation,
uploads a small CSV (untimed), asks one untimed question (its worker starts), then asks
``--questions`` questions one after the other through ``/api/sessions/<id>/ask`` and its event
stream. With ``--processes P`` (P > 1) it then brings up ``auto-analyst stack up --no-web`` (PostgreSQL,
Redis, a Chroma server, ``--workers`` queue workers) and serves ``serve --processes P`` on it, and times
one client and ``P x --clients`` clients there too (issue 24 item 7: 40 clients with 2 processes and 2
workers should hold the same p95).

Prints one table, every configuration side by side: clients, answers per second, the ratio to one
client (issue 24 item 7: 20 clients at least 1.6x, p95 at most 1 s, on a 2-core machine), p50 and p95
of one answer's latency, the CPU each answer cost in the web server's processes and in the sandbox
workers (read from ``/proc``), and where an answer's time went by the result's own ``timings``
(``waited``: from the ask request's receipt to the answer; ``pipeline``: the pipeline's ``total``;
``run``: the sandbox runs). The load average is printed before and after each configuration: the
machine is shared, so compare figures taken in the same run.

``--baseline DIR`` (a checkout of another commit, e.g. ``git archive main | tar -x -C DIR``) serves
the same rounds from that code, alternating with this checkout (``--repeat`` times each), so the
figures compare side by side under the same load.
"""

from __future__ import annotations

import argparse
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_procs import cpu_of, sandbox_only, settle  # noqa: E402 - after the path
QUESTIONS = ["total amount", "mean amount by group", "count rows by group", "max amount", "total amount by group"]
PASSWORD = "bench-password"


def _login(s, base: str, name: str) -> None:
    """Sign in through the real login form (GET it for its CSRF token, POST name and password)."""
    form = s.get(base + "/login", timeout=60).text
    csrf = form.split('name="csrf_token" value="')[1].split('"')[0]
    r = s.post(base + "/login", data={"name": name, "password": PASSWORD, "csrf_token": csrf}, timeout=60,
               allow_redirects=False)
    if r.status_code != 302:
        raise RuntimeError(f"login of {name} failed: {r.status_code} {r.text[:200]}")


def _client(base: str, csv_path: Path, n: int, latencies: list[float], ready: threading.Barrier,
            errors: list[str], user: str | None = None, stages: list[dict] | None = None) -> None:
    import requests

    try:
        s = requests.Session()
        if user:
            _login(s, base, user)
        page = s.get(base + "/", timeout=60).text
        h = {"X-CSRF-Token": page.split('name="csrf-token" content="')[1].split('"')[0]}
        sid = s.post(base + "/api/sessions", headers=h, timeout=60).json()["session"]["id"]
        with open(csv_path, "rb") as f:
            r = s.post(f"{base}/api/sessions/{sid}/uploads", headers=h, files={"file": (csv_path.name, f)}, timeout=120)
        r.raise_for_status()
        # one untimed question: the session's worker starts (a fork of the warm zygote)
        _ask(s, base, sid, h, "row count")
    except BaseException as e:  # noqa: BLE001 - reported by the round
        errors.append(f"{type(e).__name__}: {e}")
        ready.abort()
        return
    try:
        ready.wait()
    except threading.BrokenBarrierError:
        return
    try:
        for i in range(n):
            t0 = time.perf_counter()
            timings = _ask(s, base, sid, h, QUESTIONS[i % len(QUESTIONS)])
            latencies.append(time.perf_counter() - t0)
            if stages is not None:
                stages.append(timings)
    except BaseException as e:  # noqa: BLE001
        errors.append(f"{type(e).__name__}: {e}")


def _ask(s, base: str, sid: str, h: dict, question: str) -> dict:
    """Ask and read the event stream to the end; returns the result's ``timings`` (seconds per stage)."""
    import json

    job = s.post(f"{base}/api/sessions/{sid}/ask", headers=h, json={"question": question}, timeout=60).json()["job"]
    with s.get(base + job["events"], stream=True, timeout=300) as stream:
        body = stream.text
    if "event: result" not in body or '"status": "ok"' not in body:
        raise RuntimeError(f"question {question!r} did not answer: {body[-500:]}")
    data = body.split("event: result", 1)[1].split("data: ", 1)[1].split("\n\n", 1)[0]
    try:
        return dict(json.loads(data.replace("\ndata: ", "\n")).get("timings") or {})
    except ValueError:
        return {}


def _round(base: str, csv: Path, clients: int, questions: int, pids: list[int], logins: bool = False) -> dict:
    """Time ``clients`` clients asking ``questions`` each; CPU is read from the process trees of ``pids``
    (the web server, and the queue workers when the runs happen there)."""
    latencies: list[float] = []
    stages: list[dict] = []
    errors: list[str] = []
    ready = threading.Barrier(clients + 1)
    threads = [threading.Thread(target=_client, args=(base, csv, questions, latencies, ready, errors,
                                                      f"bench{k}" if logins else None, stages))
               for k in range(clients)]
    for t in threads:
        t.start()
    try:
        ready.wait()
    except threading.BrokenBarrierError:
        for t in threads:
            t.join()
        raise SystemExit(f"a client failed before the round: {errors[:3]}") from None
    s0, w0, k0, f0 = cpu_of(pids, len(pids) > 1)
    c0 = time.process_time()
    t0 = time.perf_counter()
    for t in threads:
        t.join()
    wall = time.perf_counter() - t0
    s1, w1, k1, f1 = cpu_of(pids, len(pids) > 1)
    if errors:
        raise SystemExit(f"{len(errors)} client(s) failed: {errors[:3]}")
    n = clients * questions

    def stage(key: str) -> float:
        values = [st.get(key, 0.0) for st in stages]
        return statistics.mean(values) if values else float("nan")

    return {"clients": clients, "rate": n / wall, "latencies": latencies, "server_cpu": (s1 - s0) / n,
            "sandbox_cpu": (w1 - w0) / n, "sandbox_kernel": (k1 - k0) / n, "faults": (f1 - f0) / n,
            "client_cpu": (time.process_time() - c0) / n,
            "waited": stage("waited"), "pipeline": stage("total"), "run": stage("running")}


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _add_users(code: Path, env: dict, clients: int) -> bool:
    """Accounts bench0..bench{clients-1} (so every client logs in through the real login); False when the
    checkout has no `users` command (a baseline from before logins: its clients just open the page)."""
    for k in range(clients):
        r = subprocess.run([sys.executable, "-m", "auto_analyst.cli", "users", "add", f"bench{k}"], env=env, cwd=code,
                           input=PASSWORD + "\n", text=True, capture_output=True)
        if r.returncode != 0:
            if "No such command" in r.stderr:
                return False
            raise SystemExit(f"could not add the benchmark's users: {r.stderr.strip()}")
    return True


def _start(code: Path, env: dict, home: Path, args: list[str], port: int) -> subprocess.Popen:
    """``auto-analyst serve`` from checkout ``code``, answering on ``port`` (waits until it does, then until idle)."""
    import requests

    log = open(home / "serve.log", "ab")  # noqa: SIM115 - closed when the process is
    proc = subprocess.Popen([sys.executable, "-m", "auto_analyst.cli", "serve", "--host", "127.0.0.1",
                             "--port", str(port), *args], env=env, cwd=code, stdout=log, stderr=subprocess.STDOUT)
    log.close()
    deadline = time.monotonic() + 300
    while True:
        try:
            requests.get(f"http://127.0.0.1:{port}/login", timeout=30)
            break
        except requests.RequestException:  # not listening yet, or too busy starting to answer
            if proc.poll() is not None or time.monotonic() > deadline:
                proc.kill()
                raise SystemExit(f"serve did not start: {(home / 'serve.log').read_text()[-2000:]}") from None
            time.sleep(0.3)
    settle(proc.pid)
    return proc


def _stop(proc: subprocess.Popen) -> None:
    proc.terminate()
    try:
        proc.wait(60)
    except subprocess.TimeoutExpired:
        proc.kill()


def _csv(home: Path) -> Path:
    import pandas as pd

    csv = home / "sales.csv"
    pd.DataFrame({"group": ["a", "b", "c", "a"] * 25, "amount": [float(i) for i in range(100)]}).to_csv(csv, index=False)
    return csv


def serve_and_measure(code: Path, clients: int, questions: int, label: str, port: int = 0,
                      rows: list[dict] | None = None) -> list[dict]:
    """``auto-analyst serve`` (one process) from checkout ``code`` with a fresh state folder: one client, then N."""
    with tempfile.TemporaryDirectory(prefix="aa-web-bench-") as tmp:
        home = Path(tmp)
        csv = _csv(home)
        port = port or _free_port()
        env = dict(os.environ, AUTO_ANALYST_HOME=str(home / "state"), LITELLM_LOCAL_MODEL_COST_MAP="True",
                   PYTHONPATH=str(code), PYTHONDONTWRITEBYTECODE="1")
        logins = _add_users(code, env, clients)
        proc = _start(code, env, home, [], port)
        base = f"http://127.0.0.1:{port}"
        rows = [] if rows is None else rows
        try:
            for k, n in ((1, questions * 2), (clients, questions)):
                la = os.getloadavg()[0]
                rows.append(_round(base, csv, k, n, [proc.pid], logins) | {"setup": label, "load": la})
        finally:
            _stop(proc)
    return rows


def stack_and_measure(code: Path, clients: int, questions: int, processes: int, workers: int, label: str,
                      port: int = 0, rows: list[dict] | None = None) -> list[dict]:
    """``stack up --no-web`` (PostgreSQL, Redis, Chroma server, ``workers`` queue workers) and ``serve
    --processes P`` on it, from checkout ``code``: one client, then ``clients`` clients. CPU counts the web
    processes and the queue workers (the sandboxes run under the workers)."""
    with tempfile.TemporaryDirectory(prefix="aa-web-stack-") as tmp:
        home = Path(tmp)
        home.chmod(0o755)  # PostgreSQL runs as the postgres user when we are root: it must enter the folder
        csv = _csv(home)
        folder = home / "stack"
        env = dict(os.environ, LITELLM_LOCAL_MODEL_COST_MAP="True", PYTHONPATH=str(code), PYTHONDONTWRITEBYTECODE="1")
        up = subprocess.run([sys.executable, "-m", "auto_analyst.cli", "stack", "up", "--dir", str(folder),
                             "--workers", str(workers), "--no-web"], env=env, cwd=code, capture_output=True, text=True)
        try:
            if up.returncode != 0:
                raise SystemExit(f"stack up failed: {up.stdout[-1500:]}{up.stderr[-1500:]}")
            for line in (folder / "stack.env").read_text().splitlines():
                key, _, value = line.removeprefix("export ").partition("=")
                env[key] = value.strip("'")
            logins = _add_users(code, env, clients)
            port = port or _free_port()
            proc = _start(code, env, home, ["--processes", str(processes)], port)
            worker_pids = [int((folder / f"worker-{i + 1}.pid").read_text()) for i in range(workers)]
            base = f"http://127.0.0.1:{port}"
            rows = [] if rows is None else rows
            try:
                for k, n in ((1, questions * 2), (clients, questions)):
                    la = os.getloadavg()[0]
                    rows.append(_round(base, csv, k, n, [proc.pid, *worker_pids], logins) | {"setup": label, "load": la})
            finally:
                _stop(proc)
        finally:
            subprocess.run([sys.executable, "-m", "auto_analyst.cli", "stack", "down", "--dir", str(folder)], env=env,
                           cwd=code, capture_output=True)
    return rows


def _p(latencies: list[float], q: int) -> float:
    """The ``q``-th percentile (statistics.quantiles, 'exclusive' method; the maximum below 20 values for p95)."""
    if q == 50:
        return statistics.median(latencies)
    return statistics.quantiles(latencies, n=20)[-1] if len(latencies) >= 20 else max(latencies)


def print_table(rows: list[dict]) -> bool:
    """One line per configuration, side by side; the ratio is to the same setup's one-client round.
    Returns whether every many-client round met the target (ratio >= 1.6, p95 <= 1 s)."""
    head = (f"{'setup':34s} {'clients':>7s} {'ans/s':>6s} {'ratio':>6s} {'p50 s':>6s} {'p95 s':>6s} "
            f"{'web ms':>6s} {'sbx ms':>6s} {'(kern)':>6s} {'waited':>6s} {'pipe':>6s} {'run':>6s} {'load':>5s}")
    print(head)
    print("-" * len(head))
    ok, one = True, {}
    for r in rows:
        if "error" in r:
            ok = False
            print(f"{r['setup'][:34]:34s} FAILED: {r['error'][:150]}")
            continue
        if r["clients"] == 1:
            one[r["setup"]] = r["rate"]
        ratio = r["rate"] / one[r["setup"]] if r["setup"] in one else float("nan")
        p95 = _p(r["latencies"], 95)
        if r["clients"] > 1:
            ok = ok and ratio >= 1.6 and p95 <= 1.0
        print(f"{r['setup'][:34]:34s} {r['clients']:7d} {r['rate']:6.2f} {ratio:5.2f}x {_p(r['latencies'], 50):6.3f} "
              f"{p95:6.3f} {r['server_cpu'] * 1000:6.0f} {r['sandbox_cpu'] * 1000:6.0f} {r['sandbox_kernel'] * 1000:6.0f} "
              f"{r['waited']:6.3f} {r['pipeline']:6.3f} {r['run']:6.3f} {r['load']:5.1f}")
    print("ratio: answers/s over the same setup's one client; web/sbx: CPU ms per answer in the web server's "
          "processes / the sandboxes (with --processes: the queue workers, which run the pipeline too; kern: "
          "their kernel part); waited/pipe/run: mean s per answer from the ask's "
          "receipt / in the pipeline / in sandbox runs; load: 1-min load average as the round started.")
    print(f"target (issue 24 item 7): ratio >= 1.6x and p95 <= 1 s for every many-client round: {'ok' if ok else 'MISSED'}")
    return ok


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clients", type=int, default=20)
    parser.add_argument("--questions", type=int, default=5)
    parser.add_argument("--processes", type=int, default=1,
                        help="above 1: also serve with this many web processes on `stack up` and time processes x clients")
    parser.add_argument("--workers", type=int, default=2, help="queue workers of the --processes setup")
    parser.add_argument("--only-processes", action="store_true", help="skip the one-process setup")
    parser.add_argument("--baseline", type=Path, default=None,
                        help="another checkout (e.g. `git archive main | tar -x -C DIR`), measured alternately with this one")
    parser.add_argument("--repeat", type=int, default=1, help="rounds of (baseline, this checkout) alternately")
    parser.add_argument("--sandbox-only", action="store_true", help="time only Sandbox.run from N threads (no web, no model)")
    parser.add_argument("--port", type=int, default=0, help="the server's port (default: a free one)")
    args = parser.parse_args()
    if args.sandbox_only:
        sandbox_only(args.clients, args.questions)
        return 0
    print(f"machine: {os.cpu_count()} cores, load average {os.getloadavg()[0]:.2f} at start", flush=True)
    codes = ([("baseline", args.baseline.resolve())] if args.baseline else []) + [("this checkout", REPO)]
    rows: list[dict] = []
    for rep in range(max(args.repeat, 1)):
        for name, code in codes:
            tag = f"{name}{f' #{rep + 1}' if args.repeat > 1 else ''}"
            label = f"{tag}, 1 process"
            try:
                if not args.only_processes:
                    serve_and_measure(code, args.clients, args.questions, label, args.port, rows)
                if args.processes > 1:
                    label = f"{tag}, {args.processes} proc/{args.workers} workers"
                    stack_and_measure(code, args.clients * args.processes, args.questions, args.processes,
                                      args.workers, label, args.port, rows)
            except SystemExit as e:  # one failed setup does not lose the others' figures
                rows.append({"setup": label, "error": str(e)})
            print(f"  ... {tag} measured, load average {os.getloadavg()[0]:.2f}", flush=True)
    ok = print_table(rows)
    print(f"load average {os.getloadavg()[0]:.2f} at the end (figures taken under load are noisy)")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
