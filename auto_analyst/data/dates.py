"""Dates and timestamps written as text.

A column becomes datetime only when nearly all its cells are dates of one format: ISO
(with or without time), numeric day/month/year orders, or month names. Version strings
('6.10.1') and codes never qualify: a date needs a 4-digit year, a month name, or the
d/m/yy shape with slashes. Day-first or month-first is decided from the whole column.
"""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from auto_analyst.data.numbers import index_counts
from auto_analyst.data.textops import count_true

__all__ = ["DateResult", "parse_dates", "iso_text_dates", "SQLITE_ISO"]

_MONTHS = r"(?i:jan|feb|m[aä]r|apr|ma[iy]|jun|jul|aug|sep|o[ck]t|nov|de[cz]|janv|f[ée]v|avr|juil|ao[uû]t|d[ée]c)"
_ISO = r"^\d{4}-\d{1,2}(-\d{1,2}([ T]\d{1,2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?)?)?$"
_ISO_SLASH = r"^\d{4}/\d{1,2}/\d{1,2}([ T]\d{1,2}:\d{2}(:\d{2})?)?$"
# d/m/Y with / . or - (4-digit year), or d/m/yy with slashes only; optional time.
_DMY = (r"^(?P<a>\d{1,2})(?P<sep>[/.-])(?P<b>\d{1,2})[/.-](?P<year>\d{4}|\d{2})"
        r"(?:[ T]\d{1,2}:\d{2}(?::\d{2})?(?: ?[AaPp][Mm])?)?$")
_NAMED = r"^[\w ,./-]*" + _MONTHS + r"[\w ,./:-]*$"
_HAS_YEAR = r"(^|\D)(1[89]|20)\d{2}(\D|$)"
# Cells that may fail in a date column (typos, stray notes) before it stays text; as for numbers.
MIN_PARSED_SHARE = 0.95
SAMPLE = 2000


@dataclass
class DateResult:
    """A parsed date column and what it took."""

    values: pd.Series
    conversion: str
    n_placeholders: int
    n_unparsed: int
    unparsed_examples: list[str]
    note: str = ""


def parse_dates(arr: pa.ChunkedArray, placeholders: pa.Array, *, dayfirst: bool | None = None,
                dayfirst_hint: bool = False, force: bool = False) -> DateResult | None:
    """Parse a text column as dates, or return None when it is not a date column.

    Args:
        arr: trimmed text cells, blanks as null.
        placeholders: lower-case cells that mean missing.
        dayfirst: the user's choice for numeric dates (overrides the column's evidence).
        dayfirst_hint: order to assume when every day and month is ≤ 12 (True for files with a
            decimal comma or ';' delimiter, where day-first dates are the custom).
        force: the user asked for a datetime column; convert whatever parses.

    Returns:
        Timestamps (datetime64) with unparsed cells as NaT, or None.
    """
    # Every check below runs on the distinct cells (a million timestamps rarely have more than a
    # few thousand days); row counts come from how often each distinct cell occurs. The
    # dictionary keeps first-appearance order, so its first cells are the column's first dates.
    encoded = pc.dictionary_encode(arr.combine_chunks())
    uniq_arr = encoded.dictionary
    counts = index_counts(encoded.indices, len(uniq_arr))
    uniq_ph_arr = pc.fill_null(pc.is_in(pc.utf8_lower(uniq_arr), value_set=placeholders), False)
    uniq_ph_np = uniq_ph_arr.to_numpy(zero_copy_only=False)
    cand = pc.filter(uniq_arr, pc.invert(uniq_ph_arr))
    n_cand = int(counts[~uniq_ph_np].sum())
    if n_cand == 0:
        return None
    sample = cand.slice(0, SAMPLE)

    def share(pattern: str, values=sample) -> float:
        return _count(pc.match_substring_regex(values, pattern)) / max(1, len(values))

    note = ""
    if share(_ISO) >= MIN_PARSED_SHARE:
        fmt, kind = "ISO8601", "ISO date text"
    elif share(_ISO_SLASH) >= MIN_PARSED_SHARE:
        fmt, kind = "mixed", "date text (Y/M/D)"
    elif share(_DMY) >= MIN_PARSED_SHARE and _plausible_dmy(sample):
        first, second = _max_parts(cand)
        if dayfirst is None:
            if first > 12 >= second:
                dayfirst = True
            elif second > 12 >= first:
                dayfirst = False
            else:
                dayfirst = dayfirst_hint or _sep(sample) == "."
                note = (f"day and month are both ≤ 12 in every row: read as "
                        f"{'day-first' if dayfirst else 'month-first'}; pass dayfirst= to change")
        fmt = _common_format(sample, dayfirst) or "mixed"
        kind = f"{'day-first' if dayfirst else 'month-first'} date text"
    elif (share(_NAMED) >= MIN_PARSED_SHARE and share(_HAS_YEAR) >= MIN_PARSED_SHARE) or force:
        fmt = _common_format(sample, bool(dayfirst)) or "mixed"
        kind = "date text with month names" if share(_NAMED) >= MIN_PARSED_SHARE else "date text"
    else:
        return None
    uniq = pd.Series(uniq_arr.to_pandas(), copy=False)
    uniq_ph = pd.Series(uniq_ph_np, copy=False)
    kwargs = {"dayfirst": bool(dayfirst)} if fmt == "mixed" else {}
    try:
        parsed_u = pd.to_datetime(uniq.where(~uniq_ph), format=fmt, errors="coerce", **kwargs)
    except (ValueError, TypeError, OverflowError):
        return None
    if getattr(parsed_u.dt, "tz", None) is not None:
        parsed_u = parsed_u.dt.tz_convert("UTC").dt.tz_localize(None)
        note = (note + "; " if note else "") + "time zones converted to UTC"
    bad_u = (parsed_u.isna() & ~uniq_ph).to_numpy()
    n_bad = int(counts[bad_u].sum())
    if not force and n_bad > (1 - MIN_PARSED_SHARE) * n_cand:
        return None
    parsed = pd.Series(pc.take(pa.array(parsed_u.to_numpy()), encoded.indices).to_pandas(), copy=False)
    valid = parsed_u.dropna()
    has_time = bool((valid.dt.normalize() != valid).any())
    return DateResult(
        values=parsed, conversion=f"{kind} → {'timestamp' if has_time else 'date'}",
        n_placeholders=len(arr) - n_cand, n_unparsed=n_bad,
        unparsed_examples=[str(v) for v in uniq[bad_u].head(5)], note=note,
    )


