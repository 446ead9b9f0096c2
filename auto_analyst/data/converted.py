"""Columns the CSV reader converts itself, and their reports.

:func:`reader_types` picks, from the first rows, the columns pyarrow's reader may convert while it
parses (in its own threads, with no text copy): plain decimal numbers, ISO dates and times, and
yes/no words. Every rule of :func:`~auto_analyst.data.columns.infer_column` gives the same values
for such cells; one later cell that does not convert makes the reader read the whole file again
as text (:mod:`auto_analyst.data.textfile`), so a guess never loses a value.
:func:`describe_converted` reports such a column exactly as inference of its text would.
"""

from __future__ import annotations

import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from auto_analyst.data.report import ColumnReport
from auto_analyst.data.textops import count_true

__all__ = ["BOOL_SPELLINGS", "FALSE_WORDS", "TRUE_WORDS", "describe_converted", "reader_types", "spellings"]

TRUE_WORDS = ("yes", "y", "true", "t")
FALSE_WORDS = ("no", "n", "false", "f")


def spellings(word: str) -> set[str]:
    """Every text whose utf8_lower is ``word``: each letter in either case, plus the two non-ASCII
    capitals whose lower case is ASCII (U+0130 → i, U+212A → k)."""
    forms = [""]
    for ch in word:
        options = {ch, ch.upper()} | ({"\u0130"} if ch == "i" else set()) | ({"\u212a"} if ch == "k" else set())
        forms = [f + o for f in forms for o in options]
    return set(forms)


# Number text the CSV reader may convert itself, because infer_column would give the same values:
# a point or an exponent (a float), integers beside them, no leading zeros, no separators or signs
# of formatting. Any other cell later in the column makes the reader start again with text.
_PLAIN_FLOAT = r"^[+-]?(\d+\.\d*|\.\d+|\d+(\.\d*)?[eE][+-]?\d+)$"
_PLAIN_INT = r"^[+-]?(0|[1-9]\d*)$|^(?i:[+-]?(nan|inf|infinity))$"
# ISO dates (and times to the second), which parse_dates reads as ISO8601 with the same values.
_PLAIN_ISO = r"^\d{4}-\d{2}-\d{2}([ T]\d{2}:\d{2}(:\d{2})?)?$"
# Filled cells a column needs in the sample before the reader converts it.
MIN_TYPED_SAMPLE = 100
BOOL_SPELLINGS = (sorted({f for w in TRUE_WORDS for f in spellings(w)}),
                  sorted({f for w in FALSE_WORDS for f in spellings(w)}))
"""The true and false cells the CSV reader accepts in a column :func:`reader_types` made boolean."""


def reader_types(sample: pa.Table, names: list[str], skip: set[str]) -> dict[int, pa.DataType]:
    """Columns the CSV reader may convert itself, because every rule of ``infer_column`` would
    give the same values: plain decimal numbers (float64), ISO dates and times (timestamp) and
    yes/no words with both answers (bool, with ``BOOL_SPELLINGS``).

    The reader converts in its own threads without a text copy; one cell later in the file that
    does not convert makes it read the whole file again as text, so a guess never loses a value.

    Args:
        sample: the first rows, text columns in file order.
        names: the column names (for ``skip``).
        skip: columns the user typed (``dtypes``); they stay text.

    Returns:
        column index → type.
    """
    out: dict[int, pa.DataType] = {}
    for i, (name, col) in enumerate(zip(names, sample.columns)):
        values = pc.drop_null(col)
        if name in skip or len(values) < MIN_TYPED_SAMPLE:
            continue
        floats = count_true(pc.match_substring_regex(values, _PLAIN_FLOAT))
        if floats and floats + count_true(pc.match_substring_regex(values, _PLAIN_INT)) == len(values):
            out[i] = pa.float64()
        elif count_true(pc.match_substring_regex(values, _PLAIN_ISO)) == len(values):
            out[i] = pa.timestamp("s")
        else:
            words = set(pc.unique(pc.utf8_lower(values)).to_pylist())
            if words <= set(TRUE_WORDS + FALSE_WORDS) and words & set(TRUE_WORDS) and words & set(FALSE_WORDS):
                out[i] = pa.bool_()
    return out


def describe_converted(name: str, arr: pa.ChunkedArray, rep: ColumnReport) -> tuple[pd.Series, ColumnReport]:
    """A column the reader converted (see :func:`reader_types`), reported as inference would."""
    if pa.types.is_boolean(arr.type):
        rep.inferred_type, rep.conversion, rep.n_placeholders = "boolean", "yes/no text → boolean", arr.null_count
        mapper = {pa.bool_(): pd.BooleanDtype()}.get if arr.null_count else None
        return _series(pd.Series(arr.to_pandas(types_mapper=mapper), name=name), rep)
    if pa.types.is_timestamp(arr.type):
        has_time = count_true(pc.fill_null(pc.not_equal(pc.floor_temporal(arr, unit="day"), arr), False))
        rep.inferred_type, rep.n_placeholders = "datetime", arr.null_count
        rep.conversion = f"ISO date text → {'timestamp' if has_time else 'date'}"
        return _series(pd.Series(pc.cast(arr, pa.timestamp("us")).to_pandas(), name=name), rep)
    nan = pc.fill_null(pc.is_nan(arr), False)  # float64: 'nan' cells are placeholders, 'inf' missing
    inf = pc.fill_null(pc.is_inf(arr), False)
    rep.n_inf = count_true(inf)
    if rep.n_inf or count_true(nan):
        arr = pc.if_else(pc.or_(nan, inf), pa.scalar(None, pa.float64()), arr)
    rep.inferred_type, rep.n_placeholders = "float", arr.null_count - rep.n_inf
    return _series(pd.Series(arr.to_pandas(), name=name), rep)


def _series(s: pd.Series, rep: ColumnReport) -> tuple[pd.Series, ColumnReport]:
    rep.dtype = str(s.dtype)
    return s, rep
