"""The child side: zygote, session state processes and run children (``python -m auto_analyst.execution.worker FD``).

Process tree (all started from a clean environment, in their own network namespace, without
capabilities):

* **zygote** – started once per caller process; imports pandas, numpy, scipy, statsmodels,
  sklearn, plotly and matplotlib (≈2.5 s) and then only forks. It is a child subreaper, so the
  state processes that outlive their parent are reaped here.
* **state process** – one per session, forked from the zygote. It holds the session's
  namespace (tables and the variables scripts created) and never runs generated code itself.
* **run child** – forked from the state process for each script, in its own process group,
  with rlimits applied and the audit hook armed. If the script succeeds, the run child becomes
  the session's new state process and the old one exits; if it fails, times out or is killed,
  the child's whole group is killed and the old state carries on unchanged. Fork is copy-on-
  write, so a run costs a fork (≈15 ms), not an interpreter start.
"""

from __future__ import annotations

import gc
import keyword
import os
import select
import signal
import socket
import sys
import time
from typing import Any

from auto_analyst.execution import capture, guard, limits as lim
from auto_analyst.execution.protocol import ChannelClosed, FrameTooLarge, decode, encode, recv, recv_raw, send, send_raw

_PR_SET_CHILD_SUBREAPER = 36
_PRELOAD = [
    "numpy", "pandas", "pyarrow", "pyarrow.parquet", "scipy", "scipy.stats", "scipy.optimize",
    "statsmodels.api", "statsmodels.formula.api", "sklearn", "sklearn.ensemble", "sklearn.linear_model",
    "sklearn.model_selection", "sklearn.preprocessing", "sklearn.metrics", "sklearn.cluster",
    "sklearn.decomposition", "sklearn.tree", "sklearn.pipeline", "plotly", "plotly.express",
    "plotly.graph_objects", "plotly.io", "plotly.offline", "matplotlib", "matplotlib.pyplot", "seaborn",
]
_RESERVED = {"pd", "np", "show", "df", "tables"}

# The session state lives in module globals so that it survives fork unchanged.
NS: dict[str, Any] = {}
CFG: dict[str, Any] = {"limits": lim.Limits(), "protected": [], "loaded": {}}


# --- helpers the audit hook trusts (the worker's own process management) -------------------

def _fork() -> int:
    return os.fork()


def _kill_group(pid: int) -> None:
    try:
        os.killpg(pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    try:
        os.kill(pid, signal.SIGKILL)  # the child may not have its own group yet
    except (ProcessLookupError, PermissionError):
        pass


def _kill_strays() -> None:
    """Kill processes left in this process's group (a successful run that forked past the hook)."""
    me = os.getpid()
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) == me:
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as fh:
                fields = fh.read().rsplit(b")", 1)[1].split()
            if int(fields[2]) == me:
                os.kill(int(entry), signal.SIGKILL)
        except (OSError, IndexError, ValueError):
            pass


# --- zygote ----------------------------------------------------------------------------------

def _preload() -> None:
    import importlib

    for name in _PRELOAD:
        try:
            importlib.import_module(name)
        except Exception:  # noqa: BLE001 - an optional library missing only means a slower first import
            pass
    import matplotlib

    matplotlib.use("Agg")


def zygote_main(ctrl_fd: int) -> None:
    """Serve ``spawn`` requests on the control socket until the caller closes it."""
    ctrl = socket.socket(fileno=ctrl_fd)
    t0 = time.monotonic()
    info = lim.isolate_current_process()
    _preload()
    capture.install_display_patches()
    guard.install()
    guard.trust(_fork, _kill_group, _kill_strays, lim.lift_cpu_limit)
    try:
        lim._get_libc().prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
    except (OSError, AttributeError):
        pass
    gc.collect()
    gc.freeze()  # forked children then never touch (and copy) the preloaded objects' pages in a gc pass
    send(ctrl, {"op": "ready", "pid": os.getpid(), "preload_seconds": round(time.monotonic() - t0, 3), **info})
    while True:
        readable = select.select([ctrl], [], [], 1.0)[0]
        _reap()
        if not readable:
            continue
        try:
            msg, _ = recv(ctrl)
        except (ChannelClosed, FrameTooLarge):
            break
        if msg.get("op") != "spawn":
            continue
        parent_end, child_end = socket.socketpair()
        pid = _fork()
        if pid == 0:
            ctrl.close()
            parent_end.close()
            try:
                _state_main(child_end)
            finally:
                os._exit(0)
        child_end.close()
        try:
            send(ctrl, {"op": "spawned", "pid": pid})
            socket.send_fds(ctrl, [b"F"], [parent_end.fileno()])
        except (ChannelClosed, OSError):
            break
        finally:
            parent_end.close()
    os._exit(0)


