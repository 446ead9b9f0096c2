"""The attacks an adversarial tester found (as root), each of which must now fail while the caller survives:
disarming the audit hook, calling the worker's trusted helpers, escaping the work dir, reading root's
0600 files, killing the server or another session's worker, tampering with another session's tables,
and flooding the result with shown tables. The kernel-level layer is also tested on its own (a forked
test process dropped exactly as a session worker is, with no audit hook at all).
"""

from __future__ import annotations

import json
import os
import signal
import uuid

import pytest

from auto_analyst.execution import privdrop
from auto_analyst.execution.sandbox import Sandbox, Zygote
from tests.execution.conftest import make_settings

ROOT_ONLY = pytest.mark.skipif(os.geteuid() != 0, reason="the per-session uid needs root")


def _alive(sb) -> None:
    r = sb.run("print(len(df))")
    assert r.ok and r.stdout.endswith("6\n"), r


def _refused(r) -> None:
    # PermissionError from the hook or the kernel; OSError/FileNotFoundError where the session's own
    # mount namespace does not show the path at all.
    assert not r.ok and r.error.kind in ("PermissionError", "FileNotFoundError", "OSError"), (r.error, r.traceback)


def test_the_hook_cannot_be_switched_off(sandbox):
    for code in (
        "from auto_analyst.execution import guard\nguard._state['armed'] = False\n",
        "import subprocess\nsubprocess.run(['sh', '-c', 'id'])",
    ):
        assert not sandbox.run(code).ok
    for prelude in (
        "from auto_analyst.execution import guard\nguard.arm([])\n",  # re-arming only ever adds
        "from auto_analyst.execution import guard\nguard._armed.clear()\nguard._trusted['helpers'] = frozenset()\n",
        "from auto_analyst.execution import guard\ndef mine(): import subprocess; subprocess.run(['id'])\n"
        "guard.trust((mine,), ())\nguard.arm([])\nmine()\n",
    ):
        r = sandbox.run(prelude + "import subprocess\nsubprocess.run(['sh', '-c', 'id'])")
        assert not r.ok and r.error.kind == "PermissionError", (prelude, r.error)
    r = sandbox.run("import gc\nprint(len(gc.get_objects()))")
    assert not r.ok and r.error.kind == "PermissionError"
    _alive(sandbox)


@pytest.mark.parametrize("code", [
    "from auto_analyst.execution.run import kill_group\nkill_group({pid})",
    "from auto_analyst.execution.run import kill_strays\nkill_strays()\nimport os\nos.kill({pid}, 9)",
    "import __main__\n__main__.kill_group({pid})",
    "from auto_analyst.execution.run import fork\nimport os, time\nif fork() == 0:\n    os.setsid()\n    time.sleep(60)",
    "import __main__, os\nif __main__.fork() == 0:\n    os.setsid()\n    while True: os.fork()",
    "import threading\nfrom auto_analyst.execution.run import kill_group\nerr = []\n"
    "def go():\n    try: kill_group({pid})\n    except Exception as e: err.append(e)\n"
    "t = threading.Thread(target=go); t.start(); t.join()\nraise err[0]",
    "import os\nos.kill({pid}, 9)",
])
def test_trusted_helpers_refuse_a_script(sandbox, code):
    me = os.getpid()
    r = sandbox.run(code.format(pid=me))
    _refused(r)
    os.kill(me, 0)  # still here
    _alive(sandbox)


def test_lift_cpu_limit_does_nothing_for_a_script(sandbox):
    r = sandbox.run("import resource\nfrom auto_analyst.execution.limits import lift_cpu_limit\n"
                    "before = resource.getrlimit(resource.RLIMIT_CPU)\nlift_cpu_limit()\n"
                    "print(before == resource.getrlimit(resource.RLIMIT_CPU), before[0] != before[1])")
    assert r.ok and r.stdout == "True True\n", (r.error, r.stdout)


@ROOT_ONLY
def test_no_writes_outside_the_work_dir(sandbox, tmp_path):
    for target in ("/root/.aa-probe", "/etc/aa-probe", str(tmp_path / "outside.txt"), "/work/aa-probe"):
        r = sandbox.run(f"open({target!r}, 'w').write('x')")
        _refused(r)
        assert not os.path.exists(target)
    name = f"/tmp/aa-probe-{uuid.uuid4().hex}"
    r = sandbox.run(f"open({name!r}, 'w').write('x')\nprint('ok')")
    assert r.ok and not os.path.exists(name)  # the session's own /tmp, invisible to everyone else
    assert sandbox.run("open('inside.txt', 'w').write('x')").ok
    assert (sandbox.workdir / "inside.txt").read_text() == "x"


@ROOT_ONLY
def test_root_only_files_are_unreadable(sandbox, tmp_path):
    secret = sandbox.workdir.parent / "secret.key"
    secret.write_text("top-secret")
    secret.chmod(0o600)
    r = sandbox.run(f"print(open({str(secret)!r}).read())")
    _refused(r)
    assert "top-secret" not in r.stdout
    r = sandbox.run("print(open('/etc/shadow').read()[:10])") if os.path.exists("/etc/shadow") else None
    if r is not None:
        _refused(r)


