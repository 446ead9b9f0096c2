"""Whether the text values a SQLite number column holds read as a file's reader reads them, once made missing.

SQLite keeps a value of a REAL or INTEGER column that does not read as a number as it was given ('N/A', but also
'1,000' and '$30', which SQLite does not read as numbers). The offline model reads such a column through
``typeof()``, making every text value missing (``offline/sqlcode.py``); that agrees with the same data read from a
file only when the file's reader makes each of those values missing too. It does for placeholders ('N/A', '-',
'?'), but it reads '1,000' and '$30' as numbers, and it reads a column whose cells are mostly not numbers ('0x10')
as text, not as a number column. So when a SQLite table is described, each number column's distinct text values
are fetched (at most :data:`MAX_TEXT_VALUES`) with their counts and run through the reader's own parser
(``numbers.parse_counted``, the path ``columns.infer_column`` takes); the column's ``ColumnInfo.sql_text``
sentence says why the offline model declines it when they do not all become missing.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import pandas as pd

__all__ = ["MAX_TEXT_VALUES", "TextReading", "text_readings"]

MAX_TEXT_VALUES = 50
"""Distinct text values of one column checked one by one; a column with more is declined (a free-text column
declared REAL is not read as numbers by a file's reader either, and fetching them all would be unbounded)."""
_NUMBER_STAND_IN = "0"
"""Stands for the column's numbers in the parse (their count is what the reader's share rule needs)."""


@dataclass
class TextReading:
    """What a file's reader does with the text values of one SQLite number column."""

    column: str
    n_text: int = 0
    missing: list[str] = field(default_factory=list)  # values it reads as missing
    numbers: dict[str, float] = field(default_factory=dict)  # values it reads as numbers → the number
    not_numeric: bool = False  # it would not read the column as numbers at all
    too_many: bool = False  # more than MAX_TEXT_VALUES distinct values: not checked
    failed: str = ""  # the check's query failed (its reason)

    def problem(self) -> str:
        """One sentence saying why the column cannot be read as missing-where-text, '' when it can."""
        c = f"`{self.column}`"
        ask = "clean the column in the database (store numbers, NULL where there is none) or ask with a language model"
        if self.failed:
            return (f"{c} holds values the database keeps as text, and checking how a file's reader would read them "
                    f"failed ({self.failed}); the offline model did not answer it: {ask}.")
        if self.too_many:
            return (f"{c} holds more than {MAX_TEXT_VALUES} different values the database keeps as text, not numbers, "
                    f"which the offline model does not check one by one, so it did not answer it: {ask}.")
        if self.not_numeric:
            odd = next((v for v in self.missing if v.strip().lower() not in _placeholders()), self.missing[0] if self.missing else "")
            return (f"{c} holds text such as {odd!r} that is not a number, so the same data read from a file is not "
                    f"a number column and the offline model did not answer it: {ask}.")
        if self.numbers:
            text, number = next(iter(self.numbers.items()))
            return (f"{c} holds {text!r}, which the database keeps as text but a file's reader reads as {number:g}, so "
                    f"the database's answer would differ from the file's and the offline model did not answer it: "
                    f"{ask}.")
        return ""


def _placeholders() -> frozenset[str]:
    from auto_analyst.data.numbers import PLACEHOLDERS

    return PLACEHOLDERS


def reading(column: str, values: Sequence[object], counts: Sequence[int], n_numbers: int) -> TextReading:
    """How a file's reader reads a column of ``n_numbers`` numbers and ``values[i]`` (text) ``counts[i]`` times.

    The reader's decimal mark is its default ('.'; a file's own evidence could make it ','); cells are trimmed and a
    blank one is missing, as ``textops.normalize`` does.
    """
    from auto_analyst.data.numbers import parse_counted

    texts = [None if v is None else (v.decode("utf-8", "replace") if isinstance(v, bytes) else str(v)) for v in values]
    cells = [None if t is None or not t.strip() else t.strip() for t in texts]
    out = TextReading(column, n_text=int(sum(counts)))
    parsed = parse_counted(cells + [_NUMBER_STAND_IN], list(counts) + [max(int(n_numbers), 0)])
    shown = [t if t is not None else "" for t in texts]
    if parsed is None:
        out.not_numeric, out.missing = True, shown
        return out
    got = parsed.values.to_pylist()
    for text, value in zip(shown, got):
        if value is None:
            out.missing.append(text)
        else:
            out.numbers[text] = float(value)
    return out


def text_readings(fetch: Callable[[str], pd.DataFrame], table: str, columns: Sequence[str]) -> dict[str, TextReading]:
    """Column → its reading, for the number columns ``columns`` of SQLite table ``table`` that hold text values.

    Args:
        fetch: runs one read-only SELECT and returns its rows (``SqlSource.query``); an exception it raises is
            recorded on every column as ``failed`` (a column that could not be checked is declined).

    One pass counts every column's numbers and text values; one more query per column that has text fetches its
    distinct text values (``MAX_TEXT_VALUES + 1`` at most).
    """
    from auto_analyst.data.duck_sql import quote
    from auto_analyst.data.sql_driver import NUMBER_CLASSES

    if not columns:
        return {}
    q = {c: quote(c, "sqlite") for c in columns}
    counts = ", ".join(f"sum(CASE WHEN typeof({q[c]}) IN ('text', 'blob') THEN 1 ELSE 0 END), "
                       f"sum(CASE WHEN typeof({q[c]}) IN {NUMBER_CLASSES} THEN 1 ELSE 0 END)" for c in columns)
    name = quote(table, "sqlite")
    try:
        row = fetch(f"SELECT {counts} FROM {name}").iloc[0].tolist()
    except Exception as exc:  # noqa: BLE001 - any failure leaves the columns unchecked, which declines them
        return {c: TextReading(c, failed=str(exc).split("\n")[0][:200]) for c in columns}
    out = {}
    for k, c in enumerate(columns):
        n_text, n_numbers = int(row[2 * k] or 0), int(row[2 * k + 1] or 0)
        if not n_text:
            continue
        try:
            found = fetch(f"SELECT CAST({q[c]} AS TEXT) AS v, count(*) AS n FROM {name} "
                          f"WHERE typeof({q[c]}) IN ('text', 'blob') GROUP BY 1 ORDER BY 2 DESC, 1 "
                          f"LIMIT {MAX_TEXT_VALUES + 1}")
        except Exception as exc:  # noqa: BLE001 - as above
            out[c] = TextReading(c, n_text=n_text, failed=str(exc).split("\n")[0][:200])
            continue
        if len(found) > MAX_TEXT_VALUES:
            out[c] = TextReading(c, n_text=n_text, too_many=True)
            continue
        out[c] = reading(c, found["v"].tolist(), [int(n) for n in found["n"]], n_numbers)
    return out
