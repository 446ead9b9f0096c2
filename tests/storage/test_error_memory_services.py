"""The error-fix memory with its entries on PostgreSQL and its index on a Chroma server, shared by processes;
and an earlier version's errors.sqlite3 imported once."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
import textwrap
import uuid

import pytest
from sqlalchemy import text

from auto_analyst.config import Settings
from auto_analyst.memory.errorfix.memory import ErrorMemory
from auto_analyst.storage import engine_for
from auto_analyst.storage.migrations import forget_applied
from tests.services import service_url

ADD = dict(error_type="KeyError", agent="preprocessing", agent_version="1", dataset_fingerprint="fp")


def test_entries_of_an_earlier_version_are_imported_once(settings) -> None:
    old = settings.home / "error_memory" / "errors.sqlite3"
    old.parent.mkdir(parents=True)
    with ErrorMemory(settings) as mem:  # write one entry the new way, to copy its row into an old-style file
        e = mem.add("KeyError: 'Churn'", "use df['churn']", user="alice", **ADD)
        row = mem._ensure_store().get(e.id)
    conn = sqlite3.connect(old)
    cols = ", ".join(row)
    conn.execute(f"CREATE TABLE entries ({cols})")
    conn.execute(f"INSERT INTO entries VALUES ({', '.join('?' * len(row))})",
                 [*({**row, "id": "0123456789abcdef", "doc_hash": "old", "document": "Error Summary: ValueError x\nCorrection: y"}).values()])
    conn.commit()
    conn.close()
    with ErrorMemory(settings) as mem:
        assert sorted(x.id for x in mem.list()) == sorted([e.id, "0123456789abcdef"])
        assert mem.index_count() == 2  # the index was rebuilt with the imported row
    assert not old.exists() and old.with_name("errors.sqlite3.imported").exists()


@pytest.mark.services
def test_error_memory_on_postgresql_and_a_chroma_server(tmp_path) -> None:
    db, chroma = service_url("database"), service_url("chroma")
    with engine_for(db).begin() as conn:
        conn.exec_driver_sql("DROP TABLE IF EXISTS error_entries, error_meta")
        if conn.exec_driver_sql("SELECT to_regclass('_migrations')").scalar():
            conn.execute(text("DELETE FROM _migrations WHERE name LIKE :p"), {"p": "errors:%"})
    forget_applied()
    settings = Settings.load({"home": tmp_path, "database_url": db, "chroma_url": chroma})
    with ErrorMemory(settings) as mem:
        mem.reindex()  # the server may hold a collection from an earlier run: make it match the empty table
        a = mem.add("KeyError: 'Churn' not in index", "the column is 'churn' in lower case", user="alice", **ADD)
        mem.add("ValueError: could not convert string to float: '1,5'", "use decimal=','", user="bob", **ADD)
        assert not (tmp_path / "error_memory" / ".lock").exists()  # no file lock for a server
    marker = uuid.uuid4().hex
    other = subprocess.run([sys.executable, "-c", textwrap.dedent(f"""
        import json
        from auto_analyst.config import Settings
        from auto_analyst.memory.errorfix.memory import ErrorMemory
        s = Settings.load({{"home": {str(tmp_path / 'other')!r}, "database_url": {db!r}, "chroma_url": {chroma!r}}})
        with ErrorMemory(s) as mem:
            mem.add("TypeError: {marker}", "cast it", user="alice", error_type="TypeError", agent="a",
                    agent_version="1", dataset_fingerprint="f")
            hits = mem.search("KeyError Churn not in index", user="alice")
            print(json.dumps([h.id for h in hits]))
    """)], capture_output=True, text=True, timeout=120)
    assert other.returncode == 0, other.stderr
    assert json.loads(other.stdout.strip().splitlines()[-1])[0] == a.id  # another process, other home: same memory
    with ErrorMemory(settings) as mem:
        assert mem.index_count() == 3
        assert [h.document for h in mem.search(f"TypeError: {marker}", user="alice", k=1)] == [
            f"Error Summary: TypeError: {marker}\nCorrection: cast it"]
        assert all(h.user in ("alice", "global") for h in mem.search("ValueError float", user="alice"))