@ROOT_ONLY
def test_sessions_cannot_touch_each_other(tmp_path, table_files):
    """One session's script may neither change nor read another's tables or folder, nor kill its worker."""
    settings = make_settings(tmp_path)
    (tmp_path / "sessions").mkdir()
    made = []
    try:
        for name in ("a", "b"):
            folder = tmp_path / "sessions" / name
            folder.mkdir(mode=0o700)
            tdir = folder / "tables"
            tdir.mkdir()
            path = tdir / "sales.parquet"
            path.write_bytes(table_files["sales"].read_bytes())
            sb = Sandbox(settings, folder / "work", folder / "figures")
            sb.start()
            sb.load_tables({"sales": path}, "sales")
            made.append((sb, path, folder))
        (a, a_path, a_dir), (b, _, _) = made
        assert a._uid != b._uid and a._uid >= privdrop.UID_BASE
        before = a_path.read_bytes()
        _refused(b.run(f"open({str(a_path)!r}, 'r+b').write(b'tampered')"))
        _refused(b.run(f"import pandas as pd\npd.DataFrame({{'x': [1]}}).to_parquet({str(a_path)!r})"))
        _refused(b.run(f"print(open({str(a_path)!r}, 'rb').read()[:4])"))
        _refused(b.run(f"import os\nprint(os.listdir({str(a_dir)!r}))"))
        _refused(b.run(f"import os\nprint(os.listdir({str(a_dir / 'work')!r}))"))
        _refused(b.run(f"import os\nos.kill({a._state_pid}, 9)"))
        _refused(b.run(f"import signal\nfrom auto_analyst.execution.run import kill_group\nkill_group({a._state_pid})"))
        assert a_path.read_bytes() == before
        r = a.run("print(len(df))")
        assert r.ok and r.stdout == "6\n" and not r.stdout.startswith("[sandbox restarted"), r
        r = b.run("import os\nprint(os.getuid())")
        assert r.ok and int(r.stdout) == b._uid
    finally:
        for sb, _, _ in made:
            sb.close()


def test_show_is_capped(sandbox):
    r = sandbox.run("for i in range(200): show(i)")
    assert r.ok and len(r.tables) == 50 and "[150 more tables not shown]" in r.stdout, r.stdout
    r = sandbox.run("import plotly.express as px\nfig = px.line(x=[1, 2], y=[3, 4])\nfor i in range(25): show(fig)")
    assert r.ok and len(r.figures) == 20 and "[5 more figures not shown]" in r.stdout


# --- the kernel layer on its own: a forked test process, dropped as a session worker is, no hook --

_PROBE = """
import json, os, resource, signal
out = {}
def attempt(name, fn):
    try:
        fn(); out[name] = "allowed"
    except (OSError, ValueError) as e:
        out[name] = type(e).__name__
attempt("write_root", lambda: open("/root/.aa-kernel-probe", "w"))
attempt("read_secret", lambda: open(SECRET).read())
attempt("kill_parent", lambda: os.kill(PARENT, 0))
attempt("environ_parent", lambda: open(f"/proc/{PARENT}/environ", "rb").read())
attempt("raise_nproc", lambda: resource.setrlimit(resource.RLIMIT_NPROC, (10**6, 10**6)))
resource.setrlimit(resource.RLIMIT_NPROC, (4, 4))
kids = []
def bomb():
    for _ in range(50):
        pid = os.fork()
        if pid == 0:
            signal.pause()
        kids.append(pid)
attempt("fork_bomb", bomb)
for k in kids:
    os.kill(k, signal.SIGKILL)
out["forked"] = len(kids)
out["uid"] = os.getuid()
"""


@ROOT_ONLY
def test_kernel_enforces_without_the_hook(tmp_path):
    if not Zygote.get().info.get("privdrop"):
        pytest.skip("the worker could not keep the capabilities to change uid")
    secret = tmp_path / "secret"
    secret.write_text("s")
    secret.chmod(0o600)
    work = tmp_path / "work"
    work.mkdir()
    uid = privdrop.UID_BASE + 4242
    os.chown(work, uid, uid)
    read_end, write_end = os.pipe()
    parent = os.getpid()
    pid = os.fork()
    if pid == 0:
        try:
            os.close(read_end)
            fd = os.open(work, os.O_RDONLY | os.O_DIRECTORY)
            privdrop.enter_session(uid, fd, str(work), privdrop.python_paths())
            scope = {"SECRET": str(secret), "PARENT": parent}
            exec(_PROBE, scope)
            os.write(write_end, json.dumps(scope["out"]).encode())
        except BaseException:  # noqa: BLE001 - shown by the parent's failed json.loads
            import traceback

            os.write(write_end, traceback.format_exc().encode())
        finally:
            os._exit(0)
    os.close(write_end)
    data = b""
    while chunk := os.read(read_end, 65536):
        data += chunk
    os.close(read_end)
    os.waitpid(pid, 0)
    assert data.startswith(b"{"), data.decode(errors="replace")
    out = json.loads(data)
    assert out["uid"] == uid
    assert out["write_root"] == "PermissionError"
    assert out["read_secret"] in ("PermissionError", "FileNotFoundError")
    assert out["kill_parent"] == "PermissionError"
    assert out["environ_parent"] == "PermissionError"
    assert out["raise_nproc"] in ("ValueError", "PermissionError")
    assert out["fork_bomb"] == "BlockingIOError" and out["forked"] < 4
    os.kill(parent, signal.SIGCONT)  # the test process is untouched