def _reap() -> None:
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return


# --- state process ---------------------------------------------------------------------------

def _state_main(sock: socket.socket) -> None:
    for sig in (signal.SIGCHLD, signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, signal.SIG_DFL)
    NS.clear()
    NS.update(capture.new_namespace())
    while True:
        try:
            msg, _ = recv(sock)
        except (ChannelClosed, FrameTooLarge):
            return
        op = msg.get("op")
        if op == "close":
            return
        if op == "cancel":  # arrived after its run had already finished
            continue
        try:
            if op == "run":
                _run(sock, msg)  # returns in the committed child too, which then serves as the state
                continue
            reply = _handle(op, msg)
        except Exception as e:  # noqa: BLE001 - report, keep serving
            reply = {"ok": False, "error": {"kind": type(e).__name__, "message": f"{type(e).__name__}: {e}"}}
        try:
            send(sock, reply)
        except ChannelClosed:
            return


def _handle(op: str | None, msg: dict[str, Any]) -> dict[str, Any]:
    if op == "init":
        os.chdir(msg["cwd"])
        CFG["limits"] = lim.Limits(**msg["limits"])
        return {"ok": True, "pid": os.getpid()}
    if op == "load":
        return _load(msg["tables"], msg["active"])
    if op == "active":
        tables = NS.get("tables")
        if not isinstance(tables, dict) or msg["name"] not in tables:
            return {"ok": False, "error": {"kind": "KeyError", "message": f"KeyError: no table named {msg['name']!r}"}}
        NS["df"] = tables[msg["name"]]
        return {"ok": True}
    if op == "vars":
        return {"ok": True, "variables": {k: capture.describe_value(NS[k]) for k in capture.user_names(NS)}}
    return {"ok": False, "error": {"kind": "protocol", "message": f"unknown operation {op!r}"}}


def _load(tables: dict[str, str], active: str) -> dict[str, Any]:
    import pandas as pd

    current = NS.get("tables") if isinstance(NS.get("tables"), dict) else {}
    for name, path in tables.items():
        st = os.stat(path)
        key = (path, st.st_size, st.st_mtime_ns)
        if CFG["loaded"].get(name) == key and name in current:
            continue  # keep the session's object: a script may have cleaned it in place
        frame = pd.read_parquet(path)
        current[name] = frame
        CFG["loaded"][name] = key
        if name.isidentifier() and not keyword.iskeyword(name) and name not in _RESERVED:
            NS[name] = frame
    NS["tables"] = current
    if active not in current:
        raise KeyError(f"no table named {active!r}")
    NS["df"] = current[active]
    CFG["protected"] = sorted(set(CFG["protected"]) | {os.path.realpath(p) for p in tables.values()})
    if guard.is_armed():
        guard.arm(CFG["protected"])
    gc.collect()
    gc.freeze()
    return {"ok": True, "names": capture.user_names(NS)}


# --- one run -----------------------------------------------------------------------------------

def _run(sock: socket.socket, msg: dict[str, Any]) -> None:
    out_fd = os.memfd_create("aa-run-output", 0)
    parent_end, child_end = socket.socketpair()
    pid = _fork()
    if pid == 0:
        parent_end.close()
        _child(msg["code"], child_end, out_fd)  # returns only when this child became the state
        return
    try:
        os.setpgid(pid, pid)  # also set here, so a kill right after fork reaches the group
    except OSError:
        pass
    child_end.close()
    try:
        _supervise(sock, pid, parent_end, out_fd, float(msg.get("timeout") or CFG["limits"].timeout))
    finally:
        parent_end.close()
        os.close(out_fd)


def _supervise(sock: socket.socket, pid: int, chan: socket.socket, out_fd: int, timeout: float) -> None:
    L: lim.Limits = CFG["limits"]
    send(sock, {"event": "started", "pid": pid, "state_pid": os.getpid()})
    deadline = time.monotonic() + timeout
    reason = None
    frame = None
    while reason is None:
        left = deadline - time.monotonic()
        if left <= 0:
            reason = "timeout"
            break
        readable = select.select([chan, sock], [], [], min(left, 0.5))[0]
        if sock in readable:
            try:
                cmsg, _ = recv(sock, timeout=10)
            except (ChannelClosed, FrameTooLarge):
                _kill_group(pid)
                os._exit(0)
            if cmsg.get("op") == "cancel":
                reason = "cancelled"
            elif cmsg.get("op") == "close":
                _kill_group(pid)
                os._exit(0)
        if chan in readable and reason is None:
            try:
                frame = recv_raw(chan, timeout=max(1.0, deadline - time.monotonic()))
            except (ChannelClosed, FrameTooLarge):
                frame = None
            break
    if frame is not None:
        header, _ = decode(frame[8:])
        if header.get("ok"):
            send_raw(sock, frame)
            send(chan, {"commit": True})
            os._exit(0)  # the child is the session's state from now on
    _kill_group(pid)
    _, status = os.waitpid(pid, 0)
    if frame is not None:
        send_raw(sock, frame)
        return
    send(sock, _death_result(reason, status, out_fd, L, timeout))


