"""Web throughput: N concurrent clients asking offline questions against ``auto-analyst serve``, vs one client.

Run: ``python benchmarks/bench_web_throughput.py [--clients 20] [--questions 5] [--baseline DIR]``.
Starts ``auto-analyst serve`` (the embedded default: one command, SQLite, local Chroma, no services) as
its own process on a free port, from a fresh state folder with accounts ``bench0..`` (made with ``users
add``); every client logs in through the real login form, opens its own conversation,
uploads a small CSV (untimed), asks one untimed question (its worker starts), then asks
``--questions`` questions one after the other through ``/api/sessions/<id>/ask`` and its event
stream. Prints answers per second with one client and with N, their ratio, the p95 latency of one
answer with N clients (issue 12: at least 1.6x, p95 at most 1 s, on a 2-core machine), and the CPU
each answer cost in the web server's processes and in the sandbox workers (read from ``/proc``).

``--baseline DIR`` (a checkout of another commit, e.g. ``git archive main | tar -x -C DIR``) serves
the same rounds from that code, one after the other in the same run, so the figures compare side by side.
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
QUESTIONS = ["total amount", "mean amount by group", "count rows by group", "max amount", "total amount by group"]
_TICK = os.sysconf("SC_CLK_TCK")
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
            errors: list[str], user: str | None = None) -> None:
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
            _ask(s, base, sid, h, QUESTIONS[i % len(QUESTIONS)])
            latencies.append(time.perf_counter() - t0)
    except BaseException as e:  # noqa: BLE001
        errors.append(f"{type(e).__name__}: {e}")


def _ask(s, base: str, sid: str, h: dict, question: str) -> None:
    job = s.post(f"{base}/api/sessions/{sid}/ask", headers=h, json={"question": question}, timeout=60).json()["job"]
    with s.get(base + job["events"], stream=True, timeout=300) as stream:
        body = stream.text
    if "event: result" not in body or '"status": "ok"' not in body:
        raise RuntimeError(f"question {question!r} did not answer: {body[-500:]}")


def _tree() -> dict[int, list[tuple[int, list[str]]]]:
    kids: dict[int, list[tuple[int, list[str]]]] = {}
    for e in os.listdir("/proc"):
        if not e.isdigit():
            continue
        try:
            with open(f"/proc/{e}/stat") as fh:
                f = fh.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        kids.setdefault(int(f[1]), []).append((int(e), f))
    return kids


def cpu_seconds(root: int) -> tuple[float, float]:
    """(CPU of process ``root`` itself, CPU of all its descendants, reaped ones included), in seconds."""
    try:
        with open(f"/proc/{root}/stat") as fh:
            f = fh.read().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0, 0.0
    own = (int(f[11]) + int(f[12])) / _TICK
    below = (int(f[13]) + int(f[14])) / _TICK
    kids, stack = _tree(), [root]
    while stack:
        for pid, g in kids.get(stack.pop(), []):
            below += sum(int(x) for x in g[11:15]) / _TICK
            stack.append(pid)
    return own, below


def _round(base: str, csv: Path, clients: int, questions: int, server_pid: int, logins: bool = False) -> dict:
    latencies: list[float] = []
    errors: list[str] = []
    ready = threading.Barrier(clients + 1)
    threads = [threading.Thread(target=_client, args=(base, csv, questions, latencies, ready, errors,
                                                      f"bench{k}" if logins else None))
               for k in range(clients)]
    for t in threads:
        t.start()
    try:
        ready.wait()
    except threading.BrokenBarrierError:
        for t in threads:
            t.join()
        raise SystemExit(f"a client failed before the round: {errors[:3]}") from None
    s0, w0 = cpu_seconds(server_pid)
    _, k0, f0 = _descendants(server_pid)
    c0 = time.process_time()
    t0 = time.perf_counter()
    for t in threads:
        t.join()
    wall = time.perf_counter() - t0
    s1, w1 = cpu_seconds(server_pid)
    _, k1, f1 = _descendants(server_pid)
    if errors:
        raise SystemExit(f"{len(errors)} client(s) failed: {errors[:3]}")
    n = clients * questions
    return {"rate": n / wall, "latencies": latencies, "server_cpu": (s1 - s0) / n, "sandbox_cpu": (w1 - w0) / n,
            "sandbox_kernel": (k1 - k0) / n, "faults": (f1 - f0) / n,
            "client_cpu": (time.process_time() - c0) / n}


def _settle(pid: int, quiet: float = 0.05, limit: float = 120.0) -> None:
    """Wait until the server's processes (its zygote's background imports included) use under ``quiet`` s of
    CPU in a second: a running server is warm, and CPU spent warming up is not an answer's."""
    deadline = time.monotonic() + limit
    last = sum(cpu_seconds(pid))
    while time.monotonic() < deadline:
        time.sleep(1.0)
        now = sum(cpu_seconds(pid))
        if now - last < quiet:
            return
        last = now


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


