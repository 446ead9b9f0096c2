"""Code snippets the offline analysts and the task plugins share (no plugin or spec dependencies here).

``PICK_HELPER`` finds a value a question names in a column (exact, else ignoring case and spaces,
never another value) and says why conditions keep no row (two named values no row has together); ``func_call`` writes a statistic as a pandas call.
"""

from __future__ import annotations

from auto_analyst.offline.statistics import STATISTICS

__all__ = ["PICK_HELPER", "FUNC_CALL", "GRAIN_CODE", "func_call", "picked"]

PICK_HELPER = '''def pick_value(series, wanted):
    """The value of `series` written as `wanted`: exact, else ignoring case and spaces; never another value."""
    values = list(series.dropna().unique())
    if wanted in values:
        return wanted
    key = str(wanted).strip().casefold()
    hits = [v for v in values if str(v).strip().casefold() == key]
    if len(hits) == 1:
        return hits[0]
    shown = ", ".join(map(str, values[:12]))
    raise LookupError(f"No value {wanted!r} in column {series.name!r}. Values there include: {shown}.")


def no_rows(table, named, where):
    """Why the conditions keep no row: two named values of different columns that no row has together ('Asia'
    with 'France', whose rows are in Europe), the newest first; else the plain 'No rows match'."""
    for b, y in reversed(named):
        for a, x in named:
            rows = table[table[b] == y]
            if a != b and len(rows) and not (rows[a] == x).any():
                held = ", ".join(map(str, rows[a].dropna().unique()[:3]))
                return (f"No row has both {a} = {x} and {b} = {y} (the rows of {y} have {a} = {held}), so there "
                        f"is nothing to compute. Ask again naming only the one you mean (for example without "
                        f"{a} = {x}).")
    return f"No rows match {where}, so there is nothing to compute."


def nested_in_place(table, old, named):
    """Check that the value `old` (column, value) of an earlier turn, read as replaced by a value of another column
    ('France' for 'Asia'), nests with one of the `named` (column, value): the new value's rows have one value of the
    old column, or the old value's rows one value of the new column. Else which was meant is unclear: raise."""
    col, val = old
    for c, v in named:
        if c != col and (table.loc[table[c] == v, col].nunique() <= 1 or table.loc[table[col] == val, c].nunique() <= 1):
            return
    said = " and ".join(f"{c} = {v}" for c, v in named if c != col)
    raise LookupError(f"I read {said} in place of {col} = {val} of the earlier question, but the two columns cross "
                      f"(rows of each hold several values of the other), so I can't tell which you mean. Ask it whole: "
                      f"with {said} alone, or with both.")
'''

# statistics as pandas calls: one row each in statistics.STATISTICS (pct_true is written by codegen)
FUNC_CALL = {s.name: s.pandas for s in STATISTICS if s.name != "pct_true"}
GRAIN_CODE = {"day": ".dt.strftime('%Y-%m-%d')", "week": ".dt.to_period('W').astype(str)",
              "month": ".dt.strftime('%Y-%m')", "month_of_year": ".dt.month",
              "quarter": ".dt.to_period('Q').astype(str)", "year": ".dt.year"}


def picked(table: str, named: list[tuple[str, str]]) -> str:
    """Code for the (column, value) pairs of ``named`` as found in ``table`` ('(col, pick_value(t[col], v)), ...')."""
    return ", ".join(f"({c!r}, pick_value({table}[{c!r}], {v!r}))" for c, v in named)


def func_call(func: str) -> str:
    """The pandas call computing ``func`` on a Series or a groupby (e.g. '.std(ddof=0)')."""
    return FUNC_CALL[func]



FORMULA_NOTE = "Formula:"


def formula_check(series: str, value: str, rounding: int | None, label: str, var: str) -> list[str]:
    """Lines that note it when a standard deviation asked for without a formula (neither 'sample' nor
    'population') would read differently at the asked precision with the population formula (n) than with
    the sample formula (n - 1, pandas' default) the value uses; the answer shows the note."""
    if rounding is None:
        return []
    return [f"{var} = round({series}.std(ddof=0), {rounding})",
            f"if {var} != {value}:",
            f"    print({FORMULA_NOTE!r}, {label!r}, 'uses the sample formula (n - 1); the population formula (n) gives', "
            f"{var}, '(say \\'population standard deviation\\' for it).')"]
