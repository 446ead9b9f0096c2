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

from auto_analyst.execution import budget, capture, duckns, guard, preload, report, syscalls, tamper
from auto_analyst.execution import limits as lim
from auto_analyst.execution.protocol import ChannelClosed, FrameTooLarge, decode, encode, readable, recv, recv_raw, send, send_raw

# Made at import, before any script: sent when a script broke even the result's encoding.
_BROKEN_FRAME = encode({"ok": False, "stdout": "", "error": {"kind": "sandbox", "message": "the script broke the "
                        "worker's result encoding (json); the run was discarded"}, "traceback": "", "tables": [],
                        "figures": [], "names": [], "keep": False})
RESULT_KEYS = frozenset(("ok", "stdout", "error", "traceback", "tables", "figures", "names", "keep"))

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


def _output_file() -> int:
    """An unnamed file in the work folder for the run's output (no memfd: runs may not make those; not the
    temp tmpfs, which a script may have filled). It counts against the disk budget while it lives."""
    import tempfile

    try:
        return os.open(".", os.O_TMPFILE | os.O_RDWR, 0o600)
    except OSError:
        with tempfile.TemporaryFile() as fh:
            return os.dup(fh.fileno())


def _hide_caller_socket() -> None:
    """The script must not reach the caller's connection (it could forge results): park /dev/null on its
    descriptor number until this child is committed and handed the real one (:func:`_take_caller_socket`)."""
    fd = CFG.get("sock_fd")
    if fd is None:
        return
    null = os.open(os.devnull, os.O_RDWR)
    os.dup2(null, fd, inheritable=False)
    os.close(null)


def hand_over(chan: socket.socket, fd: int) -> None:
    """Pass descriptor ``fd`` over ``chan`` (the caller's connection, to the committed run child).

    Calls ``sendmsg`` itself (not ``socket.send_fds``), so that the audit hook, which trusts only the
    worker's own helpers as the caller of a socket send, lets it through in an armed state process.
    """
    import array

    chan.sendmsg([b"S"], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array("i", [fd]))])


def _take_caller_socket(chan: socket.socket) -> None:
    _, fds, _, _ = socket.recv_fds(chan, 1, 1)
    if not fds:
        raise ChannelClosed("no caller connection was handed over")
    os.dup2(fds[0], CFG["sock_fd"], inheritable=False)
    os.close(fds[0])


def _new_child() -> tuple[int, socket.socket, int]:
    """Fork a run child that waits for its code: (pid, channel, output file); pid 0 in the child."""
    out_fd = _output_file()
    parent_end, child_end = socket.socketpair()
    pid = fork()
    if pid == 0:
        parent_end.close()
        os.setpgid(0, 0)
        _hide_caller_socket()
        syscalls.install()
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
    try:
        msg, _ = recv(chan)
    except (ChannelClosed, FrameTooLarge):
        os._exit(0)
    if msg.get("op") != "go":
        os._exit(0)
    _child(msg["code"], chan, out_fd)  # returns only when this child became the state
    return True


def drop_standby() -> None:
    if STANDBY:
        kill_group(STANDBY["pid"])
        os.waitpid(STANDBY["pid"], 0)
        STANDBY["chan"].close()
        os.close(STANDBY["out_fd"])
        STANDBY.clear()


def run(sock: socket.socket, msg: dict[str, Any]) -> None:
    if preload.import_for(msg["code"]):
        drop_standby()  # forked before those imports
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
    work = CFG.get("cwd") or os.getcwd()  # "/proc/self/cwd" where the folder's own path is not reachable
    before = budget.snapshot(work)
    disk_limit = L.disk_mb * lim.MIB
    deadline = time.monotonic() + timeout
    next_disk = time.monotonic() + budget.CHECK_SECONDS
    reason = None
    frame = None
    status: int | None = None
    while reason is None:
        now = time.monotonic()
        left = deadline - now
        if left <= 0:
            reason = "timeout"
            break
        if disk_limit > 0 and now >= next_disk:
            next_disk = now + budget.CHECK_SECONDS
            if budget.usage(work, disk_limit) > disk_limit:
                reason = "disk"
                break
        ready = readable([chan, sock], min(left, budget.CHECK_SECONDS))
        if sock in ready:
            try:
                cmsg, _ = recv(sock, timeout=10)
            except (ChannelClosed, FrameTooLarge, ValueError):
                kill_group(pid)
                os._exit(0)
            op = cmsg.get("op") if isinstance(cmsg, dict) else None
            if op == "cancel":
                reason = "cancelled"
            elif op == "close":
                kill_group(pid)
                os._exit(0)
        if chan in ready and reason is None:
            try:
                frame = recv_raw(chan, timeout=max(1.0, deadline - time.monotonic()))
                header, _ = decode(frame[8:])
                if not isinstance(header, dict) or not RESULT_KEYS <= header.keys() or not isinstance(header["ok"], bool):
                    raise ValueError("not a result")
            except ChannelClosed:  # it died (the exit status says how), or the script closed the channel
                frame = None
                for _ in range(10):  # a dying child is reaped within a few ms; a live one closed its channel
                    done, st = os.waitpid(pid, os.WNOHANG)
                    if done:
                        status = st
                        break
                    time.sleep(0.02)
                else:
                    reason = "closed"
            except (FrameTooLarge, ValueError):
                frame, reason = None, "forged"
            break
    if frame is not None and disk_limit > 0 and budget.usage(work, disk_limit) > disk_limit:
        frame, reason = None, "disk"
    if frame is not None and header.get("ok") and header.get("keep", True):
        send_raw(sock, frame)
        send(chan, {"commit": True})
        hand_over(chan, sock.fileno())
        os._exit(0)  # the child is the session's state from now on
    kill_group(pid)
    if status is None:
        _, status = os.waitpid(pid, 0)
    if reason == "disk":
        budget.remove_new(work, before)
    if frame is not None:
        send_raw(sock, frame)
        return
    send(sock, _death_result(reason, status, out_fd, L, timeout))


