"""Strip a user's column names and data values from text before it becomes a GLOBAL error-fix entry.

A global entry made from user A's failure is shown to every other user, so it must carry none of A's column
names or values. :func:`anonymize` replaces them by numbered placeholders (``<col1>``, ``<value1>``), numbered in
order of first appearance, so that the same failure on two datasets of the same shape yields the same text (and
so dedupes into one entry).
"""

from __future__ import annotations

import re
from collections.abc import Iterable

__all__ = ["anonymize"]

_PLACEHOLDER = re.compile(r"<(?:col|value)\d+>")
# A quote that opens/closes a literal is not glued to a word, so the apostrophe in "can't" is never one.
_QUOTED = re.compile(r"""(?<![\w'"])(?P<q>['"])(?P<body>(?:\\.|(?!(?P=q)).)*?)(?P=q)(?!\w)""")
# Numbers that look like data rather than code: >= 4 digits (ids, amounts, years) or a decimal with >= 3 digits.
# Smaller ones (axis=1, n=10, 0.05, (150, 4)) are usually parameters or shapes that explain the error.
_NUMBER = re.compile(r"(?<![\w.<])[-+]?(?:\d{4,}(?:\.\d+)?|\d+\.\d+)(?![\w.])")
# A literal given to a keyword argument (how='left', errors='coerce') is an API option, not data.
_KWARG_BEFORE = re.compile(r"(?<![=!<>])=\s*$")
# Option strings of pandas / numpy / sklearn APIs that may be passed positionally; kept because they explain
# the error and are nobody's data.
_API_WORDS = frozenset(
    ["mean", "sum", "count", "min", "max", "median", "std", "var", "first", "last", "size", "nunique", "mode", "prod", "cumsum", "any", "all", "float", "float32", "float64", "int", "int32", "int64", "str", "string", "object", "category", "bool", "boolean", "datetime64", "datetime64[ns]", "number", "coerce", "ignore", "raise", "left", "right", "inner", "outer", "cross", "index", "columns", "records", "split", "list", "dict", "me", "ms", "qe", "qs", "ye", "ys", "d", "w", "h", "min", "s", "ns", "utf-8", "latin-1", "cp1252", "auto", "linear", "nearest", "pearson", "spearman", "kendall", "ascending", "descending", "rows", "cols"]
)


def _boundary_pattern(term: str) -> str:
    body = re.escape(term)
    # \b fails next to non-word characters ("Unit Price ($)"); look-arounds express "not inside a word".
    left = r"(?<!\w)" if re.match(r"\w", term) else ""
    right = r"(?!\w)" if re.search(r"\w$", term) else ""
    return left + body + right


class _Numberer:
    """Gives each distinct text one placeholder, numbered per kind in order of first appearance."""

    def __init__(self) -> None:
        self.seen: dict[tuple[str, str], str] = {}
        self.counts: dict[str, int] = {"col": 0, "value": 0}

    def __call__(self, kind: str, text: str) -> str:
        key = (kind, text.casefold())
        if key not in self.seen:
            self.counts[kind] += 1
            self.seen[key] = f"<{kind}{self.counts[kind]}>"
        return self.seen[key]


def _clean_terms(items: Iterable[object], min_len: int) -> list[str]:
    out = {str(x).strip() for x in items if x is not None}
    return [t for t in out if len(t) >= min_len and not _PLACEHOLDER.fullmatch(t)]


def anonymize(text: str, column_names: list[str], values: list[str]) -> str:
    """Replace column names, data values, data-like quoted literals and data-like numbers by placeholders.

    Args:
        text: an error summary, correction or code snippet.
        column_names: the dataset's column names; every case-insensitive whole-word occurrence becomes
            ``<colN>``.
        values: data values seen by the failing run (e.g. the distinct values of the columns involved); every
            case-insensitive whole-word occurrence of a value of >= 2 characters becomes ``<valueN>``.
            Single characters are left alone: they identify nothing and matching them would shred ordinary
            words and code.

    Returns:
        The text with, in addition, quoted string literals (except keyword-argument options such as
        ``how='left'`` and common API words such as ``'mean'``) and data-like numbers (>= 4 digits, or
        decimals) replaced by ``<valueN>``. Column names take precedence over values when both match.
    """
    if not text:
        return text
    number = _Numberer()
    terms = [(t, "col") for t in _clean_terms(column_names, 1)]
    col_keys = {t.casefold() for t, _ in terms}
    terms += [(t, "value") for t in _clean_terms(values, 2) if t.casefold() not in col_keys]
    if terms:
        # Longest first so that "Unit Price" wins over "Price"; one pass so replacements are never re-matched.
        terms.sort(key=lambda tk: -len(tk[0]))
        kinds = {t.casefold(): k for t, k in terms}
        pattern = re.compile("|".join(_boundary_pattern(t) for t, _ in terms), re.IGNORECASE)
        text = pattern.sub(lambda m: number(kinds[m.group(0).casefold()], m.group(0)), text)

    def literal(m: re.Match[str]) -> str:
        body = m.group("body")
        if not body or _PLACEHOLDER.fullmatch(body) or body.casefold() in _API_WORDS:
            return m.group(0)
        if _KWARG_BEFORE.search(text[max(0, m.start() - 40) : m.start()]):
            return m.group(0)
        return m.group("q") + number("value", body) + m.group("q")

    text = _QUOTED.sub(literal, text)
    return _NUMBER.sub(lambda m: number("value", m.group(0)), text)