def serve_and_measure(code: Path, clients: int, questions: int, label: str, port: int = 0) -> dict:
    """Start ``auto-analyst serve`` from checkout ``code`` with a fresh state folder; time one client, then N."""
    import pandas as pd
    import requests

    with tempfile.TemporaryDirectory(prefix="aa-web-bench-") as tmp:
        home = Path(tmp)
        csv = home / "sales.csv"
        pd.DataFrame({"group": ["a", "b", "c", "a"] * 25, "amount": [float(i) for i in range(100)]}).to_csv(csv, index=False)
        port = port or _free_port()
        env = dict(os.environ, AUTO_ANALYST_HOME=str(home / "state"), LITELLM_LOCAL_MODEL_COST_MAP="True",
                   PYTHONPATH=str(code), PYTHONDONTWRITEBYTECODE="1")
        logins = _add_users(code, env, clients)
        log = open(home / "serve.log", "wb")  # noqa: SIM115
        proc = subprocess.Popen([sys.executable, "-m", "auto_analyst.cli", "serve", "--host", "127.0.0.1",
                                 "--port", str(port)], env=env, cwd=code, stdout=log, stderr=subprocess.STDOUT)
        base = f"http://127.0.0.1:{port}"
        try:
            deadline = time.monotonic() + 180
            while True:
                try:
                    requests.get(base + "/", timeout=5)
                    break
                except requests.ConnectionError:
                    if proc.poll() is not None or time.monotonic() > deadline:
                        log.close()
                        raise SystemExit(f"serve did not start: {(home / 'serve.log').read_text()[-2000:]}") from None
                    time.sleep(0.2)
            _settle(proc.pid)
            one = _round(base, csv, 1, questions * 2, proc.pid, logins)
            many = _round(base, csv, clients, questions, proc.pid, logins)
        finally:
            proc.terminate()
            try:
                proc.wait(30)
            except subprocess.TimeoutExpired:
                proc.kill()
            log.close()
    p95 = statistics.quantiles(many["latencies"], n=20)[-1] if len(many["latencies"]) >= 20 else max(many["latencies"])
    print(f"{label}:")
    for name, r, k in (("1 client ", one, 1), (f"{clients} clients", many, clients)):
        print(f"  {name}: {r['rate']:6.2f} answers/s, median latency {statistics.median(r['latencies']):.3f} s"
              + (f", p95 {p95:.3f} s" if k > 1 else "")
              + f"; CPU per answer: web server {r['server_cpu'] * 1000:.0f} ms, sandbox {r['sandbox_cpu'] * 1000:.0f} ms "
                f"(kernel {r['sandbox_kernel'] * 1000:.0f} ms, {r['faults']:.0f} minor faults), "
                f"clients {r['client_cpu'] * 1000:.0f} ms")
    ratio = many["rate"] / one["rate"]
    ok = ratio >= 1.6 and p95 <= 1.0
    print(f"  throughput ratio: {ratio:.2f}x  target >= 1.6x, p95 <= 1 s: {'ok' if ok else 'MISSED'}")
    return {"ratio": ratio, "p95": p95, "ok": ok}


