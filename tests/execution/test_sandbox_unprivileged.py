"""No OS sandbox possible: uid 0 without any capability can neither mount nor map uid 0 into a user
namespace (the kernel wants CAP_SETFCAP for that), so bubblewrap cannot build the wall; nor can it give
sessions a uid of their own, so the namespace-free tier is refused too. Generated code
is then refused with one sentence, unless ``allow_unsandboxed`` is set: then the old layers (audit
hook, rlimits, non-dumpable caller) are all that stands.

The ordinary-user path (bubblewrap in a user namespace) is tested in test_containment_modes.py.
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
    out = {}
    with Sandbox(Settings.load({"home": home}), home / "refused", home / "figures") as sb:
        sb.load_tables({"t": home / "t.parquet"}, "t")
        r = sb.run("print(1)")
        out["refused"] = [r.ok, r.error.kind, r.error.message, sb.variables()]
    settings = Settings.load({"home": home, "run_timeout": 2, "allow_unsandboxed": True})
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
def test_without_a_wall_code_is_refused_unless_allowed(tmp_path):
    pd.DataFrame({"v": [1, 2, 3]}).to_parquet(tmp_path / "t.parquet")
    env = dict(os.environ, OPENAI_API_KEY="SECRET-unprivileged")
    proc = subprocess.run([sys.executable, "-c", SCRIPT, str(tmp_path)], env=env, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-3000:]
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    ok, kind, message, variables = out["refused"]
    assert (ok, kind, variables) == (False, "sandbox", {})
    assert message.startswith("Generated code was not run: no OS sandbox is available here (")
    assert "AUTO_ANALYST_ALLOW_UNSANDBOXED=1" in message and "unsafe" in message
    assert out["info"]["walled"] is False and out["info"]["caps_dropped"] is True
    assert out["sum"] == [[6]]
    assert out["environ"] == [False, "PermissionError", False]
    assert out["socket"] == "PermissionError"
    assert out["loop"] == "timeout"
    assert out["write"] == "PermissionError"
    assert out["after"] == "3\n"


ROOT_FALLBACK = textwrap.dedent('''
    import json, os, sys
    from pathlib import Path
    from auto_analyst.execution import tiers, wall
    wall.probe = lambda: (False, "bubblewrap disabled for this test")
    tiers.namespace_free = lambda: (False, "the namespace-free tier disabled for this test")
    from auto_analyst.config import Settings
    from auto_analyst.execution.sandbox import Sandbox, Zygote
    home = Path(sys.argv[1])
    settings = Settings.load({"home": home, "run_timeout": 2, "allow_unsandboxed": True})
    with Sandbox(settings, home / "work", home / "figures") as sb:
        sb.load_tables({"t": home / "t.parquet"}, "t")
        info = Zygote.get().info
        r = sb.run("import os\\nopen('/tmp/aa-fallback-probe', 'w').write('x')\\nprint(os.getuid(), int(df['v'].sum()))")
        w = sb.run("open('/root/.aa-fallback-probe', 'w')")
        print(json.dumps({"info": info, "out": r.stdout, "write": w.error.kind if w.error else None}))
''')


@pytest.mark.skipif(os.geteuid() != 0, reason="the fallback's own uid per session needs root")
def test_root_without_bubblewrap_keeps_its_own_uid_when_allowed(tmp_path):
    """With allow_unsandboxed and no bubblewrap, root still gives each session its own uid and mount namespace."""
    pd.DataFrame({"v": [1, 2, 3]}).to_parquet(tmp_path / "t.parquet")
    proc = subprocess.run([sys.executable, "-c", ROOT_FALLBACK, str(tmp_path)], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-3000:]
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    assert out["info"]["walled"] is False and out["info"]["privdrop"] is True
    uid, total = out["out"].split()
    assert int(uid) >= 1_000_000_000 and total == "6"
    assert out["write"] in ("PermissionError", "FileNotFoundError")
    assert not os.path.exists("/tmp/aa-fallback-probe")  # its /tmp was its own
