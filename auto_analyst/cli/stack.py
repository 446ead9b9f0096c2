"""``stack up|down|env``: the scale-out stack on one plain Linux machine, from the OS packages, without Docker.

``stack up --dir D`` starts, all on loopback and all under ``D``: a PostgreSQL cluster (``initdb`` and
``pg_ctl``; as root it runs as the ``postgres`` user, since PostgreSQL refuses root), ``redis-server``, a
Chroma server (``chroma run``, from the chromadb package), ``--workers`` queue workers and the web page
with ``--processes`` processes. It writes ``D/stack.env`` (the settings every process got, to ``source``
in a shell) and stops everything it started with ``stack down --dir D``. See docs/scale.md.
"""

from __future__ import annotations

import os
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import click

from auto_analyst.cli import stack_health as health
from auto_analyst.cli.context import Command, Group
from auto_analyst.errors import BadInputError

__all__ = ["stack"]

ENV_FILE = "stack.env"
DB_USER = DB_NAME = "auto_analyst"


@click.group("stack", cls=Group)
def stack() -> None:
    """Start or stop PostgreSQL, Redis, a Chroma server, queue workers and the web page on this machine."""


@stack.command("up", cls=Command)
@click.option("--dir", "folder", required=True, type=click.Path(file_okay=False, path_type=Path),
              help="Folder for the databases, logs and pid files (created).")
@click.option("--workers", default=2, show_default=True, type=click.IntRange(0, 64), help="Queue workers.")
@click.option("--processes", default=2, show_default=True, type=click.IntRange(1, 64), help="Web processes.")
@click.option("--port", default=8765, show_default=True, type=int, help="Port of the web page.")
@click.option("--no-web", is_flag=True, help="Start the services and workers only (tests start their own web).")
def up(folder: Path, workers: int, processes: int, port: int, no_web: bool) -> None:
    """Start the stack (PostgreSQL, Redis, Chroma server, workers, web) under DIR.

    Each service is reported only once a real request to it answered (and the process answering is the one
    started here); if one fails, what had started is stopped again and the error names the service, the
    cause and its log (exit 1; a busy web port: exit 2 before anything starts).
    """
    folder = folder.absolute()
    folder.mkdir(parents=True, exist_ok=True)
    if (folder / ENV_FILE).exists() and _running(folder):
        raise BadInputError(f"A stack is already running in {folder}; `auto-analyst stack down --dir {folder}` first.")
    if not no_web:
        health.check_port_free("The web page", "127.0.0.1", port)
    try:
        _up(folder, workers, processes, port, no_web)
    except BaseException:
        _stop_all(folder)
        click.secho(f"What had started in {folder} was stopped again.", err=True)
        raise


def _up(folder: Path, workers: int, processes: int, port: int, no_web: bool) -> None:
    ports = {"postgres": _free_port(), "redis": _free_port(), "chroma": _free_port()}
    env = {
        "AUTO_ANALYST_HOME": str(folder / "home"),
        "AUTO_ANALYST_DATABASE_URL": f"postgresql://{DB_USER}@127.0.0.1:{ports['postgres']}/{DB_NAME}",
        "AUTO_ANALYST_QUEUE_URL": f"redis://127.0.0.1:{ports['redis']}/0",
        "AUTO_ANALYST_CHROMA_URL": f"http://127.0.0.1:{ports['chroma']}",
    }
    env |= {"AUTO_ANALYST_TEST_DATABASE_URL": env["AUTO_ANALYST_DATABASE_URL"],
            "AUTO_ANALYST_TEST_REDIS_URL": env["AUTO_ANALYST_QUEUE_URL"],
            "AUTO_ANALYST_TEST_CHROMA_URL": env["AUTO_ANALYST_CHROMA_URL"]}
    worker_ids = [f"{socket.gethostname()}-{folder.name}-w{i + 1}" for i in range(workers)]
    state = {"ports": ports, "workers": worker_ids, "web": None if no_web else {"port": port, "processes": processes}}
    health.save_state(folder, state)
    (folder / ENV_FILE).write_text("".join(f"export {k}={shlex.quote(v)}\n" for k, v in env.items()))
    _postgres_up(folder, ports["postgres"])
    health.wait_until("postgres", lambda: health.postgres_ok(ports["postgres"]), folder / "postgres" / "server.log")
    click.echo(f"postgres  127.0.0.1:{ports['postgres']}")
    _redis_up(folder, ports["redis"])
    click.echo(f"redis     127.0.0.1:{ports['redis']}")
    pid = _spawn(folder, "chroma", [sys.executable, "-c", "from chromadb.cli.cli import app; app()", "run", "--path",
                                    str(folder / "chroma"), "--host", "127.0.0.1", "--port", str(ports["chroma"])], env)
    health.wait_until("chroma", lambda: health.http_ok(f"http://127.0.0.1:{ports['chroma']}/api/v2/heartbeat"),
                      folder / "chroma.log", pid)
    click.echo(f"chroma    127.0.0.1:{ports['chroma']}")
    child_env = dict(os.environ) | env
    pids = [_spawn(folder, f"worker-{i + 1}", [sys.executable, "-m", "auto_analyst.cli", "worker", "--name", worker_id],
                   child_env) for i, worker_id in enumerate(worker_ids)]
    for i, (worker_id, pid) in enumerate(zip(worker_ids, pids), start=1):
        health.wait_until(f"worker-{i}", lambda w=worker_id: health.worker_ok(ports["redis"], w),
                          folder / f"worker-{i}.log", pid)
    click.echo(f"workers   {workers}")
    if not no_web:
        pid = _spawn(folder, "web", [sys.executable, "-m", "auto_analyst.cli", "serve", "--processes", str(processes),
                                     "--host", "127.0.0.1", "--port", str(port)], child_env)
        health.wait_until("web", lambda: health.http_ok(f"http://127.0.0.1:{port}/login"), folder / "web.log", pid)  # open without sign-in
        click.echo(f"web       http://127.0.0.1:{port}/  ({processes} processes)")
        link = next((ln.strip() for ln in reversed((folder / "web.log").read_text(errors="replace").splitlines())
                     if "/?token=" in ln), None)
        if link:  # no accounts yet: the one-time sign-in link `serve` printed
            click.echo(f"sign in   {link}")
    click.echo(f"Settings: source {folder / ENV_FILE}; stop with `auto-analyst stack down --dir {folder}`.")


