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

from auto_analyst.data.converted import FALSE_WORDS, TRUE_WORDS, describe_converted, spellings
from auto_analyst.data.dates import parse_dates
from auto_analyst.data.numbers import PLACEHOLDERS, TEXT_PLACEHOLDERS, parse_numbers
from auto_analyst.data.report import ColumnReport
from auto_analyst.data.textops import count_true, int_text_shape, min_length, normalize
from auto_analyst.errors import DataLoadError

__all__ = ["InferOptions", "infer_column", "DTYPE_ALIASES"]

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
_NULL = pa.scalar(None, pa.string())


# A text cell is a placeholder when its lower case is one of TEXT_PLACEHOLDERS; matching every
# spelling directly saves lower-casing a million cells.
_TEXT_PH_FORMS = pa.array(sorted({f for p in TEXT_PLACEHOLDERS for f in spellings(p)}), pa.string())
_TEXT_PH_MAX_BYTES = max(len(f.encode("utf-8")) for f in _TEXT_PH_FORMS.to_pylist())
_PH_ANY_CASE = pa.array(sorted({v for p in PLACEHOLDERS for v in (p, p.upper(), p.title())}) + [None], pa.string())
# Cells on which a large column's type is decided before the whole column is converted; 5,000
# cells take a millisecond or two per column, and the whole-column conversion re-checks what
# matters (every cell must still parse, leading zeros still make an identifier).
SAMPLE_ROWS = 5_000


@dataclass
class InferOptions:
    """File-level choices that apply to every column (user options or file-level guesses)."""

    decimal: str = "."
    decimal_forced: bool = False
    decimal_sampled: bool = False  # the reader's sample decided ``decimal`` already
    thousands: str | None = None
    dayfirst: bool | None = None
    dayfirst_hint: bool = False


def infer_column(name: str, raw: pa.ChunkedArray, opts: InferOptions,
                 dtype: str | None = None, *, normalized: bool = False) -> tuple[pd.Series, ColumnReport]:
    """Convert one text column to its best type.

    Args:
        name: column name (used for identifier hints such as 'zip' or 'account').
        raw: the cells as text (null for empty cells), untrimmed.
        opts: file-level decimal mark, thousands separator and day-first choice.
        dtype: the user's type for this column (see ``DTYPE_ALIASES``); skips inference.
        normalized: ``raw`` is already trimmed with blanks as null (``textops.normalize``).

    Returns:
        (the pandas column, its report; ``original`` is left for the caller to fill).

    Raises:
        DataLoadError: ``dtype`` is not a known type name.
    """
    arr = raw if normalized else normalize(raw)
    rep = ColumnReport(name=name)
    if not pa.types.is_string(arr.type):
        return describe_converted(name, arr, rep)
    if dtype is not None:
        return _forced(name, arr, opts, dtype, rep)
    if len(arr) > SAMPLE_ROWS:
        return _infer_large(name, arr, opts, rep)
    return _infer(name, arr, opts, rep)


def _infer(name: str, arr: pa.ChunkedArray, opts: InferOptions, rep: ColumnReport) -> tuple[pd.Series, ColumnReport]:
    """Full inference (every check on every cell)."""
    if arr.null_count == len(arr):
        rep.inferred_type, rep.conversion = "empty", "no values"
        return _finish(pd.Series(arr.to_pandas(), name=name), rep)
    lower = pc.utf8_lower(arr)
    values = pc.filter(arr, pc.invert(pc.is_in(lower, value_set=_PH)))
    if len(values) and _is_identifier(name, values):
        return _text(name, arr, rep, identifier=True)
    boolean = _booleans(arr)
    if boolean is not None:
        rep.inferred_type, rep.conversion = "boolean", "yes/no text → boolean"
        rep.n_placeholders = int(boolean.isna().sum())
        return _finish(boolean.rename(name), rep)
    num = parse_numbers(arr, decimal=opts.decimal, thousands=opts.thousands)
    if num is not None:
        return _numeric(name, num, rep)
    dates = parse_dates(arr, _PH, dayfirst=opts.dayfirst, dayfirst_hint=opts.dayfirst_hint)
    if dates is not None:
        return _dates(name, dates, rep)
    return _text(name, arr, rep)


def _dates(name: str, dates, rep: ColumnReport) -> tuple[pd.Series, ColumnReport]:
    rep.inferred_type, rep.conversion, rep.note = "datetime", dates.conversion, dates.note
    rep.n_placeholders, rep.n_unparsed = dates.n_placeholders, dates.n_unparsed
    rep.unparsed_examples = dates.unparsed_examples
    return _finish(dates.values.rename(name), rep)


def _infer_large(name: str, arr: pa.ChunkedArray, opts: InferOptions,
                 rep: ColumnReport) -> tuple[pd.Series, ColumnReport]:
    """Decide the type on the first rows, then convert the whole column by the cheapest sound path.

    Plain numbers are cast in C++ (after placeholders become null); a cast that fails, or any
    formatted numbers, take the full parser, which re-applies every rule to the whole column.
    """
    if arr.null_count == len(arr):
        return _infer(name, arr, opts, rep)  # no value at all: 'empty', whatever its length
    _, guess = _infer(name, _sample(arr), opts, ColumnReport(name=name))
    kind = guess.inferred_type
    if kind in ("integer", "float") and not guess.conversion:
        fast = _plain_numbers(arr, kind, rep)
        if fast is not None:
            return _finish(pd.Series(fast.to_pandas(), name=name), rep)
    if kind in ("integer", "float"):
        num = parse_numbers(arr, decimal=opts.decimal, thousands=opts.thousands)
        if num is not None and not (num.inferred_type == "integer" and _is_identifier(name, _nonnull(arr))):
            return _numeric(name, num, rep)
    elif kind == "boolean":
        boolean = _booleans(arr)
        if boolean is not None:
            rep.inferred_type, rep.conversion = "boolean", "yes/no text → boolean"
            rep.n_placeholders = int(boolean.isna().sum())
            return _finish(boolean.rename(name), rep)
    elif kind == "datetime":
        dates = parse_dates(arr, _PH, dayfirst=opts.dayfirst, dayfirst_hint=opts.dayfirst_hint)
        if dates is not None:
            return _dates(name, dates, rep)
    return _text(name, arr, rep, identifier=kind == "identifier")


