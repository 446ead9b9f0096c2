"""The child side: zygote, session state processes and run children (``python -m auto_analyst.execution.child FD``).

Process tree (all started from a clean environment, in their own network namespace; the zygote
keeps only the capabilities it needs to give sessions their own uid, the others have none):

* **zygote** – started once per caller process; imports pandas, numpy and pyarrow, reports ready,
  then imports scipy, statsmodels, sklearn, plotly and matplotlib (≈2 s) between spawn requests
  (:mod:`.preload`) and otherwise only forks. It is a child subreaper, so the
  state processes that outlive their parent are reaped here.
* **state process** – one per session, forked from the zygote. When the caller is root it first
  takes its own mount namespace and the session's own uid (:mod:`.privdrop`). It holds the
  session's namespace (tables, received as Parquet bytes from the caller, and the variables
  scripts created) and never runs generated code itself.
* **run child** – forked from the state process for each script (see :mod:`.run`), in its own
  process group, with rlimits applied and the audit hook armed. If the script succeeds, the run
  child becomes the session's new state process and the old one exits; if it fails, times out
  or is killed, the child's whole group is killed and the old state carries on unchanged.

Fork is copy-on-write, so a run costs a fork (≈15 ms), not an interpreter start (≈1-1.5 s);
and the state process forks the next run's child ahead of time, when it has been idle for
50 ms, so that even the fork is off the run's path.
"""

from __future__ import annotations

import gc
import io
import keyword
import os
import signal
import socket
import sys
import time
from typing import Any

from auto_analyst.execution import budget, capture, duckns, guard, landwall, preload, privdrop, report, sessionns, wall
from auto_analyst.execution import limits as lim
from auto_analyst.execution import run as run_module
from auto_analyst.execution.protocol import ChannelClosed, FrameTooLarge, readable, recv, send
from auto_analyst.execution.run import CFG, NS, drop_standby, fork, hand_over, kill_group, kill_strays, prefork, run

_PR_SET_CHILD_SUBREAPER = 36
_RESERVED = {"pd", "np", "show", "df", "tables"}
_IDLE_SECONDS = 0.05  # quiet time before the state process does its housekeeping


# --- zygote ----------------------------------------------------------------------------------

def zygote_main(ctrl_fd: int, mode: str = "", lean: bool = False) -> None:
    """Serve ``spawn`` requests on the control socket until the caller closes it.

    ``mode`` is ``walled-root``/``walled-user`` inside bubblewrap (see :mod:`.wall`), ``guarded`` for the
    namespace-free tier (:mod:`.tiers`: each session walled by Landlock as it is forked), empty otherwise.
    ``lean``: import only :data:`.preload.CORE`, never the later libraries (see :class:`.zygote.Zygote`).
    """
    ctrl = socket.socket(fileno=ctrl_fd)
    t0 = time.monotonic()
    walled = mode.startswith("walled")
    CFG["guarded"] = mode == "guarded"
    info = lim.isolate_current_process(walled, userns=mode == "walled-user")
    preload.import_core()
    from auto_analyst.execution import syscalls

    info["seccomp"] = syscalls.available()[0]  # finds and loads libseccomp now, while processes may still start
    capture.install_display_patches()
    preload.install_patch_hook(capture.install_display_patches)
    background = preload.Background(after=capture.install_display_patches, lean=lean)
    guard.install()
    guard.trust((fork, kill_group, kill_strays, lim.lift_cpu_limit, hand_over),
                (sys.modules[__name__], run_module, lim, guard, budget))
    read_paths = privdrop.python_paths()
    if CFG["guarded"]:
        info["landlock_abi"] = landwall.abi()
        mpl = os.environ.get("MPLCONFIGDIR", "")  # the zygote's font cache: read, never written, by sessions
        CFG["landlock"] = ([*wall.read_only_paths(), *([mpl] if mpl else [])],
                           sorted({os.path.realpath(p) for p in sys.path if p and os.path.isdir(p)}))
    try:
        lim._get_libc().prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
    except (OSError, AttributeError):
        pass
    gc.collect()
    gc.freeze()  # forked children then never touch (and copy) the preloaded objects' pages in a gc pass
    send(ctrl, {"op": "ready", "pid": os.getpid(), "preload_seconds": round(time.monotonic() - t0, 3), **info})
    while True:
        # Until the background imports are done, poll without waiting: one module between requests.
        ready = readable([ctrl], 1.0 if background.done else 0.0)
        _reap()
        if not ready and not background.done:
            background.step()
        if not ready:
            continue
        try:
            msg, _ = recv(ctrl)
        except (ChannelClosed, FrameTooLarge):
            break
        if msg.get("op") != "spawn":
            continue
        workdir_fd, duck_fd = -1, -1
        if msg.get("fd"):
            try:
                _, fds, _, _ = socket.recv_fds(ctrl, 1, 2)
            except OSError:
                break
            if not fds:
                continue
            workdir_fd = fds[0]
            duck_fd = fds[1] if len(fds) > 1 and msg.get("duck") else -1
        if not _spawn(ctrl, msg, workdir_fd, walled, read_paths, duck_fd):
            break
    os._exit(0)


