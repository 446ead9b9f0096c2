"""Numbers written as text: thousands separators, currency, accounting negatives, percents.

Works on whole pyarrow string columns with vectorised ``pyarrow.compute`` kernels, so a
million-row column takes tens of milliseconds. Placeholders ('N/A', '-', '#DIV/0!', ...) and
'inf' become missing and are counted; cells that fit no number are counted as unparsed.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from auto_analyst.data.textops import (any_bytes, byte_table, contains_text, count_true, delete_ascii, map_ascii,
                                      min_length)

__all__ = ["PLACEHOLDERS", "TEXT_PLACEHOLDERS", "NumericResult", "column_decimal", "file_decimal", "index_counts",
           "parse_counted", "parse_numbers"]

# Cells meaning "no value" in a column that is otherwise numbers, dates or booleans. Collected
# from the spreadsheet error codes (Excel/LibreOffice) and the placeholders of the cases.
PLACEHOLDERS = frozenset({
    "", "-", "--", "---", "—", "–", ".", "?", "??", "n/a", "n/a.", "na", "n.a.", "n.a", "nan", "null", "none",
    "nil", "missing", "unknown", "tbd", "tba", "n/d", "nd", "(blank)", "blank", "empty", "not available",
    "#n/a", "#div/0!", "#value!", "#ref!", "#name?", "#num!", "#null!", "#error!", "#n/a!", "error",
})
# In text columns only unmistakable placeholders become missing ('NA' may be Namibia, 'None' a plan).
TEXT_PLACEHOLDERS = frozenset({"", "n/a", "#n/a", "nan", "null", "#div/0!", "#value!", "#ref!", "#name?",
                               "#num!", "#null!"})
INF_WORDS = ["inf", "+inf", "-inf", "infinity", "+infinity", "-infinity", "∞", "-∞", "#inf", "-#inf"]

_SYMBOLS = r"(?:US|R|C|A)?[$€£¥₹₽₩₺]"
_CODES = r"(?:CHF|EUR|USD|GBP|JPY|CAD|AUD|SEK|NOK|DKK|PLN|kr\.?|zł|Fr\.)"
_CURRENCY = f"(?:{_SYMBOLS}|{_CODES})"
_STRIP = r"[%()\s\x{00a0}\x{202f}']"
# The same characters for the regex-free path (RE2's \s is [\t\n\f\r ]).
_STRIP_ASCII = b"$%()'\t\n\f\r "
_STRIP_TABLE = byte_table(_STRIP_ASCII)
_STRIP_WIDE = ("€", "£", "¥", "₹", "₽", "₩", "₺", "\u00a0", "\u202f")
_LETTERS = byte_table(bytes(range(65, 91)) + bytes(range(97, 123)))
_NON_ASCII = byte_table(bytes(range(128, 256)))
_NULL = pa.scalar(None, pa.string())
_POINT = byte_table(b".eE")
_DIGITS = byte_table(b"0123456789")
_MARKS = byte_table(b".,")
_VALID = r"^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$"
# Evidence for the decimal mark of a column, on text already stripped of currency and spaces.
_COMMA_DEC = r"^[+-]?(\d{1,3}(\.\d{3})+,\d*|\d+,\d{1,2}|\d+,\d{4,}|0,\d+|\d{1,3}(\.\d{3}){2,})$"
_DOT_DEC = r"^[+-]?(\d{1,3}(,\d{3})+\.\d*|\d+\.\d{1,2}|\d+\.\d{4,}|0\.\d+|\d{1,3}(,\d{3}){2,})$"
# Below this share of parsed cells a column stays text; 95% tolerates a stray note in a
# column of numbers without turning a column of codes into numbers.
MIN_PARSED_SHARE = 0.95
_PH_ANY_CASE = pa.array(sorted({v for p in PLACEHOLDERS for v in (p, p.upper(), p.title())}) + [None], pa.string())
_INF_ANY_CASE = pa.array(sorted({v for p in INF_WORDS for v in (p, p.upper(), p.title())}), pa.string())
# Columns longer than this are dictionary-encoded first; when distinct cells are at most 30% of
# the rows, each distinct cell is parsed once (measured: 10x faster on a 1M-row rate column).
DICTIONARY_MIN_ROWS = 50_000
DICTIONARY_MAX_SHARE = 0.3
# Rows used for evidence that needs no full pass (decimal mark, currency in the conversion note).
HEAD_ROWS = 20_000


@dataclass
class NumericResult:
    """A parsed numeric column and what it took."""

    values: pa.ChunkedArray
    inferred_type: str  # integer or float
    conversion: str = ""
    n_placeholders: int = 0
    n_inf: int = 0
    n_unparsed: int = 0
    unparsed_examples: list[str] = field(default_factory=list)
    decimal: str = "."
    thousands: str = ""


def _count(mask) -> int:
    return count_true(mask)


def column_decimal(clean: pa.ChunkedArray) -> str | None:
    """The decimal mark this column's own cells prove (',' or '.'), or None when they don't tell."""
    comma = _count(pc.fill_null(pc.match_substring_regex(clean, _COMMA_DEC), False))
    dot = _count(pc.fill_null(pc.match_substring_regex(clean, _DOT_DEC), False))
    if comma == dot:
        return None
    return "," if comma > dot else "."


def file_decimal(columns: list[pa.ChunkedArray], delimiter: str) -> str:
    """The decimal mark of a file: the majority of columns with evidence; ',' only with evidence.

    Args:
        columns: trimmed text columns (a sample of rows is enough).
        delimiter: the field delimiter; with ',' a decimal comma needs quoting, so '.' is the default.
    """
    # A column without a digit or without a point/comma has no evidence: skip its strip and regexes.
    votes = [column_decimal(_strip(c)) if any_bytes(c, _DIGITS) is not False and any_bytes(c, _MARKS) is not False
             else None for c in columns]
    comma, dot = votes.count(","), votes.count(".")
    if comma > dot or (comma and delimiter != ","):
        return ","
    return "."


def _strip(arr: pa.ChunkedArray) -> pa.ChunkedArray:
    """Drop currency symbols and codes, %, parentheses, spaces and apostrophes ('-€ 1.234,50' → '-1.234,50')."""
    if any_bytes(arr, _LETTERS) is False:
        # Without letters there is no 'US$' prefix and no currency code, so every match of the
        # regexes below is one character: deleting the characters kind by kind gives the same
        # text, ten times faster than a regex replace on a million cells.
        if any_bytes(arr, _NON_ASCII):
            for ch in _STRIP_WIDE:
                if contains_text(arr, ch) is not False:
                    arr = pc.replace_substring(arr, ch, "")
        # Currency, parentheses and percent signs sit at the ends of a cell: trimming them is one
        # cheap pass, and the same as deleting them when none is left inside a cell.
        arr = pc.ascii_trim(arr, characters=_STRIP_ASCII.decode())
        if any_bytes(arr, _STRIP_TABLE) is False:
            return arr
        out = delete_ascii(arr, _STRIP_ASCII)
        if out is not None:
            return out
    t = pc.replace_substring_regex(arr, _SYMBOLS + "|" + _STRIP, "")
    if not _count(pc.fill_null(pc.match_substring_regex(t, "[A-Za-zł]"), False)):
        return t
    return pc.replace_substring_regex(t, "^([+-]?)" + _CODES + "|" + _CODES + "$", "\\1")


def parse_numbers(arr: pa.ChunkedArray, *, decimal: str = ".", thousands: str | None = None,
                  force: bool = False) -> NumericResult | None:
    """Parse a text column as numbers, or return None when it is not a numeric column.

    Args:
        arr: trimmed text cells, blanks as null.
        decimal: the decimal mark to use when the column's own cells don't prove one
            (see :func:`column_decimal`); pass ``force=True`` to impose it.
        thousands: thousands separator imposed by the user; default: ',' or '.' (whichever is not
            the decimal mark), spaces and apostrophes, only where they group digits by three.
        force: the user asked for a number type: convert whatever parses, however few.

    Returns:
        The parsed column (float64, or int64 when every value is a whole number without a
        decimal mark and nothing is missing), or None if fewer than 95% of the non-placeholder
        cells are numbers (MIN_PARSED_SHARE).
    """
    head = arr.slice(0, HEAD_ROWS)
    # Encoding a million distinct amounts costs a third of a second for nothing: the first rows
    # tell whether the column repeats itself enough to try (the full ratio is still checked).
    if len(arr) > DICTIONARY_MIN_ROWS and len(pc.unique(head)) <= DICTIONARY_MAX_SHARE * len(head):
        encoded = pc.dictionary_encode(arr.combine_chunks(), null_encoding="encode")
        if len(encoded.dictionary) <= DICTIONARY_MAX_SHARE * len(arr):
            # Few distinct cells (codes, rates, prices): parse each once, then spread by index.
            weights = pa.array(index_counts(encoded.indices, len(encoded.dictionary)), pa.int64())
            res = _parse(pa.chunked_array([encoded.dictionary]), decimal, thousands, force, weights)
            if res is not None:
                res.values = pc.take(res.values, encoded.indices)
            return res
    return _parse(arr, decimal, thousands, force, None)


def parse_counted(values: list[str | None], counts: list[int], *, decimal: str = ".",
                  thousands: str | None = None) -> NumericResult | None:
    """:func:`parse_numbers` of a column holding ``values[i]`` ``counts[i]`` times (trimmed, blanks as None): the
    reader's own path for a column of few distinct cells, so the verdict is the one a file of those cells gets.

    Returns:
        None when the reader would not read the column as numbers; else the result, ``values`` one per distinct
        cell (null: a placeholder, 'inf' or a cell that fits no number).
    """
    return _parse(pa.chunked_array([pa.array(values, pa.string())]), decimal, thousands, False,
                  pa.array(counts, pa.int64()))


def index_counts(indices: pa.Array, size: int) -> np.ndarray:
    """How often each dictionary index occurs (pyarrow's value_counts; numpy conversion of the indices is slow)."""
    vc = pc.value_counts(indices)
    if vc.field("values").null_count:  # null cells (dictionary_encode's default) have no index to count
        vc = vc.filter(vc.field("values").is_valid())
    counts = np.zeros(size, np.int64)
    counts[vc.field("values").to_numpy(zero_copy_only=False)] = vc.field("counts").to_numpy(zero_copy_only=False)
    return counts


def _parse(arr: pa.ChunkedArray, decimal: str, thousands: str | None, force: bool,
           weights: pa.Array | None) -> NumericResult | None:
    """The parser; with ``weights`` each cell of ``arr`` stands for that many rows."""
    def count(mask) -> int:
        mask = pc.fill_null(mask, False)
        if weights is None:
            return _count(mask)
        return int(pc.sum(pc.if_else(mask, weights, 0)).as_py() or 0)

    total = count(pa.chunked_array([pa.array(np.ones(len(arr), bool))])) if weights is not None else len(arr)
    if _no_words(arr):
        # Every placeholder or 'inf' spelling has a letter, a non-ASCII byte or at most 3 bytes:
        # a column without any of them has none, and only its blanks are placeholders.
        candidate, n_inf = pc.is_valid(arr), 0
    else:
        is_ph = pc.is_in(arr, value_set=_PH_ANY_CASE)  # null (blank) counts as a placeholder
        is_inf = pc.fill_null(pc.is_in(arr, value_set=_INF_ANY_CASE), False)
        candidate, n_inf = pc.and_not(pc.invert(is_ph), is_inf), count(is_inf)
    n_cand = count(candidate)
    if n_cand == 0 and not force:
        return None
    head = arr.slice(0, HEAD_ROWS)
    if n_cand and not force and not _count(pc.fill_null(pc.match_substring_regex(head, r"\d"), False)):
        return None

    if _count(candidate) < len(arr) - arr.null_count:
        # Placeholder and 'inf' cells become null here so that the byte-level fast paths below
        # see numbers only ('N/A' has letters); they are never parsed anyway.
        arr_c = pc.if_else(candidate, arr, _NULL)
    else:
        arr_c = arr
    # Masks are None when the byte scan proves no cell has the character (no kernel pass at all).
    pct = _mask(arr_c, b"%", lambda: pc.match_substring(arr_c, "%"))
    paren = _mask(arr_c, b"(", lambda: pc.and_(pc.starts_with(arr_c, "("), pc.ends_with(arr_c, ")")))
    clean = _strip(arr_c)
    trailing_minus = _mask(clean, b"-", lambda: pc.ends_with(clean, "-"))
    if trailing_minus is not None and _count(trailing_minus):
        trailing_minus = pc.fill_null(pc.match_substring_regex(clean, r"^\d[\d.,]*-$"), False)
        clean = pc.replace_substring_regex(clean, r"^(\d[\d.,]*)-$", "-\\1")
    if not force:
        decimal = column_decimal(clean.slice(0, HEAD_ROWS) if weights is None else clean) or decimal
    seps = "." if decimal == "," else ","
    if thousands is not None and thousands not in (" ", "'", "\u00a0"):
        seps = thousands
    sep_byte = seps.encode("utf-8") if len(seps.encode("utf-8")) == 1 else b""  # b"": always the kernel
    norm, has_group = clean, _mask(clean, sep_byte, lambda: pc.match_substring(clean, seps))
    n_with_sep = _count(has_group) if has_group is not None else 0
    if n_with_sep:
        grouped = rf"^[+-]?\d{{1,3}}(\{seps}\d{{3}})+(\{decimal}\d*)?$"
        has_group = pc.fill_null(pc.match_substring_regex(clean, grouped), False)
        if _count(has_group) == n_with_sep:
            norm = pc.replace_substring(clean, seps, "")  # every cell with the separator groups digits
        else:
            norm = pc.if_else(has_group, pc.replace_substring(clean, seps, ""), clean)
    if decimal == ",":
        norm = map_ascii(norm, b",", b".") or pc.replace_substring(norm, ",", ".")
    try:  # the common case, every candidate a number: one C++ cast, no regex pass
        values = pc.cast(norm, pa.float64())  # non-candidates are null in norm already
        valid = candidate
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        valid = pc.and_(candidate, pc.fill_null(pc.match_substring_regex(norm, _VALID), False))
        values = pc.cast(pc.if_else(valid, norm, _NULL), pa.float64())
    n_valid = count(valid)
    unparsed = pc.and_not(candidate, valid)
    n_unparsed = count(unparsed)
    if not force and (n_valid == 0 or n_unparsed > max(0 if n_cand < 10 else 1, (1 - MIN_PARSED_SHARE) * n_cand)):
        return None

    negative = pc.or_(paren, trailing_minus) if paren is not None and trailing_minus is not None \
        else (paren if paren is not None else trailing_minus)
    if negative is not None and _count(negative):
        values = pc.if_else(negative, pc.negate(values), values)
    n_pct = count(pc.and_(valid, pct)) if pct is not None else 0
    if n_pct:
        values = pc.if_else(pct, pc.divide(values, 100.0), values)
    # Only whether some valid cell has a point or exponent matters (integer or float). When every
    # candidate parsed, the cells of norm are exactly the valid ones: a byte scan answers.
    found = any_bytes(norm, _POINT, exact=True) if valid is candidate else None
    if found is not None:
        has_point = int(found)
    else:
        point = _mask(norm, b".eE", lambda: pc.or_(pc.match_substring(norm, "."),
                                                    pc.match_substring(norm, "e", ignore_case=True)))
        has_point = count(pc.and_(valid, point)) if point is not None else 0
    integral = not has_point and not n_pct
    inferred = "integer" if integral else "float"
    if integral and n_valid == total:
        values = pc.cast(values, pa.int64())
    examples = pc.unique(pc.filter(arr, unparsed)).slice(0, 5).to_pylist() if n_unparsed else []
    n_grouped = count(pc.and_(valid, has_group)) if has_group is not None else 0
    n_currency = _count(pc.fill_null(pc.match_substring_regex(head, _CURRENCY), False))
    n_negative = sum(count(pc.and_(valid, m)) for m in (paren, trailing_minus) if m is not None)
    return NumericResult(
        values=values, inferred_type=inferred,
        conversion=_conversion(n_currency, n_negative, n_pct, n_grouped, decimal == "," and has_point > 0, inferred),
        n_placeholders=total - n_cand - n_inf, n_inf=n_inf, n_unparsed=n_unparsed,
        unparsed_examples=[str(e) for e in examples], decimal=decimal, thousands=seps if n_grouped else "",
    )


_SHORTEST_WORDLESS = 1 + max(len(p.encode()) for p in PLACEHOLDERS | set(INF_WORDS)
                             if p.isascii() and not any(c.isalpha() for c in p))


def _no_words(arr: pa.ChunkedArray) -> bool:
    """True when no cell can be a placeholder or an 'inf' word: no letters, no non-ASCII byte, and
    every cell longer than the symbol placeholders ('-', '--', '???')."""
    if any_bytes(arr, _LETTERS) is not False or any_bytes(arr, _NON_ASCII) is not False:
        return False
    shortest = min_length(arr)
    return shortest is None or shortest >= _SHORTEST_WORDLESS


def _mask(arr: pa.ChunkedArray, chars: bytes, make) -> pa.ChunkedArray | None:
    """``make()`` as a mask with nulls false, or None when a byte scan proves no cell has any of ``chars``."""
    if chars and any_bytes(arr, byte_table(chars)) is False:
        return None
    return pc.fill_null(make(), False)


def _conversion(n_currency: int, n_paren: int, n_pct: int, n_grouped: int, dec_comma: bool, kind: str) -> str:
    what = []
    if n_currency:
        what.append("currency text")
    if n_paren:
        what.append(f"accounting negatives '(…)' ({n_paren})")
    if n_pct:
        what.append(f"percent text ({n_pct} cells with % ÷ 100)")
    if n_grouped:
        what.append("thousands separators")
    if dec_comma:
        what.append("decimal comma")
    return f"{', '.join(what)} → {kind}" if what else ""
