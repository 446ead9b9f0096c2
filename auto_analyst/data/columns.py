"""Type inference for one text column: identifier, boolean, number, date or text.

The order matters: identifiers (leading zeros, long digit strings) are decided before numbers so
'02134' is never 2134, and numbers before dates so '20240105' stays a number. Booleans need an
unambiguous yes/no vocabulary with both answers present.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from auto_analyst.data.dates import parse_dates
from auto_analyst.data.numbers import PLACEHOLDERS, TEXT_PLACEHOLDERS, parse_numbers
from auto_analyst.data.report import ColumnReport
from auto_analyst.errors import DataLoadError

__all__ = ["InferOptions", "infer_column", "DTYPE_ALIASES"]

TRUE_WORDS = ("yes", "y", "true", "t")
FALSE_WORDS = ("no", "n", "false", "f")
# float64 holds integers exactly up to 2**53 (16 digits); longer digit strings are account
# numbers or IDs and would lose digits as numbers, so they stay text.
MAX_NUMERIC_DIGITS = 15
_ID_NAME = re.compile(r"(zip|postal|postcode|plz|cep|phone|tel|mobile|fax|iban|account|acct|ean|upc|gtin|isbn|"
                      r"sku|code|_no$|number$|nr$)", re.I)
DTYPE_ALIASES = {
    "str": "string", "string": "string", "text": "string", "object": "string", "identifier": "string",
    "category": "category", "categorical": "category",
    "int": "integer", "int64": "integer", "integer": "integer", "Int64": "integer",
    "float": "float", "float64": "float", "number": "float", "numeric": "float",
    "bool": "boolean", "boolean": "boolean",
    "date": "datetime", "datetime": "datetime", "datetime64": "datetime", "datetime64[ns]": "datetime",
}
_PH = pa.array(sorted(PLACEHOLDERS) + [None], pa.string())  # null (blank) is a placeholder too
_TEXT_PH = pa.array(sorted(TEXT_PLACEHOLDERS))


@dataclass
class InferOptions:
    """File-level choices that apply to every column (user options or file-level guesses)."""

    decimal: str = "."
    decimal_forced: bool = False
    thousands: str | None = None
    dayfirst: bool | None = None
    dayfirst_hint: bool = False


def infer_column(name: str, raw: pa.ChunkedArray, opts: InferOptions,
                 dtype: str | None = None) -> tuple[pd.Series, ColumnReport]:
    """Convert one text column to its best type.

    Args:
        name: column name (used for identifier hints such as 'zip' or 'account').
        raw: the cells as text (null for empty cells), untrimmed.
        opts: file-level decimal mark, thousands separator and day-first choice.
        dtype: the user's type for this column (see ``DTYPE_ALIASES``); skips inference.

    Returns:
        (the pandas column, its report; ``original`` is left for the caller to fill).

    Raises:
        DataLoadError: ``dtype`` is not a known type name.
    """
    arr = pc.utf8_trim_whitespace(raw)
    arr = pc.if_else(pc.equal(arr, ""), pa.scalar(None, pa.string()), arr)
    rep = ColumnReport(name=name)
    if dtype is not None:
        return _forced(name, arr, opts, dtype, rep)
    if arr.null_count == len(arr):
        rep.inferred_type, rep.conversion = "empty", "no values"
        return _finish(pd.Series(arr.to_pandas(), name=name), rep)
    lower = pc.utf8_lower(arr)
    values = pc.filter(arr, pc.invert(pc.is_in(lower, value_set=_PH)))
    if len(values) and _is_identifier(name, values):
        return _text(name, arr, rep, identifier=True)
    boolean = _booleans(lower)
    if boolean is not None:
        rep.inferred_type, rep.conversion = "boolean", "yes/no text → boolean"
        rep.n_placeholders = int(boolean.isna().sum())
        return _finish(boolean.rename(name), rep)
    num = parse_numbers(arr, decimal=opts.decimal, thousands=opts.thousands)
    if num is not None:
        return _numeric(name, num, rep)
    dates = parse_dates(arr, _PH, dayfirst=opts.dayfirst, dayfirst_hint=opts.dayfirst_hint)
    if dates is not None:
        rep.inferred_type, rep.conversion, rep.note = "datetime", dates.conversion, dates.note
        rep.n_placeholders, rep.n_unparsed = dates.n_placeholders, dates.n_unparsed
        rep.unparsed_examples = dates.unparsed_examples
        return _finish(dates.values.rename(name), rep)
    return _text(name, arr, rep)


def _is_identifier(name: str, values: pa.ChunkedArray) -> bool:
    """Digit strings that are codes: a leading zero, too long for float64, or a code-like name."""
    if _count(pc.match_substring_regex(values, r"^\+\d[\d \-]{6,}$")) == len(values):
        return True  # international phone numbers
    if _count(pc.match_substring_regex(values, r"^\d+$")) != len(values):
        return False
    if _count(pc.match_substring_regex(values, r"^0\d")):
        return True
    lengths = pc.utf8_length(values)
    longest, shortest = pc.max(lengths).as_py(), pc.min(lengths).as_py()
    if longest > MAX_NUMERIC_DIGITS:
        return True
    return bool(_ID_NAME.search(name)) and longest == shortest and longest >= 3


def _booleans(lower: pa.ChunkedArray) -> pd.Series | None:
    present = set(pc.unique(lower).to_pylist()) - {None}
    present -= PLACEHOLDERS - set(FALSE_WORDS)
    if not present or not present <= set(TRUE_WORDS + FALSE_WORDS):
        return None
    if not present & set(TRUE_WORDS) or not present & set(FALSE_WORDS):
        return None  # one answer only: nothing proves this is yes/no rather than a code
    mapped = pc.if_else(pc.is_in(lower, value_set=pa.array(TRUE_WORDS)), True,
                        pc.if_else(pc.is_in(lower, value_set=pa.array(FALSE_WORDS)), False,
                                   pa.scalar(None, pa.bool_())))
    out = pd.Series(mapped.to_pandas(types_mapper={pa.bool_(): pd.BooleanDtype()}.get))
    return out.astype(bool) if not out.isna().any() else out


def _numeric(name: str, num, rep: ColumnReport) -> tuple[pd.Series, ColumnReport]:
    rep.inferred_type, rep.conversion = num.inferred_type, num.conversion
    rep.n_placeholders, rep.n_inf = num.n_placeholders, num.n_inf
    rep.n_unparsed, rep.unparsed_examples = num.n_unparsed, num.unparsed_examples
    rep.thousands = num.thousands
    return _finish(pd.Series(num.values.to_pandas(), name=name), rep)


def _text(name: str, arr: pa.ChunkedArray, rep: ColumnReport, identifier: bool = False):
    is_ph = pc.fill_null(pc.is_in(pc.utf8_lower(arr), value_set=_TEXT_PH), False)
    n_ph = _count(is_ph)
    if n_ph:
        arr = pc.if_else(is_ph, pa.scalar(None, pa.string()), arr)
    rep.inferred_type = "identifier" if identifier else "string"
    if identifier:
        rep.conversion = "digits kept as text (identifier: leading zeros or too long for a number)"
    rep.n_placeholders = arr.null_count
    return _finish(pd.Series(arr.to_pandas(), name=name), rep)


def _forced(name: str, arr: pa.ChunkedArray, opts: InferOptions, dtype: str, rep: ColumnReport):
    kind = DTYPE_ALIASES.get(dtype) or DTYPE_ALIASES.get(str(dtype).lower())
    if kind is None:
        raise DataLoadError(f"Unknown type {dtype!r} for column {name!r}; use one of: "
                            "string, category, integer, float, boolean, datetime.")
    if kind in ("string", "category"):
        s, rep = _text(name, arr, rep)
        rep.conversion = "kept as text (dtypes option)"
        return (s.astype("category"), rep) if kind == "category" else (s, rep)
    if kind in ("integer", "float"):
        num = parse_numbers(arr, decimal=opts.decimal, thousands=opts.thousands, force=True)
        s, rep = _numeric(name, num, rep)
        if kind == "integer":
            s = s.round().astype("Int64")
        return s, _retype(rep, kind, s)
    if kind == "boolean":
        lower = pc.utf8_lower(arr)
        mapped = pc.if_else(pc.is_in(lower, value_set=pa.array(TRUE_WORDS + ("1",))), True,
                            pc.if_else(pc.is_in(lower, value_set=pa.array(FALSE_WORDS + ("0",))), False,
                                       pa.scalar(None, pa.bool_())))
        s = pd.Series(pd.array(mapped.to_pylist(), dtype="boolean"), name=name)
        rep.n_unparsed = int(s.isna().sum()) - arr.null_count
        return s, _retype(rep, "boolean", s)
    dates = parse_dates(arr, _PH, dayfirst=opts.dayfirst, dayfirst_hint=opts.dayfirst_hint, force=True)
    s = dates.values.rename(name) if dates else pd.Series(pd.NaT, index=range(len(arr)), name=name)
    if dates:
        rep.n_unparsed, rep.unparsed_examples, rep.n_placeholders = (dates.n_unparsed, dates.unparsed_examples,
                                                                     dates.n_placeholders)
    return s, _retype(rep, "datetime", s)


def _retype(rep: ColumnReport, kind: str, s: pd.Series) -> ColumnReport:
    rep.inferred_type, rep.dtype = kind, str(s.dtype)
    rep.conversion = (rep.conversion + "; " if rep.conversion else "") + f"{kind} (dtypes option)"
    return rep


def _finish(s: pd.Series, rep: ColumnReport) -> tuple[pd.Series, ColumnReport]:
    rep.dtype = str(s.dtype)
    return s, rep


def _count(mask) -> int:
    return int(pc.sum(pc.cast(pc.fill_null(mask, False), pa.int64())).as_py() or 0)
