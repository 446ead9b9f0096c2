"""Is a service of ``stack up`` really up? Each check is a real request to the service (an HTTP GET, a Redis
PING, a PostgreSQL connection, a worker's heartbeat key) made while the process we started is still alive, so
an older process answering on the same port is never taken for ours.

A check that fails raises :class:`ServiceFailed`: the service's name, the cause, the log to read and its last
lines. ``stack status`` runs the same checks without waiting (:func:`probe`).
"""

from __future__ import annotations

import errno
import json
import os
import socket
import time
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from auto_analyst.errors import AutoAnalystError, BadInputError

__all__ = ["ServiceFailed", "PortInUse", "check_port_free", "port_in_use", "wait_until", "http_ok", "redis_ok",
           "postgres_ok", "worker_ok", "alive", "log_tail", "STATE_FILE", "save_state", "load_state"]

STATE_FILE = "stack.json"
"""What ``stack up`` started in its folder (ports, worker ids, web port), read by ``stack status``."""


class ServiceFailed(AutoAnalystError):
    """A service ``stack up`` started did not become healthy (exit code 1)."""

    def __init__(self, service: str, cause: str, log: Path | None = None):
        tail = log_tail(log) if log is not None else ""
        where = f" See {log}" + (f"; its last lines:\n{tail}" if tail else ".") if log is not None else ""
        super().__init__(f"{service} did not start: {cause}.{where}")
        self.service = service


class PortInUse(BadInputError):
    """The port a server should listen on is taken by another process (exit code 2)."""


def port_in_use(host: str, port: int) -> bool:
    """True when ``host:port`` cannot be bound because another socket listens there.

    Bound with ``SO_REUSEADDR``, as gunicorn and werkzeug bind, so a port in TIME_WAIT counts as free.
    """
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind((host, port))
        except OSError as exc:
            if exc.errno == errno.EADDRINUSE:
                return True
            raise
    return False


def check_port_free(service: str, host: str, port: int) -> None:
    """Raises :class:`PortInUse` (one sentence: what, where, what to do) when ``host:port`` is taken.

    Raises:
        PortInUse: another socket listens there.
        BadInputError: the address cannot be bound at all (a privileged port, an address not of this machine).
    """
    try:
        busy = bool(port) and port_in_use(host, port)
    except OSError as exc:
        raise BadInputError(f"{service} cannot listen on {host}:{port} ({exc.strerror}): choose a port above 1023 "
                            f"and an address of this machine (--host, --port).") from None
    if busy:
        raise PortInUse(f"{service} cannot listen on {host}:{port}: the port is already in use (another "
                        f"`auto-analyst serve` or stack?). Stop that process or choose another --port.")


def alive(pid: int) -> bool:
    """True while process ``pid`` runs (a zombie counts as gone)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:
        return Path(f"/proc/{pid}/stat").read_text().split()[2] != "Z"
    except OSError:
        return False


def log_tail(log: Path | None, lines: int = 6) -> str:
    """The last ``lines`` non-empty lines of ``log`` (indented), '' when it cannot be read."""
    try:
        text = Path(log).read_text(errors="replace") if log is not None else ""
    except OSError:
        return ""
    return "\n".join("  " + line for line in [ln for ln in text.splitlines() if ln.strip()][-lines:])


def wait_until(service: str, healthy: Callable[[], bool], log: Path, pid: int | None = None,
               timeout: float = 90.0) -> None:
    """Wait until ``healthy()`` is true while process ``pid`` (when given) is alive.

    Raises:
        ServiceFailed: the process exited first, or ``timeout`` seconds passed.
    """
    deadline = time.monotonic() + timeout
    while True:
        if pid is not None and not alive(pid):
            raise ServiceFailed(service, f"its process ({pid}) exited before answering", log)
        if healthy():
            if pid is None or alive(pid):  # answered, and by a process that is still ours
                return
            raise ServiceFailed(service, f"its process ({pid}) exited; something else answers on its port", log)
        if time.monotonic() > deadline:
            raise ServiceFailed(service, f"it did not answer within {timeout:.0f} s", log)
        time.sleep(0.3)


def http_ok(url: str) -> bool:
    """True when a GET of ``url`` answers 2xx within 2 s."""
    try:
        with urllib.request.urlopen(url, timeout=2) as reply:
            reply.read()
            return 200 <= reply.status < 300
    except (urllib.error.URLError, OSError, ValueError):
        return False


def _redis_command(port: int, command: bytes) -> bytes:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=1) as s:
            s.sendall(command)
            return s.recv(4096)
    except OSError:
        return b""


def redis_ok(port: int) -> bool:
    """True when Redis on ``port`` answers PING."""
    return _redis_command(port, b"PING\r\n").startswith(b"+PONG")


def worker_ok(port: int, worker_id: str) -> bool:
    """True when worker ``worker_id``'s heartbeat key is in Redis on ``port`` (``queue.routing.beat``)."""
    from auto_analyst.queue import worker_key

    key = worker_key(worker_id).encode()
    return _redis_command(port, b"*2\r\n$6\r\nEXISTS\r\n$%d\r\n%s\r\n" % (len(key), key)).startswith(b":1")


def postgres_ok(port: int) -> bool:
    """True when PostgreSQL on ``port`` accepts a connection (a startup packet answered by its server).

    The SSLRequest packet is answered with one byte ('S' or 'N') by any PostgreSQL server: a real round trip
    that needs no driver (psycopg belongs to the scale extra).
    """
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=1) as s:
            s.sendall((8).to_bytes(4, "big") + (80877103).to_bytes(4, "big"))
            return s.recv(1) in (b"S", b"N")
    except OSError:
        return False


@dataclass
class Probe:
    service: str
    up: bool
    detail: str


def save_state(folder: Path, state: dict) -> None:
    (folder / STATE_FILE).write_text(json.dumps(state, indent=1))


def load_state(folder: Path) -> dict | None:
    try:
        return json.loads((folder / STATE_FILE).read_text())
    except (OSError, ValueError):
        return None


def _pid(folder: Path, name: str) -> int | None:
    try:
        return int((folder / f"{name}.pid").read_text().strip())
    except (OSError, ValueError):
        return None


def probe(folder: Path, state: dict) -> list[Probe]:
    """One :class:`Probe` per service of the stack in ``folder`` (its ``stack.json`` state), checked now."""
    ports = state.get("ports", {})
    out = [Probe("postgres", postgres_ok(ports["postgres"]), f"127.0.0.1:{ports['postgres']}"),
           Probe("redis", redis_ok(ports["redis"]), f"127.0.0.1:{ports['redis']}")]
    chroma_pid = _pid(folder, "chroma")
    out.append(Probe("chroma", bool(chroma_pid and alive(chroma_pid))
                     and http_ok(f"http://127.0.0.1:{ports['chroma']}/api/v2/heartbeat"), f"127.0.0.1:{ports['chroma']}"))
    for i, worker_id in enumerate(state.get("workers", []), start=1):
        pid = _pid(folder, f"worker-{i}")
        out.append(Probe(f"worker-{i}", bool(pid and alive(pid)) and worker_ok(ports["redis"], worker_id), worker_id))
    web = state.get("web")
    if web:
        pid = _pid(folder, "web")
        out.append(Probe("web", bool(pid and alive(pid)) and http_ok(f"http://127.0.0.1:{web['port']}/login"),
                         f"http://127.0.0.1:{web['port']}/  ({web['processes']} processes)"))
    return out