@stack.command("status", cls=Command)
@click.option("--dir", "folder", required=True, type=click.Path(file_okay=False, path_type=Path))
def status(folder: Path) -> None:
    """Check each service of the stack in DIR now (a real request to each); exit 0 when all are up, else 1."""
    folder = folder.absolute()
    state = health.load_state(folder)
    if state is None:
        raise BadInputError(f"No stack in {folder}; start one with `auto-analyst stack up --dir {folder}`.")
    probes = health.probe(folder, state)
    for p in probes:
        click.echo(f"{p.service:<9} {'up  ' if p.up else 'DOWN'}  {p.detail}"
                   + ("" if p.up else f"  (log: {_log_of(folder, p.service)})"))
    if not all(p.up for p in probes):
        raise click.exceptions.Exit(1)


def _log_of(folder: Path, service: str) -> Path:
    return folder / "postgres" / "server.log" if service == "postgres" else folder / f"{service}.log"


@stack.command("down", cls=Command)
@click.option("--dir", "folder", required=True, type=click.Path(file_okay=False, path_type=Path))
def down(folder: Path) -> None:
    """Stop everything `stack up` started under DIR (the data stays)."""
    folder = folder.absolute()
    _stop_all(folder)
    click.echo(f"Stopped the stack in {folder}.")


def _stop_all(folder: Path) -> None:
    for pidfile in sorted(folder.glob("*.pid"), key=lambda p: (p.stem == "chroma", p.stem)):
        if pidfile.stem == "redis":
            continue
        _stop_pid(pidfile)
    redis_pid = folder / "redis.pid"
    if redis_pid.exists():
        _stop_pid(redis_pid)
    pg = folder / "postgres"
    if (pg / "postmaster.pid").exists():
        _as_postgres(["pg_ctl", "-D", str(pg), "-m", "fast", "-w", "stop"], check=False)


@stack.command("env", cls=Command)
@click.option("--dir", "folder", required=True, type=click.Path(file_okay=False, path_type=Path))
def env_cmd(folder: Path) -> None:
    """Print the settings of the stack in DIR (``eval "$(auto-analyst stack env --dir DIR)"``)."""
    path = folder.absolute() / ENV_FILE
    if not path.exists():
        raise BadInputError(f"No stack in {folder}; start one with `auto-analyst stack up --dir {folder}`.")
    click.echo(path.read_text(), nl=False)


# -- the services ------------------------------------------------------------------------------------
def _pg_bin(name: str) -> str:
    found = shutil.which(name)
    if found:
        return found
    for candidate in sorted(Path("/usr/lib/postgresql").glob(f"*/bin/{name}"), reverse=True):
        return str(candidate)
    raise BadInputError(f"PostgreSQL's {name} was not found; install it (Debian: apt-get install postgresql).")


def _as_postgres(cmd: list[str], check: bool = True) -> subprocess.CompletedProcess:
    """Run a PostgreSQL command, as the ``postgres`` user when we are root (PostgreSQL refuses to run as root)."""
    cmd = [_pg_bin(cmd[0]), *cmd[1:]]
    if os.geteuid() == 0:
        cmd = ["runuser", "-u", "postgres", "--", *cmd]
    return subprocess.run(cmd, check=check, capture_output=True, text=True)


