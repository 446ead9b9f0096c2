"""The server side of the containment suite: run as a subprocess (as root, or as an ordinary user).

``python containment_driver.py BASE`` plants canaries (in a fake HOME, the state folder, the working
directory, the environment, a second user's upload/tables/work files and the history database),
feeds every program of ``PROGRAMS`` to ``Session.run_code`` of user alice while user bob's session
sits beside it, and then judges from here, outside the sandbox. It prints one JSON report; the
test (test_containment_modes.py) asserts on it.
"""

from __future__ import annotations

import hashlib
import json
import os
import socket
import sqlite3
import sys
import time
from pathlib import Path

CANARY = "CANARY-7f3a91"  # every planted secret contains it, with its own suffix
PWN = "PWNED-c0ffee"  # every file a program tries to write outside its work folder is named with it

PROGRAMS: dict[str, str] = {
    # another user's upload, tables, work files; the history database
    "read_b_upload": "print(open({b_upload!r}).read())",
    "delete_b_upload": "import os\nos.remove({b_upload!r})",
    "rewrite_b_upload": "open({b_upload!r}, 'w').write('{pwn}')",
    "read_b_tables": "import pandas as pd\nprint(pd.read_parquet({b_table!r}).to_string())",
    "list_b_session": "import os\nprint(os.listdir({b_dir!r}))",
    "read_b_work_file": "print(open({b_work_file!r}).read())",
    "read_history_db": "import sqlite3\nprint(sqlite3.connect({history!r}).execute('select * from turns').fetchall())",
    "read_history_bytes": "print(open({history!r}, 'rb').read()[-4000:])",
    # the server's HOME and state folder
    "read_ssh_key": "print(open({home!r} + '/.ssh/id_rsa').read())",
    "read_netrc": "print(open({home!r} + '/.netrc').read())",
    "read_cloud_credentials": "print(open({home!r} + '/.aws/credentials').read())\nprint(open({home!r} + '/.config/gcloud/credentials.db').read())",
    "read_git_credentials": "print(open({home!r} + '/.git-credentials').read())\nprint(open({home!r} + '/.gitconfig').read())",
    "read_state_config": "print(open({state!r} + '/config.toml').read())",
    "read_cwd_secret": "print(open({cwd!r} + '/.env').read())",
    "walk_for_secrets": ("import os\nout = []\nfor root in ('/', {home!r}, {state!r}, '/root', '/home', '/tmp', {cwd!r}):\n"
                         "    for dirpath, dirs, files in os.walk(root):\n"
                         "        if dirpath.startswith(('/proc', '/sys', '/usr')): dirs[:] = []; continue\n"
                         "        for f in files:\n"
                         "            try: out.append(open(os.path.join(dirpath, f), errors='replace').read(200))\n"
                         "            except Exception: pass\nprint('\\n'.join(out)[:200000])"),
    "environment": "import os\nprint(dict(os.environ))",
    "server_environ": "print(open('/proc/{server_pid}/environ', 'rb').read())",
    "proc_listing": "import os\nprint([open(f'/proc/{{p}}/cmdline', 'rb').read() for p in os.listdir('/proc') if p.isdigit()])",
    # writes outside the work folder, by every route
    "to_csv_home": "df.to_csv({home!r} + '/{pwn}-1.csv')",
    "savefig_state": "import matplotlib.pyplot as plt\nplt.plot([1, 2])\nplt.savefig({state!r} + '/{pwn}-2.png')",
    "write_html_cwd": "import plotly.express as px\npx.line(x=[1, 2], y=[1, 2]).write_html({cwd!r} + '/{pwn}-3.html')",
    "open_state": "open({state!r} + '/{pwn}-4.txt', 'w').write('x')",
    "builtins_open": "import builtins\nbuiltins.__dict__['open']({home!r} + '/{pwn}-5.txt', 'w').write('x')",
    # the whole class tree, so the walk finds _io.FileIO whatever else is installed
    "subclasses_walk": ("seen, todo = set(), [().__class__.__base__]\n"
                        "while todo:\n    c = todo.pop()\n    seen.add(c)\n"
                        "    todo += [s for s in type.__subclasses__(c) if s not in seen]\n"
                        "io = next(c for c in seen if c.__module__ == '_io' and c.__name__ == 'FileIO')\n"
                        "io({home!r} + '/{pwn}-6.txt', 'w').write(b'x')"),
    "importlib_io": "import importlib\nimportlib.import_module('io').open({state!r} + '/{pwn}-7.txt', 'w').write('x')",
    "marshal_code": ("import marshal\ncode = compile(\"open({home!r} + '/{pwn}-8.txt', 'w').write('x')\", 's', 'exec')\n"
                     "exec(marshal.loads(marshal.dumps(code)))"),
    "pickle_payload": ("import pickle\npayload = b\"c__builtin__\\nopen\\n(V\" + {home!r}.encode() + b\"/{pwn}-9.txt\\nVw\\ntR.\"\n"
                       "pickle.loads(payload).write('x')"),
    "write_b_work": "open({b_work!r} + '/{pwn}-10.txt', 'w').write('x')",
    "write_repo": "open({repo!r} + '/{pwn}-11.txt', 'w').write('x')",
    "write_etc": "open('/etc/{pwn}-12', 'w').write('x')",
    # links out of the work folder
    "hard_link_secret": "import os\nos.link({home!r} + '/.ssh/id_rsa', 'key')\nprint(open('key').read())",
    "hard_link_upload": "import os\nos.link({b_upload!r}, 'up.csv')\nprint(open('up.csv').read())",
    "symlink_secret": "import os\nos.symlink({home!r} + '/.ssh/id_rsa', 'k2')\nprint(open('k2').read())",
    # leftovers for other sessions
    "leave_tmp": "for d in ('/tmp', '/var/tmp', '/dev/shm'):\n    open(d + '/{pwn}-left', 'w').write('{canary}-LEFTOVER')",
    # processes, signals, network
    "kill_server": "import os\nos.kill({server_pid}, 9)",
    "kill_b_worker": "import os\nos.kill({b_pid}, 9)",
    "ctypes_kill": "import ctypes\nctypes.CDLL(None).kill({server_pid}, 9)",
    "subprocess": "import subprocess\nprint(subprocess.run(['cat', {home!r} + '/.netrc'], capture_output=True).stdout)",
    "importlib_subprocess": "import importlib\nimportlib.import_module('subprocess').run(['touch', {home!r} + '/{pwn}-13'])",
    # below the audit hook: subprocess's own C helper starts a program without an audit event
    "fork_exec": ("import _posixsubprocess, os\nr, w = os.pipe()\noutr, outw = os.pipe()\n"
                  "pid = _posixsubprocess.fork_exec([b'/bin/echo', b'{pwn}-ran'], [b'/bin/echo'], True, (outw,), None,"
                  " [b'PATH=/usr/bin'], -1, -1, -1, outw, -1, -1, r, w, True, False, 0, None, None, None, -1, None, False)\n"
                  "os.close(w)\nos.close(outw)\nerr, out = os.read(r, 200), os.read(outr, 200)\nstatus = os.waitpid(pid, 0)[1]\n"
                  "print(out.decode())\nif err or status:\n    raise PermissionError(f'the program did not run: {{err!r}}, status {{status}}')"),
    "network": "import socket\nsocket.create_connection(('127.0.0.1', {port}), timeout=2).sendall(b'{pwn}')",
    "ptrace": "import ctypes\nprint(ctypes.CDLL(None).syscall(101, 16, {server_pid}, 0, 0))",
    "unshare_user": "import ctypes\nlibc = ctypes.CDLL(None, use_errno=True)\nprint(libc.unshare(0x10000000), ctypes.get_errno())\nimport os\nos.setuid(0)",
    # below the audit hook (no audit event, or one it does not judge): what the kernel layers of each tier stop
    "raw_socket": "import socket\ns = socket.socket()\nprint('a socket was made')",
    "environ_dirfd": ("import os\nd = os.open('/proc/{server_pid}', os.O_RDONLY)\n"
                      "print(os.read(os.open('environ', os.O_RDONLY, dir_fd=d), 4000))"),
    "pidfd_signal_server": ("import os, signal\nfd = os.pidfd_open({server_pid})\nsignal.pidfd_send_signal(fd, 0)\n"
                            "print('the server could be signalled')"),
    # every worker process of the machine but this session's (the run, its state, and in the full wall its init,
    # PID 1 of its namespace): bob's, the zygote, other servers'
    "signal_other_workers": ("import os, signal\nd = os.open('/proc', os.O_RDONLY)\nmine = {{os.getpid(), os.getppid(), 1}}\n"
                             "reached = refused = 0\nfor p in os.listdir(d):\n"
                             "    if not p.isdigit() or int(p) in mine: continue\n"
                             "    try:\n        fd = os.open(p + '/cmdline', os.O_RDONLY, dir_fd=d)\n"
                             "        cmd = os.read(fd, 300)\n        os.close(fd)\n    except OSError: continue\n"
                             "    if b'auto_analyst.execution.child' not in cmd: continue\n"
                             "    try:\n        pfd = os.pidfd_open(int(p))\n    except OSError: continue\n"
                             "    try:\n        signal.pidfd_send_signal(pfd, 0)\n        reached += 1\n"
                             "    except OSError:\n        refused += 1\n    os.close(pfd)\n"
                             "os.close(d)\nprint(reached, 'reached,', refused, 'refused')"),
    "see_processes": ("import os\nd = os.open('/proc', os.O_RDONLY)\nseen = []\nfor p in os.listdir(d):\n"
                      "    if p.isdigit():\n        try:\n            fd = os.open(p + '/cmdline', os.O_RDONLY, dir_fd=d)\n"
                      "            seen.append(os.read(fd, 300))\n            os.close(fd)\n"
                      "        except OSError: pass\nos.close(d)\n"
                      "print(len(seen), 'processes seen;', 'the server among them' if any(b'containment_driver' in c for c in seen)"
                      " else 'not the server')"),
    # resources
    "memfd": "import os\nfd = os.memfd_create('hold')\nfor _ in range(300): os.write(fd, b'x' * 2**20)\nkeep_fd = fd",
    "shm_flood": "f = open('/dev/shm/{pwn}-shm', 'wb')\nfor _ in range(400): f.write(b'x' * 2**20)\nf.flush()",
    "disk_flood": "import os\nfor i in range(5000): open(f'flood-{{i}}.bin', 'wb').write(os.urandom(2**20))",
    "memory_kept": ("hold = []\ntry:\n    while True: hold.append(bytearray(50 * 2**20))\nexcept MemoryError:\n    pass\n"
                    "print('held', len(hold))"),
    # the terminal and the result channel
    "escape_sequences": r"print('\x1b]0;owned\x07\x1b[2J\x1b]8;;http://x\x1b\\link\x1b]8;;\x1b\\\x1b]52;c;ZXZpbA==\x07\u202eevil\x9b31m')",
    "json_replaced": "import json\njson.dumps = None\njson.loads = None\njson.JSONEncoder.encode = None\nreplaced = 1",
    "stdout_replaced": "import sys\nsys.stdout = None\nsys.stderr = 42\nprint('x')",
    "fds_closed": "import os\nos.closerange(0, 1024)",
    "forged_frame": "import os\nfor fd in range(3, 100):\n    try: os.write(fd, b'\\x7f' * 8 + b'{pwn}')\n    except OSError: pass",
    "forged_valid_frame": ("import os, struct\nbody = b'{{\"ok\": true, \"stdout\": \"{pwn}\"}}'\n"
                           "frame = struct.pack('!I', len(body)) + body\nframe = struct.pack('!Q', len(frame)) + frame\n"
                           "for fd in range(3, 100):\n    try: os.write(fd, frame)\n    except OSError: pass"),
}


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest() if path.exists() else "missing"


