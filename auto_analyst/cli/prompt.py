"""The chat's prompt on a terminal: a line read so that Ctrl-C at the prompt is never lost.

``input()`` blocks in ``read(2)`` and sees Ctrl-C only when the kernel interrupts that very call. CPython's
signal handler runs at C level in whichever thread the kernel picked, and only sets a flag for the main thread; a
SIGINT that arrives just before ``read`` starts (the user presses Ctrl-C as the prompt appears), or that is handled
by another thread, leaves ``input()`` blocked until Enter: the terminal shows ``^C`` and the chat goes on.
Waiting with ``select`` and a short timeout returns to the interpreter a few times a second, where the pending
``KeyboardInterrupt`` is raised.
"""

from __future__ import annotations

import select
import sys
from typing import TextIO

__all__ = ["read_line"]

#: Longest time a Ctrl-C already received can stay unhandled at the prompt, in seconds.
POLL_S = 0.2


def read_line(prompt: str, stdin: TextIO | None = None, stderr: TextIO | None = None) -> str:
    """Show ``prompt`` and return the next line typed, newline included (``""`` at end of input), like ``input``.

    The terminal's own line editing (canonical mode) is kept: a line becomes readable when Enter is pressed, and
    a read then returns that one line. The prompt goes to standard error, as ``input()`` writes it on a terminal.

    Raises:
        KeyboardInterrupt: Ctrl-C at the prompt, at most ``POLL_S`` seconds after it was received.
    """
    stdin = stdin or sys.stdin
    stderr = stderr or sys.stderr
    stderr.write(prompt)
    stderr.flush()
    while not select.select([stdin], [], [], POLL_S)[0]:
        pass  # a bytecode boundary: a SIGINT received meanwhile raises KeyboardInterrupt here
    return stdin.readline()
