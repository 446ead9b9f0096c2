"""Compact description of wide tables (more than ``WIDE_TABLE_COLUMNS`` columns).

Columns whose names differ only by a date or a number ('2024-01-01' … '2024-12-31',
'sales_w1' … 'sales_w52') are described as one pattern, e.g. "one column per day
2024-01-01..2024-12-31 (366 numeric columns)"; the other columns are described one by one.
When a pattern covers most columns the description suggests melting to long format.
"""

from __future__ import annotations

import re
from collections import defaultdict

import pandas as pd

__all__ = ["wide_layout", "column_groups"]

# A pattern needs at least this many columns; fewer are easier to read one by one.
MIN_GROUP = 4
# Columns described one by one in a wide table; the rest are counted.
MAX_SINGLE_COLUMNS = 40
_DATE_PARTS = [
    (re.compile(r"(?<!\d)(\d{4})[-_/.](\d{2})[-_/.](\d{2})(?!\d)"), "day"),
    (re.compile(r"(?<!\d)(\d{2})[-_/.](\d{2})[-_/.](\d{4})(?!\d)"), "day"),
    (re.compile(r"(?<!\d)(\d{4})[-_/.](\d{2})(?!\d)"), "month"),
    (re.compile(r"(?<!\d)(\d{4})[-_ ]?[Qq]([1-4])(?!\d)"), "quarter"),
    (re.compile(r"(?<!\d)(19\d{2}|20\d{2})(?!\d)"), "year"),
]
_NUMBER = re.compile(r"\d+")


def column_groups(names: list[str]) -> list[tuple[str, str, list[str], list[str]]]:
    """Group column names that differ only by a date or a number.

    Returns:
        (template with '{date}' or '{n}', unit: day/month/quarter/year/number, the varying parts,
        the column names), for groups of at least ``MIN_GROUP`` columns, largest first.
    """
    groups: dict[tuple[str, str], list[tuple[str, str]]] = defaultdict(list)
    for name in names:
        for rx, unit in _DATE_PARTS:
            m = rx.search(name)
            if m:
                groups[(name[: m.start()] + "{date}" + name[m.end():], unit)].append((m.group(0), name))
                break
        else:
            nums = list(_NUMBER.finditer(name))
            if nums:
                m = nums[-1]
                groups[(name[: m.start()] + "{n}" + name[m.end():], "number")].append((m.group(0), name))
    out = [(tpl, unit, [v for v, _ in items], [n for _, n in items])
           for (tpl, unit), items in groups.items() if len(items) >= MIN_GROUP]
    return sorted(out, key=lambda g: -len(g[3]))


def _kinds(frame: pd.DataFrame, cols: list[str]) -> str:
    numeric = sum(pd.api.types.is_numeric_dtype(frame[c]) and not pd.api.types.is_bool_dtype(frame[c]) for c in cols)
    if numeric == len(cols):
        return "numeric"
    return "text" if numeric == 0 else "mixed"


def _span(unit: str, parts: list[str]) -> str:
    if unit == "number":
        nums = sorted(int(p) for p in parts)
        return f"{nums[0]}..{nums[-1]}"
    return f"{min(parts)}..{max(parts)}" if unit != "day" or parts[0][:4].isdigit() else f"{parts[0]}..{parts[-1]}"


def wide_layout(frame: pd.DataFrame) -> tuple[list[str], list, str]:
    """How to describe a wide table: column patterns, the other columns, and a reshape hint.

    Returns:
        (``column_patterns``, the columns outside any pattern to describe one by one (at most
        ``MAX_SINGLE_COLUMNS``), ``reshape_hint`` (set when patterns cover half the columns or more, else '')).
    """
    names = [str(c) for c in frame.columns]
    grouped: set[str] = set()
    patterns = []
    for tpl, unit, parts, cols in column_groups(names):
        cols = [c for c in cols if c not in grouped]
        if len(cols) < MIN_GROUP:
            continue
        grouped.update(cols)
        what = f"one column per {unit}" if unit != "number" else "numbered columns"
        label = tpl.replace("{date}", "<" + unit + ">") if tpl not in ("{date}", "{n}") else ""
        patterns.append(f"{what} {label + ' ' if label else ''}{_span(unit, parts)} "
                        f"({len(cols)} {_kinds(frame, cols)} columns, e.g. {cols[0]!r} … {cols[-1]!r})")
    rest = [c for c in frame.columns if str(c) not in grouped]
    if not patterns:
        kinds = frame.dtypes.astype(str).value_counts()
        patterns = [f"{n} columns of dtype {k}" for k, n in kinds.items()]
    if len(rest) > MAX_SINGLE_COLUMNS:
        patterns.append(f"{len(rest) - MAX_SINGLE_COLUMNS} more columns not listed")
    hint = ""
    if grouped and len(grouped) >= frame.shape[1] / 2:
        ids = [str(c) for c in rest][:10]
        hint = (
            "Most columns repeat one measure per date/number: melt to long format before analysing, e.g. "
            f"long = df.melt(id_vars={ids!r}, var_name='period', value_name='value')"
            + ("; then long['period'] = pd.to_datetime(long['period'])" if any("{date}" in p for p in
                                                                                 _templates(names)) else "")
        )
    return patterns, rest[:MAX_SINGLE_COLUMNS], hint


def _templates(names: list[str]) -> list[str]:
    return [g[0] for g in column_groups(names)]
