"""Ctrl-C in ``auto-analyst chat`` on a real terminal (a pty): it cancels the running question, not the chat.

The chat runs in a child process whose controlling terminal is a pty; the test types into the pty's master
side, so ``\\x03`` reaches the chat as SIGINT through the terminal's line discipline, as a user's Ctrl-C does.
The slow question runs a real script (``time.sleep``) in the real sandbox, through ``Session.run_code``.
"""

from __future__ import annotations

import fcntl
import json
import os
import select as select_module
import subprocess
import sys
import termios
import time
from pathlib import Path

import pytest

from auto_analyst.memory.users.history import History

CHILD = r"""
import sys
from auto_analyst.session import Session

SLOW = "import time\nprint('never printed')\ntime.sleep(120)\nresult = 1"
FAST = "result = int(df['x'].sum())\nprint('sum is', result)"

def ask(self, question, on_progress=None, cancel=None, asked_at=None):
    sys.stderr.write("SCRIPT STARTS\n"); sys.stderr.flush()
    return self.run_code(SLOW if question == "slow" else FAST, question=question, cancel=cancel)

Session.ask = ask
from auto_analyst.cli import main
main(["chat", sys.argv[1]])
"""

REPO = Path(__file__).resolve().parents[1]


def _controlling_tty():  # in the child, before exec: a new session whose controlling terminal is the pty
    os.setsid()
    fcntl.ioctl(0, termios.TIOCSCTTY, 0)


class Terminal:
    def __init__(self, argv: list[str], env: dict[str, str]):
        self.master, slave = os.openpty()
        self.proc = subprocess.Popen(argv, stdin=slave, stdout=slave, stderr=slave, env=env,
                                     preexec_fn=_controlling_tty, close_fds=True)
        os.close(slave)
        self.seen = b""

    def expect(self, text: str, timeout: float = 120.0) -> float:
        """Wait until ``text`` appears after what was already matched; returns the seconds it took."""
        t0 = time.monotonic()
        while text.encode() not in self.seen:
            left = t0 + timeout - time.monotonic()
            if left <= 0 or self.proc.poll() is not None and not self._readable(0):
                raise AssertionError(f"{text!r} did not appear; the terminal showed:\n{self.seen.decode(errors='replace')}")
            if self._readable(min(left, 0.5)):
                try:
                    self.seen += os.read(self.master, 4096)
                except OSError:  # the child closed the terminal
                    pass
        self.seen = self.seen[self.seen.index(text.encode()) + len(text):]
        return time.monotonic() - t0

    def wait(self, timeout: float) -> int:
        """The child's exit code, reading what it shows meanwhile (a full pty would block its writes)."""
        deadline = time.monotonic() + timeout
        while self.proc.poll() is None:
            if time.monotonic() > deadline:
                raise AssertionError(f"the chat did not end within {timeout:.0f} s; the terminal showed:\n"
                                     f"{self.seen.decode(errors='replace')}")
            if self._readable(0.2):
                try:
                    self.seen += os.read(self.master, 4096)
                except OSError:
                    pass
        return self.proc.returncode

    def _readable(self, timeout: float) -> bool:
        # poll, not select: after a long suite this process's descriptors can be numbered past select's 1024
        poller = select_module.poll()
        poller.register(self.master, select_module.POLLIN)
        return bool(poller.poll(timeout * 1000))

    def type(self, text: str) -> None:
        os.write(self.master, text.encode())

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        os.close(self.master)


@pytest.fixture
def terminal(tmp_path):
    data = tmp_path / "t.csv"
    data.write_text("x\n1\n2\n3\n")
    env = dict(os.environ, AUTO_ANALYST_HOME=str(tmp_path / "home"), AUTO_ANALYST_USER="pty",
               PYTHONPATH=os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH", "")])),
               TERM="dumb")
    term = Terminal([sys.executable, "-c", CHILD, str(data)], env)
    yield term, tmp_path
    term.close()


# Ctrl-C is typed the moment the prompt appears, the window where input() used to lose it (test_cli_prompt.py)
def test_ctrl_c_cancels_the_running_question_and_keeps_the_chat(terminal):
    term, tmp_path = terminal
    term.expect("you> ")
    term.type("slow\n")
    term.expect("SCRIPT STARTS")
    time.sleep(1.5)  # the script is sleeping in the sandbox now
    term.type("\x03")
    took = term.expect("Cancelled: the question was stopped", timeout=90)
    assert took < 60  # the 120 s script was killed, not waited for (a few seconds on a quiet machine)
    term.expect("you> ")  # back at the prompt, same process
    assert term.proc.poll() is None
    term.type("fast\n")
    term.expect("sum is 6")  # the session (its table, its worker) goes on
    term.expect("you> ")
    term.type("\x03")  # Ctrl-C at an idle prompt ends the chat, cleanly
    assert term.wait(timeout=120) == 0
    assert b"Aborted" not in term.seen and b"Traceback" not in term.seen

    turns = {t.question: json.loads(t.result_json) for t in History(path=tmp_path / "home" / "history.sqlite3").turns("pty")}
    assert turns["slow"]["status"] == "error" and turns["slow"]["error"]["kind"] == "cancelled"  # recorded as cancelled
    assert turns["fast"]["status"] == "ok"
    slow_id = next(t.id for t in History(path=tmp_path / "home" / "history.sqlite3").turns("pty") if t.question == "slow")
    shown = subprocess.run([sys.executable, "-m", "auto_analyst.cli", "history", "show", str(slow_id)], capture_output=True,
                           text=True, timeout=120, env=dict(os.environ, AUTO_ANALYST_HOME=str(tmp_path / "home"),
                                                            AUTO_ANALYST_USER="pty", PYTHONPATH=str(REPO)))
    assert "cancelled" in shown.stdout.split("Answer:")[1].split("Code:")[0], shown.stdout + shown.stderr  # how it ended
