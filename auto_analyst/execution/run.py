"""One run: the pre-forked or freshly forked child that runs a script, and its supervision by the state process.

The child sets its own process group and rlimits, arms the audit hook and runs the script in
the session namespace ``NS`` it inherited by fork. The state process waits for its result
frame, enforcing the wall-clock timeout and cancel requests by killing the child's whole
process group. A successful child becomes the session's state process (the old one exits after
relaying the result); any other outcome kills it and the old state serves on, unchanged.
"""

from __future__ import annotations

import os
import signal
import socket
import sys
import time
from typing import Any

from auto_analyst.execution import capture, guard, report
from auto_analyst.execution import limits as lim
from auto_analyst.execution.protocol import ChannelClosed, FrameTooLarge, decode, encode, readable, recv, recv_raw, send, send_raw

# The session state lives in module globals so that it survives fork unchanged.
NS: dict[str, Any] = {}
STANDBY: dict[str, Any] = {}  # the pre-forked child of the next run: pid, chan, out_fd
CFG: dict[str, Any] = {"limits": lim.Limits(), "protected": [], "loaded": {}}


# --- helpers the audit hook trusts (the worker's own process management) -------------------

def fork() -> int:
    return os.fork()


def kill_group(pid: int) -> None:
    """SIGKILL ``pid``'s process group and ``pid``. A gone or foreign (EPERM) process is fine; the audit
    hook's refusal (a PermissionError without errno: a script called this) is not swallowed."""
    for kill in (os.killpg, os.kill):  # the child may not have its own group yet
        try:
            kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        except PermissionError as e:
            if e.errno is None:
                raise


def kill_strays() -> None:
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


def _new_child() -> tuple[int, socket.socket, int]:
    """Fork a run child that waits for its code: (pid, channel, output memfd); pid 0 in the child."""
    out_fd = os.memfd_create("aa-run-output", 0)
    parent_end, child_end = socket.socketpair()
    pid = fork()
    if pid == 0:
        parent_end.close()
        os.setpgid(0, 0)
        return 0, child_end, out_fd
    try:
        os.setpgid(pid, pid)  # also set here, so a kill right after fork reaches the group
    except OSError:
        pass
    child_end.close()
    return pid, parent_end, out_fd


def prefork() -> bool:
    """Fork the next run's child ahead of time (the fork is then off the run's critical path).

    Returns True in that child once it has run a script successfully and become the state.
    """
    if STANDBY:
        return False
    pid, chan, out_fd = _new_child()
    if pid:
        STANDBY.update(pid=pid, chan=chan, out_fd=out_fd)
        return False
    _warm_up()
    try:
        msg, _ = recv(chan)
    except (ChannelClosed, FrameTooLarge):
        os._exit(0)
    if msg.get("op") != "go":
        os._exit(0)
    _child(msg["code"], chan, out_fd)  # returns only when this child became the state
    return True


def _warm_up() -> None:
    """Walk the common library paths once in the waiting child (its own namespace, no output).

    After fork every page is shared with the state process, and the first write to one (even a
    reference count) copies it: plotly alone costs ~4k such faults, 20-40 ms, per run. Taking
    them here, while the session is idle, keeps them off the run.
    """
    try:
        import pandas as pd
        import plotly.express as px

        d = pd.DataFrame({"x": [1.0, 2.0, 3.0], "y": [3.0, 4.0, 5.0], "c": ["a", "b", "a"]})
        d.groupby("c").agg(total=("x", "sum"), mean=("y", "mean"))
        px.scatter(d, x="x", y="y", color="c", title="t").to_json()
    except Exception:  # noqa: BLE001 - only a speed-up
        pass


def drop_standby() -> None:
    if STANDBY:
        kill_group(STANDBY["pid"])
        os.waitpid(STANDBY["pid"], 0)
        STANDBY["chan"].close()
        os.close(STANDBY["out_fd"])
        STANDBY.clear()