def _death_result(reason: str | None, status: int, out_fd: int, L: lim.Limits, timeout: float) -> dict[str, Any]:
    data = os.pread(out_fd, L.max_output_bytes + 1, 0)
    stdout = report.finish_output(data, L.max_output_bytes, False)
    if reason == "timeout":
        kind, message = "timeout", f"TimeoutError: the script ran longer than {timeout:g} s and was stopped"
    elif reason == "disk":
        kind, message = "disk", (f"the script wrote more than the work folder's {L.disk_mb} MiB (run_disk_mb) and was "
                                 "stopped; the files it had made were removed")
    elif reason == "closed":
        kind, message = "sandbox", "the script closed the worker's result channel; the run was stopped"
    elif reason == "forged":
        kind, message = "sandbox", "the script wrote to the result channel; the run was stopped"
    elif reason == "cancelled":
        kind, message = "cancelled", "the run was cancelled"
    elif os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGXCPU:
        kind, message = "timeout", f"TimeoutError: the script used more than {L.cpu_seconds} s of CPU time and was stopped"
    elif os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGKILL:
        kind, message = "killed", "the script's process was killed (most likely out of memory)"
    elif os.WIFSIGNALED(status):
        kind, message = "killed", f"the script's process crashed ({signal.Signals(os.WTERMSIG(status)).name})"
    elif os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0:  # our own exit when its channel was broken
        kind, message = "sandbox", "the script closed or broke the worker's result channel; the run was stopped"
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
    libraries_before = tamper.snapshot()
    rss_before = lim.rss_bytes()
    error = None
    try:
        duckns.open_run(NS, L)  # con and a relation per DuckDB table, for this run only
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
    closed = duckns.close_run(NS)  # before this child may become the state: no DuckDB threads cross a fork
    replaced = tamper.changed(libraries_before)
    keep = error is None and closed and not replaced and _lean_enough(rss_before, L)
    try:
        frame = _result_frame(error, collector, out_fd, writer, L, names_before, keep, replaced)
    except BaseException as e:  # noqa: BLE001 - e.g. MemoryError while encoding; the state stays as it was
        err = {"kind": report.error_kind(e), "message": f"the result could not be encoded: {type(e).__name__}: {e}"}
        try:
            frame = encode({"ok": False, "stdout": "", "error": err, "traceback": "", "tables": [], "figures": [],
                            "names": [], "keep": False})
        except BaseException:  # noqa: BLE001 - the script broke the encoder itself
            frame = _BROKEN_FRAME
    try:
        send_raw(chan, frame)
        verdict, _ = recv(chan)
        if not verdict.get("commit"):
            os._exit(0)
        _take_caller_socket(chan)
    except (ChannelClosed, FrameTooLarge, ValueError, OSError):
        os._exit(0)
    chan.close()
    os.close(out_fd)
    lim.lift_cpu_limit()
    kill_strays()


def _lean_enough(rss_before: int, L: lim.Limits) -> bool:
    """Whether this child may become the session's state: its resident memory grew by at most
    ``keep_memory_mb`` over the run (after a gc and giving freed heap back to the system)."""
    if L.keep_memory_mb <= 0 or not rss_before:
        return True
    limit = rss_before + L.keep_memory_mb * lim.MIB
    if lim.rss_bytes() <= limit:
        return True
    import gc

    gc.collect()
    lim.trim_heap()
    return lim.rss_bytes() <= limit


def _result_frame(error: tuple[str, str, str] | None, collector: capture.Collector, out_fd: int,
                  writer: report.CappedWriter, L: lim.Limits, names_before: list[str], keep: bool = True,
                  replaced: list[str] | None = None) -> bytes:
    data = os.pread(out_fd, L.max_output_bytes + 1, 0)
    stdout = report.finish_output(data, L.max_output_bytes, writer.cut) + collector.notes()
    if error is None and replaced:
        stdout += (f"[the variables this run made were not kept: it replaced {', '.join(replaced)}, which later runs "
                   "would call; the session goes on from the state before it]\n")
    elif error is None and not keep:
        stdout += (f"[the variables this run made were not kept: the session's worker would have held more than "
                   f"{L.keep_memory_mb} MiB (run_keep_memory_mb) above its size before the run; the session goes on "
                   "from the state before it]\n")
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
        "names": report.user_names(NS) if error is None and keep else names_before,
        "state_pid": os.getpid(),
        "keep": keep,
    }
    return encode(result, blobs)
