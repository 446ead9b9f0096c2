"""What the model reads of a run: the tables and values a script showed, as JSON with their significant digits.

A value reaches the answer writer as the script showed it, never cut to fixed decimals: a p-value of
8.8e-22 stays ``8.8e-22`` (fixed decimals would make it ``0.0``, and the answer could only say 0), a
mean the script rounded to two decimals stays ``12345678.91``. Only the binary noise of floats is
dropped (``0.1 + 0.2`` is read as ``0.3``, not ``0.30000000000000004``): :data:`DIGITS` significant
digits are kept, more than any rounding a question asks for and fewer than the 15-17 where
that noise starts. Python's ``g`` format switches to scientific notation for magnitudes below 1e-4 or
of :data:`DIGITS` digits and more. An integral float carries no such noise and is kept whole: a 16-digit identifier
in a float column (a group's key, 1234567890123456.0) or a large total stays every digit, never 1234567890120000,
which would show two distinct keys as one.

Example:
    >>> significant(0.1 + 0.2), significant(8.8e-22), significant(12345678.91), significant(1234567890123456.0)
    (0.3, 8.8e-22, 12345678.91, 1234567890123456.0)
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable
from typing import Any

__all__ = ["DIGITS", "significant", "tables_json"]

DIGITS = 12
"""Significant digits a number keeps in a prompt (binary float noise starts at the 16th)."""


def significant(x: Any) -> Any:
    """``x`` with at most :data:`DIGITS` significant digits when it is a finite float with a fraction; any other
    value (an integral float too) unchanged."""
    if isinstance(x, float) and math.isfinite(x) and not x.is_integer():
        return float(f"{x:.{DIGITS}g}")
    return x


def _cells(v: Any) -> Any:
    if isinstance(v, list):
        return [_cells(c) for c in v]
    if isinstance(v, dict):
        return {k: _cells(c) for k, c in v.items()}
    return significant(v)


def tables_json(tables: Iterable[Any]) -> str:
    """The ``tables`` input of the answer writer: ``[{name, columns, rows, n_rows}]`` (``results.TableOut``), each
    float cell with its significant digits (see the module docstring)."""
    out = []
    for t in tables:
        d = t.model_dump() if hasattr(t, "model_dump") else dict(t)
        d["rows"] = _cells(d.get("rows", []))
        out.append(d)
    return json.dumps(out, default=str)