def _postgres_up(folder: Path, port: int) -> None:
    pg = folder / "postgres"
    if os.geteuid() == 0:
        import pwd

        try:
            pw = pwd.getpwnam("postgres")
        except KeyError:
            raise BadInputError("Running as root, PostgreSQL needs the 'postgres' user (apt-get install postgresql "
                                "creates it), or run `stack up` as an ordinary user.") from None
        closed = next((p for p in folder.parents if not os.stat(p).st_mode & 0o001), None)
        if closed is not None:
            raise BadInputError(f"PostgreSQL runs as the postgres user, which cannot enter {closed} (mode "
                                f"{oct(os.stat(closed).st_mode & 0o777)}): choose a --dir it can reach, e.g. under /srv "
                                f"or /var/tmp, or run `stack up` as an ordinary user.")
        pg.mkdir(exist_ok=True)
        os.chown(pg, pw.pw_uid, pw.pw_gid)
        os.chmod(folder, os.stat(folder).st_mode | 0o711)  # the postgres user must reach its folder
    if not (pg / "PG_VERSION").exists():
        _checked(_as_postgres(["initdb", "-D", str(pg), "-A", "trust", "-U", DB_USER, "-E", "UTF8"], check=False),
                 "initdb")
    started = _as_postgres(["pg_ctl", "-D", str(pg), "-l", str(pg / "server.log"), "-w", "-o",
                            f"-p {port} -k {pg} -c listen_addresses=127.0.0.1", "start"], check=False)
    if started.returncode:
        raise health.ServiceFailed("postgres", "pg_ctl start failed: " + (started.stderr or started.stdout).strip()[-300:],
                                   pg / "server.log")
    made = _as_postgres(["createdb", "-h", "127.0.0.1", "-p", str(port), "-U", DB_USER, DB_NAME], check=False)
    if made.returncode and "already exists" not in made.stderr:
        _checked(made, "createdb")


def _redis_up(folder: Path, port: int) -> None:
    server = shutil.which("redis-server")
    if not server:
        raise BadInputError("redis-server was not found; install it (Debian: apt-get install redis-server).")
    (folder / "redis").mkdir(exist_ok=True)
    # The queue's jobs are not kept across a Redis restart (a lost run is reported): no snapshots needed.
    _checked(subprocess.run([server, "--port", str(port), "--bind", "127.0.0.1", "--daemonize", "yes",
                             "--dir", str(folder / "redis"), "--pidfile", str(folder / "redis.pid"),
                             "--logfile", str(folder / "redis.log"), "--save", "", "--appendonly", "no"],
                            capture_output=True, text=True), "redis-server")
    deadline = time.time() + 20
    while True:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1) as s:
                s.sendall(b"PING\r\n")
                if s.recv(16).startswith(b"+PONG"):
                    return
        except OSError:
            pass
        if time.time() > deadline:
            raise health.ServiceFailed("redis", f"it did not answer PING on 127.0.0.1:{port} within 20 s",
                                       folder / "redis.log")
        time.sleep(0.2)


def _checked(proc: subprocess.CompletedProcess, what: str) -> None:
    if proc.returncode:
        raise BadInputError(f"{what} failed: {(proc.stderr or proc.stdout).strip()[-400:]}")


def _spawn(folder: Path, name: str, cmd: list[str], env: dict[str, str]) -> int:
    with open(folder / f"{name}.log", "ab") as log:
        proc = subprocess.Popen(cmd, env=dict(os.environ) | env, stdout=log, stderr=subprocess.STDOUT,
                                stdin=subprocess.DEVNULL, start_new_session=True)
    (folder / f"{name}.pid").write_text(str(proc.pid))
    return proc.pid


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _stop_pid(pidfile: Path, grace: float = 20.0) -> None:
    try:
        pid = int(pidfile.read_text().strip())
    except (OSError, ValueError):
        pidfile.unlink(missing_ok=True)
        return
    for sig in (signal.SIGTERM, signal.SIGKILL):
        try:
            os.killpg(pid, sig) if pidfile.stem != "redis" else os.kill(pid, sig)
        except (ProcessLookupError, PermissionError):
            break
        deadline = time.time() + grace
        while time.time() < deadline and health.alive(pid):
            time.sleep(0.1)
        if not health.alive(pid):
            break
    pidfile.unlink(missing_ok=True)


def _running(folder: Path) -> bool:
    for pidfile in folder.glob("*.pid"):
        try:
            if health.alive(int(pidfile.read_text().strip())):
                return True
        except (OSError, ValueError):
            continue
    return False