def _death_result(reason: str | None, status: int, out_fd: int, L: lim.Limits, timeout: float) -> dict[str, Any]:
    data = os.pread(out_fd, L.max_output_bytes + 1, 0)
    stdout = capture.finish_output(data, L.max_output_bytes, False)
    if reason == "timeout":
        kind, message = "timeout", f"TimeoutError: the script ran longer than {timeout:g} s and was stopped"
    elif reason == "cancelled":
        kind, message = "cancelled", "the run was cancelled"
    elif os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGXCPU:
        kind, message = "timeout", f"TimeoutError: the script used more than {L.cpu_seconds} s of CPU time and was stopped"
    elif os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGKILL:
        kind, message = "killed", "the script's process was killed (most likely out of memory)"
    elif os.WIFSIGNALED(status):
        kind, message = "killed", f"the script's process crashed ({signal.Signals(os.WTERMSIG(status)).name})"
    else:
        kind, message = "killed", f"the script's process exited (status {os.waitstatus_to_exitcode(status)}) before reporting"
    return {"ok": False, "stdout": stdout, "error": {"kind": kind, "message": message}, "traceback": "", "tables": [], "figures": [], "names": []}


def _child(code: str, chan: socket.socket, out_fd: int) -> None:
    L: lim.Limits = CFG["limits"]
    os.setpgid(0, 0)
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # an oversized write fails with an error instead of killing the run
    os.dup2(out_fd, 1)
    os.dup2(out_fd, 2)
    lim.apply_run_limits(L, 0)
    collector = capture.Collector(L.max_table_rows)
    capture.set_collector(collector)
    writer = capture.CappedWriter(1, L.max_output_bytes)
    saved = sys.stdout, sys.stderr
    sys.stdout = sys.stderr = writer
    capture.register_source(code)
    guard.arm(CFG["protected"])
    names_before = capture.user_names(NS)
    error = None
    try:
        exec(compile(code, capture.SCRIPT_NAME, "exec"), NS)
    except SystemExit as e:
        if e.code not in (None, 0):
            error = capture.format_error(e)
    except BaseException as e:  # noqa: BLE001 - everything the script raises is its result
        error = capture.format_error(e, f"limit {L.memory_mb} MiB")
    if error is None:  # a failed run's half-drawn figures would only mislead
        try:
            collector.show_open_mpl_figures()
        except BaseException as e:  # noqa: BLE001
            error = capture.format_error(e)
    capture.close_open_figures()
    sys.stdout, sys.stderr = saved
    capture.set_collector(None)
    try:
        frame = _result_frame(error, collector, out_fd, writer, L, names_before)
    except BaseException as e:  # noqa: BLE001 - e.g. MemoryError while encoding; the state stays as it was
        frame = encode({"ok": False, "stdout": "", "error": {"kind": capture.error_kind(e), "message": f"result could not be encoded: {type(e).__name__}: {e}"}, "traceback": "", "tables": [], "figures": [], "names": []})
    try:
        send_raw(chan, frame)
        verdict, _ = recv(chan)
    except (ChannelClosed, FrameTooLarge):
        os._exit(0)
    if not verdict.get("commit"):
        os._exit(0)
    chan.close()
    os.close(out_fd)
    lim.lift_cpu_limit()
    _kill_strays()
    gc.collect()
    gc.freeze()


def _result_frame(error: tuple[str, str, str] | None, collector: capture.Collector, out_fd: int,
                  writer: capture.CappedWriter, L: lim.Limits, names_before: list[str]) -> bytes:
    data = os.pread(out_fd, L.max_output_bytes + 1, 0)
    stdout = capture.finish_output(data, L.max_output_bytes, writer.cut)
    figures, blobs = capture.encode_figures(collector.figures)
    result = {
        "ok": error is None,
        "stdout": stdout,
        "error": {"kind": error[0], "message": error[1]} if error else None,
        "traceback": error[2] if error else "",
        "tables": collector.tables,
        "figures": figures,
        # A failed run is discarded: the names are those of the state that carries on.
        "names": capture.user_names(NS) if error is None else names_before,
        "state_pid": os.getpid(),
    }
    return encode(result, blobs)


if __name__ == "__main__":
    zygote_main(int(sys.argv[1]))