def _spawn(ctrl: socket.socket, msg: dict[str, Any], workdir_fd: int, walled: bool, read_paths: list[str],
           duck_fd: int = -1) -> bool:
    """Start one session (see :meth:`Zygote.spawn`); False when the caller is gone."""
    parent_end, child_end = socket.socketpair()
    r, w = os.pipe()
    uid = int(msg.get("uid") or 0)
    pid = fork()
    if pid == 0:
        ctrl.close()
        os.close(r)
        parent_end.close()
        try:
            if walled:
                if workdir_fd < 0:
                    raise OSError("no work folder was sent")
                duck = (str(msg["duck"]), duck_fd) if duck_fd >= 0 else None
                sessionns.enter(str(msg["workdir"]), workdir_fd, int(msg.get("tmp_mb") or 256), duck)
                if duck_fd >= 0:
                    os.close(duck_fd)
                init = fork()
                if init == 0:
                    os.close(w)
                    os.close(workdir_fd)
                    sessionns.become_init(uid)
                    CFG["walled"] = True
                    _init_main(child_end)
                os.write(w, str(init).encode())
            else:
                ruleset = -1
                if CFG.get("guarded"):  # the namespace-free tier: built while privileged, applied after the uid drop
                    if workdir_fd < 0:
                        raise OSError("no work folder was sent")
                    ruleset = landwall.ruleset(workdir_fd, *CFG["landlock"], duck_fd)
                if uid:  # the DuckDB folder is made reachable at its own path, like the libraries
                    extra = [str(msg["duck"])] if duck_fd >= 0 else []
                    privdrop.enter_session(uid, workdir_fd, str(msg["workdir"]), read_paths + extra)
                elif workdir_fd >= 0:
                    os.close(workdir_fd)
                if ruleset >= 0:
                    landwall.restrict(ruleset)
                if duck_fd >= 0:
                    os.close(duck_fd)
                os.write(w, str(os.getpid()).encode())
                os.close(w)
                _state_main(child_end)
        except BaseException as e:  # noqa: BLE001 - never serve a session that kept privileges or the host's view
            try:
                os.write(w, f"E{type(e).__name__}: {e}".encode()[:500])
            except OSError:
                pass
            print(f"session worker failed to start: {type(e).__name__}: {e}", file=sys.stderr, flush=True)
        finally:
            os._exit(0)
    os.close(w)
    for fd in (workdir_fd, duck_fd):
        if fd >= 0:
            os.close(fd)
    child_end.close()
    got = b""
    if readable_fd(r, 30.0):
        got = os.read(r, 600)
    os.close(r)
    fds = [parent_end.fileno()]
    reply: dict[str, Any] = {"op": "spawned", "ok": True}
    pidfd = -1
    if got[:1].isdigit():
        target = int(got)
        reply["pid"] = 0 if walled else target
        if walled:  # the session's init, which outlives every state process of the session
            try:
                pidfd = os.pidfd_open(target)
                fds.append(pidfd)
            except OSError:
                pass
    else:
        reply = {"op": "spawned", "ok": False, "error": got[1:].decode(errors="replace") or "the session process died"}
    try:
        send(ctrl, reply)
        socket.send_fds(ctrl, [b"F"], fds)
    except (ChannelClosed, OSError):
        return False
    finally:
        parent_end.close()
        if pidfd >= 0:
            os.close(pidfd)
    return True


def readable_fd(fd: int, timeout: float) -> bool:
    import select

    poller = select.poll()
    poller.register(fd, select.POLLIN | select.POLLHUP)
    return bool(poller.poll(timeout * 1000))


