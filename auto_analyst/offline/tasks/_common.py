"""Helpers shared by the task plugins (not a plugin itself: it is not listed in ``_MODULES``).

Column positions in the question text, words that split a question into outcome and predictors,
the significance level, and the snippets of code several plugins write.
"""

from __future__ import annotations

import re

from auto_analyst.data.description import ColumnInfo, TableDescription
from auto_analyst.offline.reader.pieces import Pieces
from auto_analyst.offline.reader.vocabulary import vocabulary
from auto_analyst.offline.reader.words import ALPHA, ALPHA_PCT
from auto_analyst.offline.spec import quote_col, quote_val

__all__ = [
    "NUM",
    "cols_text",
    "column_positions",
    "info",
    "is_identifier",
    "mentioned",
    "number",
    "read_alpha",
    "round_expr",
    "usable_features",
]

NUM = r"(\d+(?:\.\d+)?|one|two|three|four|five|six|seven|eight|nine|ten|twenty)"
_WORDS = {"one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8, "nine": 9,
          "ten": 10, "twenty": 20}
TOOK = re.compile(r"took '(.+)' as '(.+)'")
ID_NAME = re.compile(r"(?:^|[\s_\-.])id$|^id[\s_\-.]|^(?:uuid|guid|key|index)$", re.IGNORECASE)
CAMEL_ID = re.compile(r"[a-z0-9]I[dD]$")


def number(s: str) -> float | int:
    """'3' → 3, '2.5' → 2.5, 'three' → 3."""
    if s in _WORDS:
        return _WORDS[s]
    f = float(s)
    return int(f) if f.is_integer() and "." not in s else f


def mentioned(p: Pieces) -> list[str]:
    """Every column the part names outside filters (values, grouping, others), without repeats."""
    return list(dict.fromkeys(p.group_cols + p.numeric + p.categorical + p.dates))


def column_positions(p: Pieces, table: TableDescription, every: bool = False) -> list[tuple[int, str]]:
    """(position in ``p.text``, column) for each mentioned column (its first mention, or ``every`` one),
    in text order.

    Mentions come from the table's vocabulary; a close spelling the reader took
    ("took 'churn' as 'churned'") is placed where its words are.
    """
    wanted = set(mentioned(p))
    out: dict[str, int] = {}
    extra: list[tuple[int, str]] = []
    for m in vocabulary(table).find(p.text):
        if m.column in wanted and m.column not in out:
            out[m.column] = m.start
        elif m.column in wanted and every:
            extra.append((m.start, m.column))
    for a in p.spec.assumptions:
        mm = TOOK.fullmatch(a)
        if mm and mm.group(2) in wanted and mm.group(2) not in out:
            found = re.search(r"\b" + re.escape(mm.group(1)) + r"\b", p.text)
            out[mm.group(2)] = found.start() if found else len(p.text)
    for c in wanted - set(out):
        out[c] = len(p.text)
    return sorted([(pos, c) for c, pos in out.items()] + extra, key=lambda pc: pc[0])


def info(table: TableDescription, name: str) -> ColumnInfo:
    return next(c for c in table.columns if c.name == name)


def is_identifier(col: ColumnInfo) -> bool:
    """A key, not a measurement: kind 'identifier', or a name like 'customer_id', 'id', 'userId'."""
    name = col.name.strip()
    return col.kind == "identifier" or bool(ID_NAME.search(name) or CAMEL_ID.search(name))


def usable_features(table: TableDescription, exclude: set[str]) -> tuple[list[str], list[str]]:
    """(features, skipped reasons): numeric, boolean and categorical columns; identifiers, free text,
    dates and categories with more than 50 values are left out (each reason said)."""
    used, skipped = [], []
    for c in table.columns:
        if c.name in exclude:
            continue
        if is_identifier(c):
            skipped.append(f"left out '{c.name}' (an identifier)")
        elif c.kind in ("text", "datetime"):
            skipped.append(f"left out '{c.name}' ({'free text' if c.kind == 'text' else 'a date'})")
        elif c.kind == "categorical" and c.distinct > 50:
            skipped.append(f"left out '{c.name}' ({c.distinct} distinct values)")
        elif c.distinct <= 1:
            skipped.append(f"left out '{c.name}' (a single value)")
        else:
            used.append(c.name)
    return used, skipped


def read_alpha(p: Pieces) -> float | None:
    """The significance level the question gives ('alpha 0.01', 'at the 1% level'), else None.

    A percentage form clears ``spec.percent`` (the '%' belonged to the level, not to the output)."""
    m = ALPHA.search(p.text)
    if m:
        return float(m.group(1))
    m = ALPHA_PCT.search(p.text)
    if m:
        p.spec.percent = False
        return float(m.group(1) or m.group(2)) / 100
    return None


def cols_text(cols: list[str]) -> str:
    return " and ".join(quote_col(c) for c in cols)


def vals_text(vals: list) -> str:
    return " and ".join(quote_val(v) for v in vals)


def round_expr(expr: str, rounding: int | None, default: int | None = None) -> str:
    digits = rounding if rounding is not None else default
    return f"round({expr}, {digits})" if digits is not None else expr