def _count(mask) -> int:
    return count_true(mask)


def _parts(values) -> tuple[pa.ChunkedArray, pa.ChunkedArray, pa.ChunkedArray]:
    parts = pc.extract_regex(values, _DMY)
    return (pc.cast(pc.struct_field(parts, [0]), pa.int64()), pc.cast(pc.struct_field(parts, [2]), pa.int64()),
            pc.struct_field(parts, [3]))


def _plausible_dmy(sample) -> bool:
    """Reject codes such as '12-34-56': both leading parts within 1..31 and one of them ≤ 12."""
    matching = pc.filter(sample, pc.fill_null(pc.match_substring_regex(sample, _DMY), False))
    a, b, year = _parts(matching)
    ok = pc.and_(pc.and_(pc.greater_equal(a, 1), pc.less_equal(a, 31)),
                 pc.and_(pc.greater_equal(b, 1), pc.less_equal(b, 31)))
    ok = pc.and_(ok, pc.or_(pc.less_equal(a, 12), pc.less_equal(b, 12)))
    two_digit_dots = pc.and_(pc.equal(pc.utf8_length(year), 2),
                             pc.invert(pc.match_substring_regex(matching, r"^\d{1,2}/\d{1,2}/\d{2}\b")))
    return _count(ok) >= MIN_PARSED_SHARE * len(matching) and not _count(two_digit_dots)


def _max_parts(cand) -> tuple[int, int]:
    a, b, _ = _parts(cand)
    return int(pc.max(a).as_py() or 0), int(pc.max(b).as_py() or 0)


def _sep(sample) -> str:
    parts = pc.extract_regex(pc.filter(sample, pc.fill_null(pc.match_substring_regex(sample, _DMY), False)), _DMY)
    seps = pc.struct_field(parts, [1]).to_pylist()
    return max(set(seps), key=seps.count) if seps else "/"


def _common_format(sample, dayfirst: bool) -> str | None:
    """The strftime format most of the sample follows (pandas' own guesser), or None."""
    from pandas.tseries.api import guess_datetime_format

    counts: dict[str, int] = {}
    for v in sample.slice(0, 50).to_pylist():
        if v is not None and (fmt := guess_datetime_format(v, dayfirst=dayfirst)):
            counts[fmt] = counts.get(fmt, 0) + 1
    if not counts:
        return None
    fmt = max(counts, key=counts.get)
    ok = pd.to_datetime(pd.Series(sample.to_pylist()), format=fmt, errors="coerce").notna().mean()
    return fmt if ok >= MIN_PARSED_SHARE else None


SQLITE_ISO = r"^\d{4}-\d\d-\d\d(?:[ T]\d\d:\d\d(?::\d\d(?:\.\d+)?)?)?$"
"""Dates as SQLite's date functions read them (``strftime``, ``date``): zero-padded ISO text, no time zone."""


def iso_text_dates(frame: pd.DataFrame) -> tuple[pd.DataFrame, list[str]]:
    """A SQLite table's sample with its text columns of ISO dates as datetimes, and those columns' names.

    SQLite has no date type: ``pandas.to_sql`` and most tools store dates as ISO text, which its date functions
    read. A column whose every non-missing value is such a date (:data:`SQLITE_ISO`) is described as dates, so a
    question can group it by month; the SQL written for it uses SQLite's date functions on the text.
    """
    out, converted = frame, []
    for col in frame.columns:
        s = frame[col]
        if not (s.dtype == object or pd.api.types.is_string_dtype(s)):
            continue
        values = s.dropna()
        if not len(values) or not all(isinstance(v, str) for v in values) or \
                not values.str.fullmatch(SQLITE_ISO).all():
            continue
        if out is frame:
            out = frame.copy()
        out[col] = pd.to_datetime(s, format="ISO8601")
        converted.append(str(col))
    return out, converted