def _sandbox_only(clients: int, runs: int) -> None:
    """The sandbox's own share, ``clients`` sessions open throughout: one session running back to back, the
    sessions taking turns one run at a time, and all of them at once. CPU per run is split into user and
    kernel time, with the minor page faults (fork's copy-on-write), to show which pattern makes it grow."""
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
        time.sleep(1.0)  # every session's standby child is forked before the first round

        def work(sb, n, lat, turn):
            for _ in range(n):
                with turn:
                    t0 = time.perf_counter()
                    assert sb.run(code).ok
                    lat.append(time.perf_counter() - t0)

        rates = []
        rounds = (("1 session back to back", [boxes[0]], runs * len(boxes), len(boxes)),
                  (f"{len(boxes)} sessions taking turns", boxes, runs, 1),
                  (f"{len(boxes)} sessions at once", boxes, runs, len(boxes)))
        for label, group, n, width in rounds:
            lat: list[float] = []
            turn = threading.Semaphore(width)
            threads = [threading.Thread(target=work, args=(sb, n, lat, turn)) for sb in group]
            u0, k0, f0 = _descendants(os.getpid())
            t0 = time.perf_counter()
            for t in threads:
                t.start()
            for t in threads:
                t.join()
            rates.append(len(lat) / (time.perf_counter() - t0))
            u1, k1, f1 = _descendants(os.getpid())
            print(f"sandbox only, {label:28s}: {rates[-1]:6.1f} runs/s, median {statistics.median(lat) * 1000:4.0f} ms; "
                  f"sandbox CPU per run {(u1 - u0 + k1 - k0) / len(lat) * 1000:3.0f} ms (user {(u1 - u0) / len(lat) * 1000:.0f}, "
                  f"kernel {(k1 - k0) / len(lat) * 1000:.0f}), {(f1 - f0) / len(lat):.0f} minor faults")
        for sb in boxes:
            sb.close()
    print(f"sandbox-only throughput ratio (all at once / one session): {rates[2] / rates[0]:.2f}x; "
          f"load average {os.getloadavg()[0]:.2f}")


def _descendants(root: int) -> tuple[float, float, int]:
    """(user s, kernel s, minor faults) of every descendant of ``root``, reaped ones included."""
    with open(f"/proc/{root}/stat") as fh:
        f = fh.read().rsplit(")", 1)[1].split()
    user, kernel, faults = int(f[13]) / _TICK, int(f[14]) / _TICK, int(f[8])
    kids, stack = _tree(), [root]
    while stack:
        for pid, g in kids.get(stack.pop(), []):
            user += (int(g[11]) + int(g[13])) / _TICK
            kernel += (int(g[12]) + int(g[14])) / _TICK
            faults += int(g[7]) + int(g[8])
            stack.append(pid)
    return user, kernel, faults


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clients", type=int, default=20)
    parser.add_argument("--questions", type=int, default=5)
    parser.add_argument("--baseline", type=Path, default=None,
                        help="another checkout (e.g. `git archive main | tar -x -C DIR`) served the same way first")
    parser.add_argument("--sandbox-only", action="store_true", help="time only Sandbox.run from N threads (no web, no model)")
    parser.add_argument("--port", type=int, default=0, help="the server's port (default: a free one)")
    args = parser.parse_args()
    if args.sandbox_only:
        _sandbox_only(args.clients, args.questions)
        return 0
    print(f"machine: {os.cpu_count()} cores, load average {os.getloadavg()[0]:.2f} at start")
    if args.baseline:
        serve_and_measure(args.baseline.resolve(), args.clients, args.questions, f"baseline {args.baseline}", args.port)
    result = serve_and_measure(REPO, args.clients, args.questions, f"this checkout {REPO}", args.port)
    print(f"load average {os.getloadavg()[0]:.2f} at the end (figures taken under load are noisy)")
    return 0 if result["ok"] else 1


if __name__ == "__main__":
    sys.exit(main())
