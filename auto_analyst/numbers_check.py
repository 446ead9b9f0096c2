"""Checking that every number in an answer appears in what the run printed or showed."""

from __future__ import annotations

import json
import re
from typing import Iterable

__all__ = ["unsupported_numbers"]

NUMBER = re.compile(r"(?<![\w.])-?\d+(?:\.\d+)?(?:e[-+]?\d+)?(?![\w])")


DECADE = re.compile(r"(?<![\w.])'?(\d|1\d\d|20\d)0s\b")
"""A decade as written: '1970s', '2000s', '70s', "'90s" (the digits before the final 0)."""

SHORT_RANGE = re.compile(r"(?<![\w.])(1\d|20)(\d{2})\s*(?:-|–|—|to|through|thru|until|and)\s*'?(\d{2})(?![\w.])")
"""A year range with a two-digit end: '1980-85', '1980 to 85' (the end is in the century of the start)."""


def _named_years(text: str) -> list[float]:
    """The years a text names without writing them: both ends of a decade ('1970s' names 1970 and 1979; '70s'
    1970/1979 and 2070/2079, its century unsaid) and the end of a short range ('1980-85' names 1985). An answer
    that spells out the period a question asked for invents no number."""
    out: list[float] = []
    for m in DECADE.finditer(text):
        tens = int(m.group(1)) * 10
        starts = [tens] if len(m.group(1)) == 3 else [1900 + tens, 2000 + tens]
        out += [float(y) for start in starts for y in (start, start + 9)]
    for m in SHORT_RANGE.finditer(text):
        start = int(m.group(1) + m.group(2))
        end = start // 100 * 100 + int(m.group(3))
        out.append(float(end if end >= start else end + 100))  # '1998-02' ends in 2002
    return out


def _numbers(text: str) -> list[float]:
    out = []
    for m in NUMBER.finditer(text.replace(",", "")):
        try:
            out.append(float(m.group(0)))
        except ValueError:
            pass
    return out + _named_years(text)


def unsupported_numbers(answer: str, sources: Iterable[str]) -> list[str]:
    """Numbers written in ``answer`` that no source contains, allowing for the rounding the answer shows.

    A number with d decimals is supported by a source number within half a unit of its last digit
    (so 5.006 supports 5.01), or by the same number as a percentage/fraction (12.5 vs 0.125). A bound written
    ``< 0.001`` (a p-value too small to show) is supported by a source number from 0 up to it. A year a source
    names as a decade or a short range's end (:func:`_named_years`: the question's '1970s' names 1970 and 1979) is
    supported too.
    """
    pool: list[float] = []
    for s in sources:
        pool.extend(_numbers(s if isinstance(s, str) else json.dumps(s, default=str)))
    missing = []
    text = answer.replace(",", "")
    for m in NUMBER.finditer(text):
        token = m.group(0)
        value = float(token)
        if re.search(r"<\s?$", text[max(0, m.start() - 2):m.start()]) and any(0 <= p < value for p in pool):
            continue
        mantissa = token.split("e")[0]
        decimals = len(mantissa.split(".")[1]) if "." in mantissa else 0
        tol = 0.5 * 10 ** (-decimals) * (10 ** int(token.split("e")[1]) if "e" in token else 1) + 1e-12
        if any(abs(value - p) <= tol or abs(value - 100 * p) <= tol or abs(value / 100 - p) <= tol / 100 for p in pool):
            continue
        missing.append(token)
    return list(dict.fromkeys(missing))