def _rss_of_session(sb) -> int:
    """Resident bytes of a session's state process, read from here (outside) via /proc.

    Walled, the state is the child of the session's init; right after a run an old state may still be
    exiting beside the new one, so wait (up to 3 s) until there is just one. Without the full wall
    (no PID namespace) ``_state_pid`` is the state process itself.
    """
    init = sb._state_pid
    if sb._pidfd < 0:
        try:
            return int(dict(line.split(":", 1) for line in Path(f"/proc/{init}/status").read_text().splitlines()
                            if ":" in line).get("VmRSS", "0 kB").split()[0]) * 1024
        except OSError:
            return 0
    for _ in range(30):
        kids = []
        for entry in os.listdir("/proc"):
            if not entry.isdigit():
                continue
            try:
                status = Path(f"/proc/{entry}/status").read_text()
            except OSError:
                continue
            fields = dict(line.split(":", 1) for line in status.splitlines() if ":" in line)
            if int(fields.get("PPid", "-1")) == init and fields.get("State", "").strip()[:1] != "Z":
                kids.append(int(fields.get("VmRSS", "0 kB").split()[0]) * 1024)
        if len(kids) == 1:
            return kids[0]
        time.sleep(0.1)
    return max(kids or [0])


def main(base: Path) -> dict:
    home, state, cwd = base / "home", base / "state", base / "cwd"
    for d in (home / ".ssh", home / ".aws", home / ".config" / "gcloud", state, cwd):
        d.mkdir(parents=True, exist_ok=True)
    secrets = {
        home / ".ssh" / "id_rsa": f"{CANARY}-SSH", home / ".netrc": f"machine x login y password {CANARY}-NETRC",
        home / ".aws" / "credentials": f"aws_secret_access_key={CANARY}-AWS",
        home / ".config" / "gcloud" / "credentials.db": f"{CANARY}-GCLOUD", home / ".git-credentials": f"https://u:{CANARY}-GIT@x",
        home / ".gitconfig": f"[user]\n token = {CANARY}-GITCONFIG", state / "config.toml": f"api_key = '{CANARY}-CONFIG'",
        cwd / ".env": f"OPENAI_API_KEY={CANARY}-DOTENV",
    }
    for p, text in secrets.items():
        p.write_text(text)
        p.chmod(0o600)
    os.environ.update(HOME=str(home), OPENAI_API_KEY=f"{CANARY}-ENV", AUTO_ANALYST_HOME=str(state))
    os.chdir(cwd)
    from auto_analyst.api import Analyst
    from auto_analyst.config import Settings
    try:
        from auto_analyst.cli.terminal_text import escape
    except ImportError:  # an older checkout, measured for comparison
        def escape(text: str) -> str:
            return text

    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(4)
    listener.settimeout(0.1)
    wanted = {"home": state, "run_timeout": 8, "run_memory_mb": 1024, "run_disk_mb": 64, "run_tmp_mb": 64,
              "run_keep_memory_mb": 256, "max_file_mb": 64}
    # (settings an older checkout does not know are left out, so its containment can be measured too)
    settings = Settings.load({k: v for k, v in wanted.items() if k in Settings.__dataclass_fields__})
    try:
        from auto_analyst.execution.wall import bwrap_source
    except ImportError:  # an older checkout, measured for comparison
        def bwrap_source() -> str:
            return "system"
    try:
        from auto_analyst.execution.tiers import in_force
    except ImportError:  # an older checkout
        def in_force(settings=None) -> tuple[str, str]:
            return "full", ""
    report: dict = {"uid": os.getuid(), "bwrap": bwrap_source(), "tier": in_force(settings)[0], "results": {}, "problems": []}
    with Analyst(settings=settings, user="alice") as analyst:
        uploads = state / "uploads"
        (uploads / "bob").mkdir(parents=True)
        (uploads / "alice").mkdir(parents=True)
        b_upload = uploads / "bob" / "b.csv"
        b_upload.write_text(f"k,v\n{CANARY}-UPLOAD,1\n")
        a_upload = uploads / "alice" / "a.csv"
        a_upload.write_text("k,v\nx,1\ny,2\n")
        b = analyst.session(user="bob")
        b.load(b_upload)
        b_run = b.run_code(f"open('notes.txt', 'w').write('{CANARY}-BWORK')\nsecret_b = '{CANARY}-BVAR'\nprint('{CANARY}-BHIST')")
        assert b_run.status == "ok", b_run.error
        a = analyst.session(user="alice")
        a.load(a_upload)
        assert a.run_code("print(len(df))").stdout == "2\n"
        history = state / "history.sqlite3"
        b_dir = b.dir
        b_work = b.dir / "work"
        b_table = next((b.dir / "tables").glob("*.parquet"))
        fields = dict(b_upload=str(b_upload), b_table=str(b_table), b_dir=str(b_dir), b_work=str(b_work),
                      b_work_file=str(b_work / "notes.txt"), history=str(history), home=str(home), state=str(state),
                      cwd=str(cwd), repo=str(Path(__file__).resolve().parents[2]), server_pid=os.getpid(),
                      b_pid=b._runner.sandbox._state_pid, port=listener.getsockname()[1], pwn=PWN, canary=CANARY)
        watched = {**{str(p): _sha(p) for p in secrets}, str(b_upload): _sha(b_upload), str(b_table): _sha(b_table),
                   str(b_work / "notes.txt"): _sha(b_work / "notes.txt")}
        rss_base = _rss_of_session(a._runner.sandbox)
        for name, template in PROGRAMS.items():
            code = template.format(**fields)
            t0 = time.monotonic()
            try:
                result = a.run_code(code)
            except Exception as e:  # noqa: BLE001 - recorded: run_code must never raise for a script
                report["problems"].append(f"{name}: run_code raised {type(e).__name__}: {e}")
                continue
            after = a.run_code("print('alive')")
            # the run's own kind (the exception's class, a limit): a Result's error.kind is one of ERROR_KINDS
            run_error = result.attempts[-1].error if result.attempts else result.error
            entry = {"status": result.status, "kind": run_error.kind if run_error else None,
                     "message": result.error.message if result.error else "", "stdout": result.stdout[:3000],
                     "seconds": round(time.monotonic() - t0, 2), "alive": after.stdout.endswith("alive\n"),
                     "after": (after.stdout[-300:], after.error.message if after.error else ""),
                     "json": result.model_dump_json(), "escaped_stdout": escape(result.stdout)}
            if name in ("memory_kept", "memfd", "shm_flood"):
                entry["rss_growth_mb"] = round((_rss_of_session(a._runner.sandbox) - rss_base) / 2**20, 1)
            if name == "disk_flood":
                entry["work_mb"] = round(sum(f.stat().st_size for f in (a.dir / "work").rglob("*") if f.is_file()) / 2**20, 1)
            if name == "leave_tmp":
                seen = b.run_code("import os\nprint([os.path.exists(d + '/" + PWN + "-left') for d in ('/tmp', '/var/tmp', '/dev/shm')])")
                entry["seen_by_b"] = seen.stdout.strip()
            report["results"][name] = entry
        try:
            conn, _ = listener.accept()
            report["problems"].append(f"network: a connection reached the host: {conn.recv(100)!r}")
        except OSError:
            pass
        # --- judged from outside ---------------------------------------------------------
        for path, digest in watched.items():
            if _sha(Path(path)) != digest:
                report["problems"].append(f"changed or deleted: {path}")
        for name, entry in report["results"].items():
            for secret in [*secrets.values(), f"{CANARY}-ENV", f"{CANARY}-UPLOAD", f"{CANARY}-BWORK", f"{CANARY}-BVAR",
                           f"{CANARY}-BHIST"]:
                if secret in entry["json"]:
                    report["problems"].append(f"{name}: secret {secret} in the result")
        with sqlite3.connect(history) as conn:
            rows = [r for r in conn.execute("select * from turns") if "alice" in map(str, r)]
        for row in rows:
            text = " ".join(map(str, row))
            for secret in [*secrets.values(), f"{CANARY}-UPLOAD", f"{CANARY}-BWORK", f"{CANARY}-BHIST", f"{CANARY}-ENV"]:
                if secret in text:
                    report["problems"].append(f"history record of alice holds {secret}")
        for root in (home, state, cwd, Path(fields["repo"]), Path("/tmp"), Path("/var/tmp"), Path("/dev/shm"), Path("/etc")):
            for dirpath, dirs, files in os.walk(root):
                dirs[:] = [d for d in dirs if not d.startswith(("pytest-of", "aa-worker"))] if root == Path("/tmp") else dirs
                for f in [*files, *dirs]:
                    if PWN in f:
                        report["problems"].append(f"written outside the work folder: {os.path.join(dirpath, f)}")
        report["b_after"] = b.run_code("print(secret_b[:6])").stdout
        report["a_work_files"] = sorted(os.listdir(a.dir / "work"))[:20]
    return report


if __name__ == "__main__":
    sys.path.insert(0, os.environ.get("AA_CONTAINMENT_REPO") or str(Path(__file__).resolve().parents[2]))
    print("REPORT " + json.dumps(main(Path(sys.argv[1]))))
