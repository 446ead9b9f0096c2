"""The chat's prompt sees a Ctrl-C that the main thread's read did not (auto_analyst/cli/prompt.py).

CPython runs a C-level signal handler in whichever thread the kernel chose; when that is not the main thread blocked
in ``read`` (or the signal comes just before the read starts), ``input()`` stays blocked until Enter. Here the
signal is raised by another thread, which makes that case deterministic.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]

CHILD = r"""
import os, pty, signal, sys, threading, time
master, slave = pty.openpty()
os.dup2(slave, 0)
os.dup2(slave, 1)
sys.stdin = open(0, "r", closefd=False)

def trip():
    time.sleep(0.3)
    signal.raise_signal(signal.SIGINT)  # handled in this thread: the main thread's wait is not interrupted

threading.Thread(target=trip, daemon=True).start()
t0 = time.monotonic()
try:
    READ("you> ")
except KeyboardInterrupt:
    sys.stderr.write("interrupted %.2f\n" % (time.monotonic() - t0))
"""


def _run(read: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH", "")])))
    code = f"{read}\n" + CHILD.replace("READ", "read")
    return subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=60)


def test_ctrl_c_handled_off_the_main_thread_ends_the_prompt():
    done = _run("from auto_analyst.cli.prompt import read_line as read")
    assert done.returncode == 0, done.stderr
    assert "interrupted" in done.stderr
    took = float(done.stderr.split("interrupted")[1].split()[0])
    assert 0.3 <= took < 5  # raised at the next poll (0.2 s), not at the next Enter


def test_a_typed_line_is_returned_with_its_newline():
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH", "")])))
    code = "from auto_analyst.cli.prompt import read_line; import sys; print(repr(read_line('you> ')), repr(read_line('you> ')))"
    done = subprocess.run([sys.executable, "-c", code], env=env, input="first line\n", capture_output=True,
                          text=True, timeout=60)
    assert done.stdout.strip() == "'first line\\n' ''"  # the line, then end of input
    assert done.stderr == "you> you> "


def test_ctrl_c_before_the_question_runs_says_stopped_and_exits_130(monkeypatch, tmp_path):
    from click.testing import CliRunner

    from auto_analyst.cli import cli

    ask_module = sys.modules["auto_analyst.cli.ask"]  # the package's `ask` attribute is the command

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt  # as while the table or the model loads

    monkeypatch.setattr(ask_module, "_open_session", interrupted)
    monkeypatch.setenv("AUTO_ANALYST_HOME", str(tmp_path))
    table = tmp_path / "t.csv"
    table.write_text("x\n1\n")
    result = CliRunner().invoke(cli, ["ask", str(table), "What is the sum of x?"])
    assert result.exit_code == 130
    assert "Stopped (Ctrl-C)." in result.output and "Aborted" not in result.output


def test_history_show_says_how_a_turn_without_an_answer_ended():
    from auto_analyst.cli.history import _no_answer

    stored = '{"status": "error", "error": {"kind": "cancelled", "message": "Cancelled."}}'
    assert _no_answer(stored) == "- (cancelled: Cancelled.)"
    assert _no_answer('{"status": "ok"}') == "-" and _no_answer(None) == "-" and _no_answer("not json") == "-"
