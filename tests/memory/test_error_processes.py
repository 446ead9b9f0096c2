"""Error-fix memory across processes: persistence, a writer killed with SIGKILL, concurrent writers."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap

import pytest

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="SIGKILL is POSIX-only")

OPEN = textwrap.dedent(
    """
    import json, sys
    from auto_analyst.config import Settings
    from auto_analyst.memory.errorfix.memory import ErrorMemory
    mem = ErrorMemory(Settings.load())
    """
)

WRITER = OPEN + textwrap.dedent(
    """
    tag = sys.argv[1]
    for i in range(int(sys.argv[2])):
        mem.add(f"TypeError {tag} case{i} unsupported operand in column w{tag}{i}", f"cast w{tag}{i} with astype",
                error_type="TypeError", agent="a", agent_version="1", dataset_fingerprint="f",
                user=None if i % 2 else "alice")
        if i % 5 == 0:
            mem.search(f"TypeError case{i}", user="alice")  # reads interleaved with the other writer's writes
        print(i, flush=True)
    """
)

READER = OPEN + textwrap.dedent(
    """
    hits = mem.search(sys.argv[1], user="alice", k=3)
    print(json.dumps({"sqlite": len(mem.list()), "index": mem.index_count(), "top": hits[0].document if hits else None}))
    mem.close()
    """
)


def _run(code: str, *args: str) -> subprocess.CompletedProcess:
    # The conftest's AUTO_ANALYST_HOME is in os.environ, so children use this test's store.
    return subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, timeout=120,
                          env=os.environ.copy(), check=False)


def _read(query: str) -> dict:
    out = _run(READER, query)
    assert out.returncode == 0, out.stderr[-2000:]
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_entries_survive_a_new_process(settings):
    from auto_analyst.memory.errorfix.memory import ErrorMemory

    with ErrorMemory(settings) as mem:
        e = mem.add("ValueError could not convert string to float", "OneHotEncoder in a ColumnTransformer",
                    error_type="ValueError", agent="a", agent_version="1", dataset_fingerprint="f", user="alice")
    result = _read("could not convert string to float: 'Basic'")
    assert result == {"sqlite": 1, "index": 1, "top": e.document}


@pytest.mark.parametrize("stop_after", [3, pytest.param(17, marks=pytest.mark.slow)])  # 17: the same kill, later
def test_writer_killed_mid_loop_leaves_a_working_store(settings, stop_after):
    writer = subprocess.Popen([sys.executable, "-c", WRITER, "k", "100000"], stdout=subprocess.PIPE, text=True, env=os.environ.copy())
    acknowledged = -1
    try:
        for line in writer.stdout:
            acknowledged = int(line)
            if acknowledged >= stop_after:
                break
    finally:
        os.kill(writer.pid, signal.SIGKILL)
        writer.wait(timeout=30)
    assert writer.returncode == -signal.SIGKILL
    result = _read(f"TypeError k case{stop_after - 1} unsupported operand wk{stop_after - 1}")
    # Every acknowledged add is in SQLite (plus at most the one in flight), and the index agrees with it.
    assert acknowledged + 1 <= result["sqlite"] <= acknowledged + 2
    assert result["index"] == result["sqlite"]
    assert result["top"].startswith(f"Error Summary: TypeError k case{stop_after - 1} ")


def test_two_processes_writing_at_once_keep_one_consistent_index(settings):
    procs = [subprocess.Popen([sys.executable, "-c", WRITER, tag, "25"], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                              text=True, env=os.environ.copy()) for tag in ("p", "q")]
    for p in procs:
        _, err = p.communicate(timeout=120)
        assert p.returncode == 0, err[-2000:]
    result = _read("TypeError q case24 unsupported operand wq24")
    assert result["sqlite"] == 50 and result["index"] == 50
    assert result["top"].startswith("Error Summary: TypeError q case24 ")
    # Both writers' last entries are found: neither overwrote the other's index through a stale client.
    result = _read("TypeError p case24 unsupported operand wp24")
    assert result["top"].startswith("Error Summary: TypeError p case24 ")
