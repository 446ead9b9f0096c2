"""A DuckDB table in the sandbox: scripts get ``con`` and a relation per table and can aggregate; they cannot
write the table's database, read other files through DuckDB, or install extensions, and the wall holds around
DuckDB too. Judged from outside by ``duck_driver.py``, for a server running as root and as an ordinary user."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("duckdb", reason="duckdb is in the scale extra: pip install -e '.[scale]'")

from auto_analyst.execution import wall  # noqa: E402
from tests.execution.test_containment_modes import _AS_USER, REPO, _env, _ordinary_user  # noqa: E402

DRIVER = Path(__file__).with_name("duck_driver.py")
needs_wall = pytest.mark.skipif(not wall.probe()[0], reason="no bubblewrap here: the wall cannot be built")

REFUSED_BY_DUCKDB = ["read_passwd", "read_text", "glob_root", "copy_to", "export_db", "attach_new", "install", "load"]
READ_ONLY = ["insert", "update", "delete", "create_in_db", "drop_table"]
LOCKED = ["unlock", "more_memory"]
WALL = ["own_connection_shadow", "own_connection_write", "open_write", "remove_file", "chmod_file", "new_file",
        "host_path"]


def _report(proc: subprocess.CompletedProcess) -> dict:
    line = next((ln for ln in proc.stdout.splitlines() if ln.startswith("REPORT ")), None)
    assert line is not None, (proc.returncode, proc.stdout[-2000:], proc.stderr[-4000:])
    return json.loads(line[len("REPORT "):])


def _check(report: dict) -> None:
    res = report["results"]
    assert report["walled"] is True
    agg = res["aggregate"]
    assert agg["ok"], agg
    rows = agg["tables"][0]["rows"]
    exp = report["expected"]
    assert [r[0] for r in rows] == exp["grp"] and [r[2] for r in rows] == exp["n"]
    assert [round(r[1], 9) for r in rows] == [round(m, 9) for m in exp["m"]]
    assert res["types"]["stdout"].split() == ["DuckDBPyRelation"] * 3 + ["DataFrame", "DuckDBPyConnection"]
    whole, g1 = res["show_relation"]["tables"]
    assert (whole["n_rows"], len(whole["rows"])) == (report["rows"], 20)  # max_table_rows, not the table
    assert (g1["n_rows"], len(g1["rows"])) == (exp["n"][1], 20) and {r[0] for r in g1["rows"]} == {"g1"}
    # 1024 MiB run memory -> 512 MB for DuckDB; threads capped by the cores; no external access; locked
    memory, threads, external, locked, autoinstall, autoload = json.loads(res["settings"]["stdout"])
    assert memory == "488.2 MiB" and 1 <= threads <= (os.cpu_count() or 1)
    assert (external, locked, autoinstall, autoload) == (False, True, False, False)
    assert res["duckdb_sql"]["tables"][0]["rows"] == [[report["rows"]]]
    assert res["after_keep"]["stdout"].split() == [str(report["rows"]), "False", "False", "DuckDBPyRelation"]
    assert res["pandas_join"]["tables"][0]["rows"][0][2] == "one"
    for name in REFUSED_BY_DUCKDB:
        assert not res[name]["ok"] and res[name]["kind"] == "PermissionException", (name, res[name])
        assert "disabled" in res[name]["message"], (name, res[name])
    for name in READ_ONLY:
        assert res[name]["kind"] == "InvalidInputException" and "read-only mode" in res[name]["message"], (name, res[name])
    assert res["insert_view"]["kind"] == "CatalogException"
    for name in LOCKED:
        assert res[name]["kind"] == "InvalidInputException" and "locked" in res[name]["message"], (name, res[name])
    for name in WALL:
        assert not res[name]["ok"] and res[name]["kind"] in ("IOException", "PermissionError", "OSError",
                                                             "FileNotFoundError"), (name, res[name])
    assert "No files found" in res["own_connection_shadow"]["message"]  # /etc/shadow does not exist in there
    assert "Read-only file system" in res["remove_file"]["message"]
    assert res["after"]["stdout"].split() == [str(report["rows"])] * 2  # the session carries on
    assert report["unchanged"] and report["duck_files"] == ["big-0123456789abcdef.duckdb"]
    assert report["mode"] in ("0o440", "0o400") and report["work_files"] == []
    assert report["variables"]["kept"] == "DataFrame 1x1 [n]" and "rel" not in report["variables"]


@needs_wall
@pytest.mark.skipif(os.geteuid() != 0, reason="the root mode needs root")
def test_duckdb_in_the_sandbox_as_root(tmp_path):
    proc = subprocess.run([sys.executable, str(DRIVER), str(tmp_path)], capture_output=True, text=True, timeout=600,
                          env=_env(), cwd=tmp_path)
    report = _report(proc)
    assert report["uid"] == 0 and report["mode"] == "0o440"  # the session's group reads it, nobody writes it
    _check(report)


@needs_wall
def test_duckdb_in_the_sandbox_as_an_ordinary_user(tmp_path):
    if os.geteuid() != 0:
        proc = subprocess.run([sys.executable, str(DRIVER), str(tmp_path)], capture_output=True, text=True,
                              timeout=600, env=_env(), cwd=tmp_path)
    else:
        user = _ordinary_user()
        base = tmp_path / "server"
        base.mkdir()
        shutil.chown(base, user.pw_uid, user.pw_gid)
        cmd = [sys.executable, "-c", _AS_USER, str(user.pw_uid), str(user.pw_gid), str(base), str(REPO), str(DRIVER),
               str(base)]
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=600, env=_env())
    report = _report(proc)
    assert report["uid"] != 0 and report["mode"] == "0o400"
    _check(report)