def _init_main(child_end: socket.socket) -> None:
    """PID 1 of a session's PID namespace: start the state process, reap until none is left, then end (the
    kernel then kills anything a script left in the namespace)."""
    pid = fork()
    if pid == 0:
        _state_main(child_end)
        os._exit(0)
    child_end.close()
    while True:
        try:
            os.wait()
        except ChildProcessError:
            break
        except InterruptedError:
            continue
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
    CFG["sock_fd"] = sock.fileno()
    NS.clear()
    NS.update(capture.new_namespace())
    idle_work = True
    while True:
        # Housekeeping (gc of the last run's leftovers, forking the next run's child) waits for a
        # quiet moment, so a request that is already queued is served first.
        if idle_work and not readable([sock], _IDLE_SECONDS):
            idle_work = False
            gc.collect()
            gc.freeze()
            if prefork():
                idle_work = True  # this is the standby child, now the committed state
                continue
        try:
            msg, blobs = recv(sock)
        except (ChannelClosed, FrameTooLarge):
            break
        op = msg.get("op")
        if op == "close":
            break
        if op == "cancel":  # arrived after its run had already finished
            continue
        idle_work = True
        try:
            if op == "run":
                run(sock, msg)  # returns in the committed child too, which then serves as the state
                continue
            if op in ("init", "load", "active"):
                drop_standby()  # it was forked from the state before this change
            reply = _handle(op, msg, blobs)
        except Exception as e:  # noqa: BLE001 - report, keep serving
            reply = {"ok": False, "error": {"kind": type(e).__name__, "message": f"{type(e).__name__}: {e}"}}
        try:
            send(sock, reply)
        except ChannelClosed:
            break
    drop_standby()


def _handle(op: str | None, msg: dict[str, Any], blobs: list[bytes]) -> dict[str, Any]:
    if op == "init":
        import tempfile

        if CFG.get("walled"):
            cwd, tmp = sessionns.SESSION_DIR, "/tmp"
            os.environ["MPLCONFIGDIR"] = "/tmp/matplotlib"
        else:
            # Temporary files stay in the session's own folder, which outlives any zygote restart.
            cwd = tmp = msg["cwd"]
            try:
                os.chdir(cwd)
            except PermissionError:
                # A uid of its own without a mount namespace (a container): the folder's parents are not the
                # session's to traverse; it is already the cwd (privdrop.enter_session), reached as its owner.
                cwd = tmp = "/proc/self/cwd"
        CFG["cwd"] = cwd
        os.chdir(cwd)
        os.environ["HOME"], os.environ["TMPDIR"] = cwd, tmp
        tempfile.tempdir = tmp
        CFG["limits"] = lim.Limits(**msg["limits"])
        return {"ok": True, "pid": os.getpid()}
    if op == "load":
        return _load(msg["tables"], msg["active"], msg.get("protect") or [], blobs)
    if op == "active":
        tables = NS.get("tables")
        if not isinstance(tables, dict) or msg["name"] not in tables:
            return {"ok": False, "error": {"kind": "KeyError", "message": f"KeyError: no table named {msg['name']!r}"}}
        NS["df"] = tables[msg["name"]]
        return {"ok": True}
    if op == "vars":
        return {"ok": True, "variables": {k: report.describe_value(NS[k]) for k in report.user_names(NS)}}
    return {"ok": False, "error": {"kind": "protocol", "message": f"unknown operation {op!r}"}}


def _load(tables: dict[str, Any], active: str, protect: list[str], blobs: list[bytes]) -> dict[str, Any]:
    """Build the session's tables from Parquet bytes sent by the caller.

    The worker never opens the data files (its uid may not read them): ``tables`` maps each name to
    ``{"key": ..., "blob": index or None}``; a table without a blob is one the caller already sent
    to this state process unchanged, and keeps its in-session object (a script may have cleaned it
    in place). A DuckDB table comes as ``{"key": ..., "duckdb": its database file as this worker sees
    it}`` and is a placeholder here, a relation in each run (:mod:`.duckns`).
    """
    import pandas as pd

    current = NS.get("tables") if isinstance(NS.get("tables"), dict) else {}
    for name, spec in tables.items():
        idx = spec.get("blob")
        if spec.get("duckdb"):
            frame = duckns.table(name, str(spec["duckdb"]))
        elif idx is None:
            if name not in current:
                raise KeyError(f"table {name!r} was not sent")
            continue
        else:  # fewer Arrow threads in the state process, which forks every run
            frame = pd.read_parquet(io.BytesIO(blobs[int(idx)]), use_threads=False)
        current[name] = frame
        CFG["loaded"][name] = spec.get("key")
        if name.isidentifier() and not keyword.iskeyword(name) and name not in _RESERVED:
            NS[name] = frame
    NS["tables"] = current
    if active not in current:
        raise KeyError(f"no table named {active!r}")
    NS["df"] = current[active]
    CFG["protected"] = sorted(set(CFG["protected"]) | {os.path.realpath(p) for p in protect})
    if guard.is_armed():
        guard.arm(CFG["protected"])
    return {"ok": True, "names": report.user_names(NS)}


if __name__ == "__main__":
    zygote_main(int(sys.argv[1]), sys.argv[2] if len(sys.argv) > 2 else "", sys.argv[3:4] == ["lean"])
