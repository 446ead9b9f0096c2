"""The unprivileged path: a caller without capabilities (as an ordinary user runs it) still gets a working,
isolated sandbox: no network namespace, but the audit hook, rlimits and the non-dumpable caller hold.

CI runs as root, so the caller here is a subprocess that first drops every capability.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import pandas as pd
import pytest

SCRIPT = textwrap.dedent('''
    import json, os, sys
    from pathlib import Path
    from auto_analyst.execution import limits
    assert limits._drop_capabilities() and not limits.has_capabilities()
    from auto_analyst.config import Settings
    from auto_analyst.execution.sandbox import Sandbox, Zygote
    home = Path(sys.argv[1])
    settings = Settings.load({"home": home, "run_timeout": 2})
    out = {}
    with Sandbox(settings, home / "work", home / "figures") as sb:
        sb.load_tables({"t": home / "t.parquet"}, "t")
        out["info"] = Zygote.get().info
        out["sum"] = sb.run("show(df['v'].sum())").tables[0].rows
        me = os.getpid()
        r = sb.run(f"print(open('/proc/{me}/environ').read())")
        out["environ"] = [r.ok, r.error.kind if r.error else None, "SECRET" in r.stdout]
        r = sb.run("import socket\\nsocket.create_connection(('127.0.0.1', 9), timeout=1)")
        out["socket"] = r.error.kind if r.error else None
        r = sb.run("while True: pass")
        out["loop"] = r.error.kind if r.error else None
        r = sb.run(f"open({str(home / 't.parquet')!r}, 'wb')")
        out["write"] = r.error.kind if r.error else None
        out["after"] = sb.run("print(len(df))").stdout
    print(json.dumps(out))
''')


@pytest.mark.skipif(os.geteuid() != 0, reason="already unprivileged: the other tests cover this path")
def test_sandbox_works_for_a_caller_without_capabilities(tmp_path):
    pd.DataFrame({"v": [1, 2, 3]}).to_parquet(tmp_path / "t.parquet")
    env = dict(os.environ, OPENAI_API_KEY="SECRET-unprivileged")
    proc = subprocess.run([sys.executable, "-c", SCRIPT, str(tmp_path)], env=env, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-3000:]
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    assert out["info"]["netns"] is False and out["info"]["caps_dropped"] is True
    assert out["sum"] == [[6]]
    assert out["environ"] == [False, "PermissionError", False]
    assert out["socket"] == "PermissionError"
    assert out["loop"] == "timeout"
    assert out["write"] == "PermissionError"
    assert out["after"] == "3\n"