def _sample(arr: pa.ChunkedArray) -> pa.ChunkedArray:
    """The first ``SAMPLE_ROWS`` cells with a value (a sparse column's first rows may all be blank)."""
    head = arr.slice(0, SAMPLE_ROWS)
    if len(head) - head.null_count >= SAMPLE_ROWS // 2 or not arr.null_count:
        return head
    return pc.drop_null(arr).slice(0, SAMPLE_ROWS)


def _plain_numbers(arr: pa.ChunkedArray, kind: str, rep: ColumnReport) -> pa.ChunkedArray | None:
    """Cast plain number text; None when any cell needs the full parser (or has a leading zero)."""
    # First a direct cast: it succeeds when no cell is a placeholder (blanks are null already), so
    # the placeholder lookup is needed only when it fails. 'nan' casts to NaN but is a placeholder.
    values = _cast(arr, pa.int64() if kind == "integer" else pa.float64())
    if values is not None and kind == "float" and _count(pc.is_nan(values)):
        values = None
    shape = int_text_shape(arr) if values is not None and kind == "integer" else None
    if shape is not None:
        # Every cell cast to int64, so each is digits with an optional sign: a leading zero or
        # more digits than a float64 holds exactly makes the full parser decide (identifier).
        leading_zero, longest = shape
        if leading_zero or longest > MAX_NUMERIC_DIGITS:
            return None
    cells = arr if values is not None else pc.if_else(pc.is_in(arr, value_set=_PH_ANY_CASE), _NULL, arr)
    if shape is None and kind == "integer" and _count(pc.starts_with(cells, "0")):
        leading_zero = pc.and_(pc.starts_with(cells, "0"), pc.greater(pc.utf8_length(cells), 1))
        if _count(pc.and_(leading_zero, pc.invert(pc.match_substring(cells, ".")))):
            return None
    if values is None:
        values = _cast(cells, pa.int64() if kind == "integer" else pa.float64())
        if values is None:
            values, kind = _cast(cells, pa.float64()), "float"
            if values is None:
                return None
    if kind == "float":
        is_inf = pc.fill_null(pc.is_inf(values), False)
        rep.n_inf = _count(is_inf)
        if rep.n_inf:
            values = pc.if_else(is_inf, pa.scalar(None, pa.float64()), values)
    rep.inferred_type, rep.n_placeholders = kind, cells.null_count
    if kind == "integer" and values.null_count:
        values = pc.cast(values, pa.float64())
    return values


def _cast(arr: pa.ChunkedArray, to: pa.DataType) -> pa.ChunkedArray | None:
    try:
        return pc.cast(arr, to)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        return None


def _nonnull(arr: pa.ChunkedArray) -> pa.ChunkedArray:
    return pc.drop_null(pc.if_else(pc.is_in(arr, value_set=_PH_ANY_CASE), pa.scalar(None, pa.string()), arr))


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


def _booleans(arr: pa.ChunkedArray) -> pd.Series | None:
    """Yes/no text as booleans (null for placeholders), or None; decided and mapped on the distinct cells."""
    encoded = pc.dictionary_encode(arr.combine_chunks())
    words = pc.utf8_lower(encoded.dictionary)
    present = set(words.to_pylist()) - {None}
    present -= PLACEHOLDERS - set(FALSE_WORDS)
    if not present or not present <= set(TRUE_WORDS + FALSE_WORDS):
        return None
    if not present & set(TRUE_WORDS) or not present & set(FALSE_WORDS):
        return None  # one answer only: nothing proves this is yes/no rather than a code
    meaning = pc.if_else(pc.is_in(words, value_set=pa.array(TRUE_WORDS)), True,
                         pc.if_else(pc.is_in(words, value_set=pa.array(FALSE_WORDS)), False,
                                    pa.scalar(None, pa.bool_())))
    mapped = pc.take(meaning, encoded.indices)  # blank cells have a null index: null
    out = pd.Series(mapped.to_pandas(types_mapper={pa.bool_(): pd.BooleanDtype()}.get))
    return out.astype(bool) if not out.isna().any() else out


def _numeric(name: str, num, rep: ColumnReport) -> tuple[pd.Series, ColumnReport]:
    rep.inferred_type, rep.conversion = num.inferred_type, num.conversion
    rep.n_placeholders, rep.n_inf = num.n_placeholders, num.n_inf
    rep.n_unparsed, rep.unparsed_examples = num.n_unparsed, num.unparsed_examples
    rep.thousands = num.thousands
    return _finish(pd.Series(num.values.to_pandas(), name=name), rep)


def _text(name: str, arr: pa.ChunkedArray, rep: ColumnReport, identifier: bool = False):
    # A cell longer than every placeholder spelling cannot be one (a byte-length check, no pass).
    short = min_length(arr)
    is_ph = pc.is_in(arr, value_set=_TEXT_PH_FORMS) if short is None or short <= _TEXT_PH_MAX_BYTES else None
    n_ph = _count(is_ph) if is_ph is not None else 0
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
        s = s.round().astype("Int64") if kind == "integer" else s.astype("float64")
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
    return count_true(mask)
