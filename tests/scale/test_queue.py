"""Runs through the Redis queue: variables live in the session's worker; a worker killed mid-run reports
``worker_lost`` and the session goes on on another worker with its state rebuilt from the replay log."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import pytest

from auto_analyst.api import Analyst
from auto_analyst.config import Settings
from auto_analyst.errors import SandboxError
from tests.services import service_url

pytestmark = pytest.mark.services


def _start_worker(settings: Settings, name: str) -> subprocess.Popen:
    env = dict(os.environ, AUTO_ANALYST_HOME=str(settings.home), AUTO_ANALYST_QUEUE_URL=settings.queue_url)
    return subprocess.Popen([sys.executable, "-m", "auto_analyst.cli", "worker", "--name", name], env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)


@pytest.fixture
def queued(tmp_path):
    url = service_url("redis")
    import redis

    db = int(time.time() * 1000) % 15 + 1  # a scratch Redis database per test run
    url = url.rstrip("/").rsplit("/", 1)[0] + f"/{db}" if url.count("/") > 2 else f"{url}/{db}"
    redis.Redis.from_url(url).flushdb()
    settings = Settings.load({"home": tmp_path, "queue_url": url})
    workers = {n: _start_worker(settings, n) for n in ("qa", "qb")}
    from auto_analyst.queue import routing
    from auto_analyst.queue.connection import redis_for

    deadline = time.time() + 60
    while len(routing.live_workers(redis_for(url))) < 2:
        assert time.time() < deadline, "the workers did not start"
        assert all(p.poll() is None for p in workers.values()), [p.stderr.read() for p in workers.values()]
        time.sleep(0.2)
    yield settings, workers
    for p in workers.values():
        if p.poll() is None:
            p.send_signal(signal.SIGTERM)
    for p in workers.values():
        try:
            p.wait(timeout=30)
        except subprocess.TimeoutExpired:
            p.kill()


def test_variables_live_in_the_worker_and_survive_a_killed_worker(queued, datasets_dir) -> None:
    settings, workers = queued
    with Analyst(settings=settings) as analyst:
        s = analyst.session(user="alice")
        s.load(datasets_dir / "iris.csv")
        first = s.run_code("top = float(df['petal_length'].max())\nprint(top)")
        assert (first.status, first.stdout.strip()) == ("ok", "6.9")
        holder = s._runner.sandbox.worker
        assert holder in workers
        answer = s.ask("mean petal_length by species")
        assert answer.status == "ok" and "4.26" in answer.answer  # the pipeline's runs go through the queue too
        # kill the worker holding the session in the middle of a run
        proc = workers[holder]
        killer = __import__("threading").Timer(1.5, lambda: os.kill(proc.pid, signal.SIGKILL))
        killer.start()
        t0 = time.monotonic()
        lost = s.run_code("import time\ntime.sleep(20)\nlate = 1")
        assert time.monotonic() - t0 < 15
        assert lost.status == "error" and lost.error.kind == "sandbox" and lost.attempts[0].error.kind == "worker_lost", lost
        # the session goes on on the other worker, with `top` rebuilt by replaying the scripts that ran
        after = s.run_code("print(top * 2)")
        assert (after.status, after.stdout.strip()) == ("ok", "13.8"), after
        assert s._runner.sandbox.worker != holder
        gone = s.run_code("print(late)")  # the lost run never happened
        assert gone.status == "error" and gone.error.kind == "internal" and gone.attempts[0].error.kind == "NameError"
        turns = analyst.history("alice").turns(s.id)
        assert [t.result_json.count('"worker_lost"') > 0 for t in turns] == [False, False, True, False, False]


def test_no_worker_means_a_clear_sandbox_error(tmp_path, datasets_dir) -> None:
    url = service_url("redis")
    settings = Settings.load({"home": tmp_path, "queue_url": url.rstrip("/") + "/15" if url.count("/") < 3 else url})
    import redis

    redis.Redis.from_url(settings.queue_url).flushdb()
    with Analyst(settings=settings) as analyst:
        s = analyst.session(user="bob")
        s.load(datasets_dir / "iris.csv")
        with pytest.raises(SandboxError, match="auto-analyst worker"):
            s.run_code("print(1)")