def run(sock: socket.socket, msg: dict[str, Any]) -> None:
    if STANDBY:
        pid, chan, out_fd = STANDBY["pid"], STANDBY["chan"], STANDBY["out_fd"]
        STANDBY.clear()
        try:
            send(chan, {"op": "go", "code": msg["code"]})
        except ChannelClosed:
            pass  # it died; _supervise reports how
    else:
        pid, chan, out_fd = _new_child()
        if pid == 0:
            _child(msg["code"], chan, out_fd)  # returns only when this child became the state
            return
    try:
        _supervise(sock, pid, chan, out_fd, float(msg.get("timeout") or CFG["limits"].timeout))
    finally:
        chan.close()
        os.close(out_fd)


def _supervise(sock: socket.socket, pid: int, chan: socket.socket, out_fd: int, timeout: float) -> None:
    try:
        _supervise_run(sock, pid, chan, out_fd, timeout)
    except ChannelClosed:  # the caller is gone: nobody wants this run, nor this session
        kill_group(pid)
        os._exit(0)


def _supervise_run(sock: socket.socket, pid: int, chan: socket.socket, out_fd: int, timeout: float) -> None:
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
        ready = readable([chan, sock], min(left, 0.5))
        if sock in ready:
            try:
                cmsg, _ = recv(sock, timeout=10)
            except (ChannelClosed, FrameTooLarge):
                kill_group(pid)
                os._exit(0)
            if cmsg.get("op") == "cancel":
                reason = "cancelled"
            elif cmsg.get("op") == "close":
                kill_group(pid)
                os._exit(0)
        if chan in ready and reason is None:
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
    kill_group(pid)
    _, status = os.waitpid(pid, 0)
    if frame is not None:
        send_raw(sock, frame)
        return
    send(sock, _death_result(reason, status, out_fd, L, timeout))


def _death_result(reason: str | None, status: int, out_fd: int, L: lim.Limits, timeout: float) -> dict[str, Any]:
    data = os.pread(out_fd, L.max_output_bytes + 1, 0)
    stdout = report.finish_output(data, L.max_output_bytes, False)
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
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # an oversized write fails with an error instead of killing the run
    os.dup2(out_fd, 1)
    os.dup2(out_fd, 2)
    lim.apply_run_limits(L, 0)
    collector = capture.Collector(L.max_table_rows)
    capture.set_collector(collector)
    writer = report.CappedWriter(1, L.max_output_bytes)
    saved = sys.stdout, sys.stderr
    sys.stdout = sys.stderr = writer
    report.register_source(code)
    guard.arm(CFG["protected"])
    names_before = report.user_names(NS)
    error = None
    try:
        exec(compile(code, report.SCRIPT_NAME, "exec"), NS)
    except SystemExit as e:
        if e.code not in (None, 0):
            error = report.format_error(e)
    except BaseException as e:  # noqa: BLE001 - everything the script raises is its result
        error = report.format_error(e, f"limit {L.memory_mb} MiB")
    if error is None:  # a failed run's half-drawn figures would only mislead
        try:
            collector.show_open_mpl_figures()
        except BaseException as e:  # noqa: BLE001
            error = report.format_error(e)
    capture.close_open_figures()
    sys.stdout, sys.stderr = saved
    capture.set_collector(None)
    try:
        frame = _result_frame(error, collector, out_fd, writer, L, names_before)
    except BaseException as e:  # noqa: BLE001 - e.g. MemoryError while encoding; the state stays as it was
        err = {"kind": report.error_kind(e), "message": f"the result could not be encoded: {type(e).__name__}: {e}"}
        frame = encode({"ok": False, "stdout": "", "error": err, "traceback": "", "tables": [], "figures": [], "names": []})
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
    kill_strays()


def _result_frame(error: tuple[str, str, str] | None, collector: capture.Collector, out_fd: int,
                  writer: report.CappedWriter, L: lim.Limits, names_before: list[str]) -> bytes:
    data = os.pread(out_fd, L.max_output_bytes + 1, 0)
    stdout = report.finish_output(data, L.max_output_bytes, writer.cut) + collector.notes()
    figures, blobs = capture.encode_figures(collector.figures)
    result = {
        "ok": error is None,
        "stdout": stdout,
        "error": {"kind": error[0], "message": error[1]} if error else None,
        "traceback": error[2] if error else "",
        "tables": collector.tables,
        "warnings": collector.warnings,
        "figures": figures,
        # A failed run is discarded: the names are those of the state that carries on.
        "names": report.user_names(NS) if error is None else names_before,
        "state_pid": os.getpid(),
    }
    return encode(result, blobs)
