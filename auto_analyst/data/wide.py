"""Compact description of wide tables (more than ``WIDE_TABLE_COLUMNS`` columns).

Columns whose names differ only by a date or a number ('2024-01-01' … '2024-12-31',
'sales_w1' … 'sales_w52') are described as one pattern with their types and range, e.g. "one
column per day 2024-01-01..2024-12-31 (366 numeric columns: float64, 0..1, no missing; …)"; up
to ``MAX_SINGLE_COLUMNS`` other columns are described one by one and the rest are counted by
type. The columns a question names or resembles (:mod:`auto_analyst.data.retrieval`) are always
described in full, and ``all_columns`` lists every name compactly, so any column can be planned.
When a pattern covers most columns the description suggests melting to long format.
"""

from __future__ import annotations

import re
from collections import defaultdict
from dataclasses import dataclass, field

import pandas as pd

from auto_analyst.data.retrieval import compact_names, relevant_columns

__all__ = ["WideLayout", "wide_layout", "column_groups"]

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


def _stats(frame: pd.DataFrame, cols: list[str]) -> str:
    """'float64, 0.01..0.99, 12 missing' for a group of columns (types, numeric range, missing cells)."""
    part = frame[cols]
    dtypes = part.dtypes.astype(str).value_counts()
    text = ", ".join(k if len(dtypes) == 1 else f"{n} {k}" for k, n in dtypes.items())
    numeric = [c for c in cols if pd.api.types.is_numeric_dtype(frame[c]) and not pd.api.types.is_bool_dtype(frame[c])]
    if numeric:
        lo, hi = part[numeric].min().min(), part[numeric].max().max()
        if pd.notna(lo) and pd.notna(hi):
            text += f", {_num(lo)}..{_num(hi)}"
    missing = int(part.isna().sum().sum())
    return text + (f", {missing} missing" if missing else ", no missing")


def _num(v) -> str:
    v = float(v)
    return str(int(v)) if v.is_integer() and abs(v) < 1e15 else f"{v:.4g}"


def _span(unit: str, parts: list[str]) -> str:
    if unit == "number":
        nums = sorted(int(p) for p in parts)
        return f"{nums[0]}..{nums[-1]}"
    return f"{min(parts)}..{max(parts)}" if unit != "day" or parts[0][:4].isdigit() else f"{parts[0]}..{parts[-1]}"


@dataclass
class WideLayout:
    """How to describe a wide table (the description itself is filled in by ``description.describe_frame``).

    Attributes:
        patterns: ``column_patterns`` lines (a pattern's type, range and missing count; the rest counted).
        columns: the frame's columns to describe one by one: the matched ones first, then columns outside any
            pattern, at most ``MAX_SINGLE_COLUMNS`` in all unless more matched.
        matched: the names the question names, resembles or quotes a value of (described in full).
        all_columns: every name, runs folded as 'a_01..a_80'.
        reshape_hint: set when patterns cover half the columns or more, else ''.
    """

    patterns: list[str] = field(default_factory=list)
    columns: list = field(default_factory=list)
    matched: list[str] = field(default_factory=list)
    all_columns: list[str] = field(default_factory=list)
    reshape_hint: str = ""


def wide_layout(frame: pd.DataFrame, question: str | None = None) -> WideLayout:
    """The layout of a wide table's description; ``question`` picks the columns described in full, even
    inside a pattern (:func:`auto_analyst.data.retrieval.relevant_columns`)."""
    names = [str(c) for c in frame.columns]
    by_name = dict(zip(names, frame.columns))
    grouped: set[str] = set()
    patterns = []
    for tpl, unit, parts, cols in column_groups(names):
        cols = [c for c in cols if c not in grouped]
        if len(cols) < MIN_GROUP:
            continue
        grouped.update(cols)
        what = f"one column per {unit}" if unit != "number" else "numbered columns"
        label = tpl.replace("{date}", "<" + unit + ">") if tpl not in ("{date}", "{n}") else ""
        stats = _stats(frame, [by_name[c] for c in cols])
        patterns.append(f"{what} {label + ' ' if label else ''}{_span(unit, parts)} "
                        f"({len(cols)} {_kinds(frame, [by_name[c] for c in cols])} columns: {stats}; "
                        f"e.g. {cols[0]!r} … {cols[-1]!r})")
    matched = relevant_columns(frame, question) if question else []
    rest = [c for c in names if c not in grouped and c not in matched]
    shown = matched + rest[:max(0, MAX_SINGLE_COLUMNS - len(matched))]
    hidden = rest[len(shown) - len(matched):]
    if not patterns and not hidden:
        kinds = frame.dtypes.astype(str).value_counts()
        patterns = [f"{n} columns of dtype {k}" for k, n in kinds.items()]
    if hidden:
        stats = _stats(frame, [by_name[c] for c in hidden])
        patterns.append(f"{len(hidden)} more columns not described one by one ({stats}); "
                        "their names are in all_columns")
    hint = ""
    if grouped and len(grouped) >= frame.shape[1] / 2:
        ids = [c for c in names if c not in grouped][:10]
        hint = (
            "Most columns repeat one measure per date/number: melt to long format before analysing, e.g. "
            f"long = df.melt(id_vars={ids!r}, var_name='period', value_name='value')"
            + ("; then long['period'] = pd.to_datetime(long['period'])" if any("{date}" in p for p in
                                                                                 _templates(names)) else "")
        )
    return WideLayout(patterns=patterns, columns=[by_name[c] for c in shown], matched=matched,
                      all_columns=compact_names(names), reshape_hint=hint)


def _templates(names: list[str]) -> list[str]:
    return [g[0] for g in column_groups(names)]
