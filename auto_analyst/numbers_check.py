"""Checking that every number in an answer appears in what the run printed or showed."""

from __future__ import annotations

import json
import re
from typing import Iterable

__all__ = ["unsupported_numbers"]

NUMBER = re.compile(r"(?<![\w.])-?\d+(?:\.\d+)?(?:e[-+]?\d+)?(?![\w])")


def _numbers(text: str) -> list[float]:
    out = []
    for m in NUMBER.finditer(text.replace(",", "")):
        try:
            out.append(float(m.group(0)))
        except ValueError:
            pass
    return out


def unsupported_numbers(answer: str, sources: Iterable[str]) -> list[str]:
    """Numbers written in ``answer`` that no source contains, allowing for the rounding the answer shows.

    A number with d decimals is supported by a source number within half a unit of its last digit
    (so 5.006 supports 5.01), or by the same number as a percentage/fraction (12.5 vs 0.125). A bound written
    ``< 0.001`` (a p-value too small to show) is supported by a source number from 0 up to it.
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
