"""Text from scripts made safe to print on a terminal: control characters and escape sequences become visible.

A script (and so a prompt injection through a question, a column name or a cell value) can print
bytes that a terminal obeys: ESC starts CSI sequences (clear the screen, move the cursor) and OSC
sequences (set the window title, OSC 8 links, OSC 52 clipboard writes), a lone CR overwrites the
line, and bidirectional overrides make text read differently from what it is (CVE-2021-42574,
"Trojan Source"). :func:`escape` shows each of them as a ``\\xNN``/``\\uNNNN`` escape instead, so
the sequence is printed, never obeyed. Newline and tab are kept. ``--json`` output needs none of
this beyond :func:`ascii_json`: JSON escapes C0 controls itself, and with ASCII output every other
character (C1 controls, bidi overrides) is written as ``\\uNNNN`` too, still valid JSON.
"""

from __future__ import annotations

import re
from typing import Any

__all__ = ["escape", "escape_result", "ascii_json"]

# C0 controls except \t and \n, DEL, C1 controls; bidi embeddings/overrides/isolates and marks;
# line/paragraph separators (some terminals break lines on them).
_UNSAFE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]")


def _show(m: re.Match) -> str:
    c = ord(m.group())
    return f"\\x{c:02x}" if c < 0x100 else f"\\u{c:04x}"


def escape(text: str) -> str:
    """``text`` with every control character and bidi override shown as an escape (``"\\x1b[2J"`` -> ``"\\\\x1b[2J"``).

    Example:
        >>> escape("ok\\x1b]0;pwned\\x07 done")
        'ok\\\\x1b]0;pwned\\\\x07 done'
    """
    return _UNSAFE.sub(_show, text) if isinstance(text, str) else text


def _walk(value: Any) -> Any:
    if isinstance(value, str):
        return escape(value)
    if isinstance(value, dict):
        return {_walk(k): _walk(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(_walk(v) for v in value)
    return value


def escape_result(result: Any) -> Any:
    """A copy of a pydantic result (e.g. :class:`~auto_analyst.results.Result`) with every string in it escaped."""
    return type(result).model_validate(_walk(result.model_dump()))


def ascii_json(text: str) -> str:
    """The same JSON document written in pure ASCII (every non-ASCII character as ``\\uNNNN``)."""
    import json

    return json.dumps(json.loads(text), ensure_ascii=True, separators=(",", ":"))
