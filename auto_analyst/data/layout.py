"""Table layout around the data: header names, empty rows and columns, totals and notes rows.

Works on a pyarrow table whose columns are all text (as read, before type inference), so the
same rules serve CSV and Excel sheets.
"""

from __future__ import annotations

import re

import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from auto_analyst.data.textops import count_true, normalize

__all__ = ["clean_headers", "drop_empty", "drop_footer", "clash_note"]

# Bottom rows checked for totals and notes; exports put at most a few lines there.
FOOTER_SCAN_ROWS = 10
_TOTAL_START = re.compile(r"^(grand\s+|sub-?)?totals?\b|^sum(me)?\b|^gesamt|^insgesamt|^totaal|^totale?\b|"
                          r"^summa\b", re.I)
_TOTAL_CELL = re.compile(r"^((grand\s+|sub-?)?totals?|sum|summe|gesamt|insgesamt|totaal|totale|summa):?$", re.I)
_NOTE_START = re.compile(r"^(notes?|source|quelle|remarks?|comments?|disclaimer|generated|exported|created|printed|"
                         r"page\s+\d|\*|©|\(c\)|†)", re.I)
_DF_ATTRS = frozenset(a for a in dir(pd.DataFrame) if not a.startswith("_"))


def clean_headers(cells: list) -> tuple[list[str], list[str]]:
    """Usable, unique column names from header cells.

    Strips surrounding spaces and BOMs, folds inner whitespace and line breaks to one space,
    names empty cells ``column_<n>`` (1-based position) and suffixes repeats (``amount_2``).

    Returns:
        (names, the original cells as text).
    """
    originals = ["" if c is None else (c.isoformat().replace("T00:00:00", "") if hasattr(c, "isoformat") else str(c))
                 for c in cells]
    names: list[str] = []
    seen: set[str] = set()
    for i, raw in enumerate(originals):
        name = " ".join(raw.replace("\ufeff", "").split()) or f"column_{i + 1}"
        base, k = name, 2
        while name in seen:
            name, k = f"{base}_{k}", k + 1
        seen.add(name)
        names.append(name)
    return names, originals


def drop_empty(table: pa.Table, originals: list[str], normalized: bool = False) -> tuple[pa.Table, list[str], int]:
    """Drop rows with no value at all, and columns with neither a header nor any value.

    Args:
        table: text columns (or columns the reader converted).
        originals: the header cells.
        normalized: the columns are already trimmed with blanks as null (``textops.normalize``).

    Returns:
        (table, names of dropped columns, number of dropped rows).
    """
    norm = (lambda c: c) if normalized else normalize
    keep_cols, dropped = [], []
    for name, orig in zip(table.column_names, originals):
        if not orig.strip() and norm(table.column(name)).null_count == len(table.column(name)):
            dropped.append(name)
        else:
            keep_cols.append(name)
    table = table.select(keep_cols)
    if table.num_columns == 0 or table.num_rows == 0:
        return table, dropped, 0
    blanks = []
    for name in table.column_names:
        col = norm(table.column(name))
        if col.null_count == 0:
            return table, dropped, 0  # a column with a value in every row: no row is all blank
        blanks.append(col)
    all_blank = pc.is_null(blanks[0])
    for col in blanks[1:]:
        all_blank = pc.and_(all_blank, pc.is_null(col))
    n_blank = _count(all_blank)
    if n_blank:
        table = table.filter(pc.invert(all_blank))
    return table, dropped, n_blank


def drop_footer(table: pa.Table) -> tuple[pa.Table, list[str]]:
    """Drop totals rows ('Total', 'Grand total', 'Summe', ...) and notes lines below the data.

    Only the last ``FOOTER_SCAN_ROWS`` rows are examined and scanning stops at the first row that
    looks like data, so a 'Total' inside the data is never touched.

    Returns:
        (table, the dropped rows as text, top to bottom).
    """
    n = table.num_rows
    tail = table.slice(max(0, n - FOOTER_SCAN_ROWS)).to_pylist()
    dropped: list[str] = []
    for row in reversed(tail):
        cells = [str(v).strip() for v in row.values() if v is not None and str(v).strip()]
        if not cells:
            dropped.append("")
        elif _TOTAL_START.match(cells[0]) or any(_TOTAL_CELL.match(c) for c in cells[1:3]):
            dropped.append(" | ".join(cells))
        elif (table.num_columns >= 3 and re.search(r"[^\W\d_]", cells[0])
              and ((len(cells) <= 2 and _NOTE_START.match(cells[0]))
                   or (len(cells) == 1 and len(cells[0].split()) >= 3))):
            dropped.append(", ".join(cells))
        else:
            break
    if not dropped:
        return table, []
    return table.slice(0, n - len(dropped)), [d for d in reversed(dropped) if d]


def clash_note(name: str) -> str:
    """A note when a column name is also a DataFrame attribute ('count', 'size', 'index', ...)."""
    if name in _DF_ATTRS:
        return f"name clashes with DataFrame.{name}: write df[{name!r}], never df.{name}"
    return ""


def _count(mask) -> int:
    return count_true(mask)
