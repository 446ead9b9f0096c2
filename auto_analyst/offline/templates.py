"""Canonical wordings with typed slots, shared by the printer and the strict parser of canonical text.

A :class:`Template` such as ``"Welch t-test of {y:col} by {x:col}[ for {groups:vals}] at alpha {alpha:num}"``
renders slot values into text and parses exactly that text back (``None`` for anything else), so the
two directions cannot drift apart. Slot kinds: ``col``/``name`` (a backticked column or new column),
``cols`` (columns joined by 'and'), ``val``/``vals`` (quoted text, numbers, true/false), ``num``,
``int``, ``measures`` ('mean of `x` and count of rows') and ``text`` (a phrase without backticks).
"""

from __future__ import annotations

import re
from typing import Any

from auto_analyst.offline.spec import FUNC_WORDS, Measure, quote_col, quote_val

__all__ = ["Template", "measure_text", "COL", "VAL", "MEASURE", "FUNC_TEXT", "cols_of", "measures_of", "value_of"]

COL = _COL = r"`[^`]+`"
VAL = _VAL = r"'(?:[^']*)'|-?\d+(?:\.\d+)?(?:e-?\d+)?|true|false"
_NUM = r"-?\d+(?:\.\d+)?(?:e-?\d+)?"
FUNC_TEXT = _FUNC_TEXT = {v: k for k, v in FUNC_WORDS.items()}
MEASURE = _MEASURE = r"count of rows|(?:" + "|".join(sorted(map(re.escape, _FUNC_TEXT), key=len, reverse=True)) + r") of " + _COL
SLOT_PATTERNS = {
    "col": _COL, "cols": rf"{_COL}(?: and {_COL})*", "val": _VAL, "vals": rf"(?:{_VAL})(?: and (?:{_VAL}))*",
    "num": _NUM, "int": r"\d+", "name": _COL, "measures": rf"(?:{_MEASURE})(?: and (?:{_MEASURE}))*",
    "text": r"[^`;]+?",
}
SLOT = re.compile(r"\{(\w+):(\w+)\}")


def _unval(s: str) -> Any:
    if s == "true":
        return True
    if s == "false":
        return False
    if s.startswith("'"):
        return s[1:-1].replace("’", "'")
    f = float(s)
    return int(f) if f.is_integer() and "." not in s and "e" not in s else f


def _cols(s: str) -> list[str]:
    return re.findall(r"`([^`]+)`", s)


def _measures(s: str) -> list[Measure]:
    out = []
    for m in re.finditer(_MEASURE, s):
        text = m.group(0)
        if text == "count of rows":
            out.append(Measure(func="count"))
        else:
            words, col = text.rsplit(" of `", 1)
            out.append(Measure(func=_FUNC_TEXT[words], column=col[:-1]))
    return out


CONVERT = {"col": lambda s: _cols(s)[0], "name": lambda s: _cols(s)[0], "cols": _cols,
           "val": _unval, "vals": lambda s: [_unval(v) for v in re.findall(_VAL, s)], "num": _unval,
           "int": int, "measures": _measures, "text": str}


def _show(kind: str, v: Any) -> str:
    if kind in ("col", "name"):
        return quote_col(v)
    if kind == "cols":
        return " and ".join(quote_col(c) for c in v)
    if kind == "val":
        return quote_val(v)
    if kind == "vals":
        return " and ".join(quote_val(x) for x in v)
    if kind == "num":
        return repr(v)
    if kind == "measures":
        return " and ".join(measure_text(m) for m in v)
    return str(v)


class Template:
    """A canonical wording with typed slots, e.g. ``"Welch t-test of {y:col} by {x:col}[ for {groups:vals}]"``.

    ``[...]`` is optional (rendered when its slots have values). :meth:`render` fills the slots,
    :meth:`parse` reads a text back into the slot values (None unless the whole text fits).
    """

    def __init__(self, pattern: str):
        self.pattern = pattern
        self.kinds = dict(SLOT.findall(pattern))

        def to_regex(chunk: str) -> str:
            out, pos = "", 0
            for m in SLOT.finditer(chunk):
                out += re.escape(chunk[pos:m.start()]) + f"(?P<{m.group(1)}>{SLOT_PATTERNS[m.group(2)]})"
                pos = m.end()
            return out + re.escape(chunk[pos:])

        regex = ""
        for part in re.finditer(r"\[([^\]]*)\]|([^\[]+)", pattern):
            regex += f"(?:{to_regex(part.group(1))})?" if part.group(1) is not None else to_regex(part.group(2))
        self.regex = re.compile(regex + r"\Z")

    def render(self, **values: Any) -> str:
        def fill(chunk: str) -> str:
            return SLOT.sub(lambda m: _show(m.group(2), values[m.group(1)]), chunk)

        out = ""
        for part in re.finditer(r"\[([^\]]*)\]|([^\[]+)", self.pattern):
            if part.group(1) is not None:
                names = [n for n, _ in SLOT.findall(part.group(1))]
                if all(values.get(n) not in (None, [], "") for n in names):
                    out += fill(part.group(1))
            else:
                out += fill(part.group(2))
        return out

    def parse(self, text: str) -> dict[str, Any] | None:
        m = self.regex.match(text)
        if not m:
            return None
        return {k: (CONVERT[self.kinds[k]](v) if v is not None else None) for k, v in m.groupdict().items()}


def measure_text(m: Measure) -> str:
    return "count of rows" if m.column is None else f"{FUNC_WORDS[m.func]} of {quote_col(m.column)}"




cols_of, measures_of, value_of = _cols, _measures, _unval
