"""Process and CPU accounting for ``bench_web_throughput.py``: CPU of a process tree read from ``/proc`` (reaped
children included), waiting until a server is idle, and the sandbox-only rounds (``--sandbox-only``)."""

from __future__ import annotations

import os
import statistics
import tempfile
import threading
import time
from pathlib import Path

__all__ = ["cpu_of", "cpu_seconds", "descendants", "sandbox_only", "settle"]

_TICK = os.sysconf("SC_CLK_TCK")


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


def cpu_of(pids: list[int], web_tree: bool = False) -> tuple[float, float, float, int]:
    """(web CPU, sandbox CPU, kernel part of the sandbox CPU, minor faults of the sandboxes) in seconds.

    One process (``web_tree`` False): the web server is ``pids[0]`` itself, the sandboxes its descendants.
    A stack (``web_tree`` True): the web processes are ``pids[0]`` and its descendants (gunicorn), and
    the queue workers ``pids[1:]`` with their descendants answer (pipeline and sandboxes): counted as sandbox."""
    web = box = kernel = faults = 0
    for i, pid in enumerate(pids):
        own, below = cpu_seconds(pid)
        if i == 0 and not web_tree:
            web, box = web + own, box + below
        elif i == 0:
            web += own + below
            continue
        else:
            box += own + below
        try:
            _, k, f = descendants(pid)
        except OSError:
            k, f = 0, 0
        kernel, faults = kernel + k, faults + f
    return web, box, kernel, faults


def settle(pid: int, quiet: float = 0.05, limit: float = 120.0) -> None:
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


def sandbox_only(clients: int, runs: int) -> None:
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
            u0, k0, f0 = descendants(os.getpid())
            t0 = time.perf_counter()
            for t in threads:
                t.start()
            for t in threads:
                t.join()
            rates.append(len(lat) / (time.perf_counter() - t0))
            u1, k1, f1 = descendants(os.getpid())
            print(f"sandbox only, {label:28s}: {rates[-1]:6.1f} runs/s, median {statistics.median(lat) * 1000:4.0f} ms; "
                  f"sandbox CPU per run {(u1 - u0 + k1 - k0) / len(lat) * 1000:3.0f} ms (user {(u1 - u0) / len(lat) * 1000:.0f}, "
                  f"kernel {(k1 - k0) / len(lat) * 1000:.0f}), {(f1 - f0) / len(lat):.0f} minor faults")
        for sb in boxes:
            sb.close()
    print(f"sandbox-only throughput ratio (all at once / one session): {rates[2] / rates[0]:.2f}x; "
          f"load average {os.getloadavg()[0]:.2f}")


def descendants(root: int) -> tuple[float, float, int]:
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
