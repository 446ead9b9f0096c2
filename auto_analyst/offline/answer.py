"""The offline answer writer: plain sentences built from the tables and values the script showed."""

from __future__ import annotations

import math
import re
from typing import Any

__all__ = ["fmt", "shown", "write_answer"]

LIST_ROWS = 15

P_VALUE = re.compile(r"\bp[ -]?values?\b|\bp>\|", re.I)
"""A label naming a p-value: 'p-value', 'p-value of that correlation', a column 'p-value' or statsmodels' 'P>|t|'."""


def fmt(v: Any, digits: int | None = None) -> str:
    """A number as the answer shows it: integers as is, floats with up to 4 decimals (or ``digits``)."""
    if isinstance(v, bool) or v is None:
        return str(v)
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        if math.isnan(v):
            return "missing"
        if v.is_integer() and abs(v) < 1e15:
            return str(int(v))
        if digits is None and 0 < abs(v) < 1e-4:
            return f"{v:.3g}"  # a tiny p-value is not 0
        d = 4 if digits is None else digits
        s = f"{v:.{d}f}"
        return s.rstrip("0").rstrip(".") if "." in s else s
    return str(v)


def shown(label: Any, v: Any, digits: int | None = None, rounded: int | None = None) -> str:
    """``v`` as the answer's prose shows it beside ``label`` (its name, or its column and row): :func:`fmt`, except a
    p-value too small for the digits shown, which reads ``< 0.001`` (``< 0.0001`` at 4 digits), never ``0``: a test's
    p-value is not 0 (a float underflows to 0.0 below about 1e-308), and 0 reads as certainty. Only the text changes;
    the ``@name[...]`` lines (:func:`format_lines`) keep :func:`fmt`, compared exactly by the benchmarks.

    ``rounded`` is the decimals the question asked (:func:`~auto_analyst.offline.reader.conditions.asked_rounding`),
    to which the script already rounded its values: a 0 there hides anything below half its last digit, so the bound
    is never tighter than those decimals (0.0752 asked to 1 decimal is ``< 0.1``, never ``< 0.001``). Asked to a whole
    number, the bound ``< 1`` would say nothing of a p-value, so it shows the value as asked, marked as rounded; the
    test's conclusion gives it unrounded.

    Example:
        >>> shown("p-value", 0.0), shown("p-value", 2.4e-15), shown("p-value", 0.00004, 4), shown("mean", 0.0)
        ('< 0.001', '2.4e-15', '< 0.0001', '0')
        >>> shown("p-value", 0.0, rounded=1), shown("p-value", 0.0, rounded=0)
        ('< 0.1', '0 (rounded to a whole number as asked)')
    """
    text = fmt(v, digits)
    if (isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) and v >= 0
            and P_VALUE.search(str(label)) and float(text) == 0):
        d = 3 if digits is None else digits
        d = d if rounded is None else min(d, rounded)
        return f"< {10.0 ** -d:.{d}f}" if d > 0 else f"{text} (rounded to a whole number as asked)"
    return text


def format_lines(names: list[str], tables: list[dict], digits: int | None, format_text: str = "") -> str:
    """'@name[value]' lines for the names a question's answer format asks for ('' when none are asked).

    A name asking for a normality decision gets the format's own word for the shown decision (``format_text`` is the
    question with its format text). A name with no clear value gets a sentence saying so instead of a guess.
    """
    if not names:
        return ""
    from auto_analyst.offline.answer_format import (NORMAL_AT_ALPHA, decision_options, match_names, relationship_options,
                                                    relationship_word)
    from auto_analyst.offline.reader.constraints import relationship_rule

    scalars = {t["name"]: t["rows"][0][0] for t in tables if t.get("columns") == ["value"] and t.get("rows")}
    decided: dict[str, str] = {}
    if isinstance(scalars.get(NORMAL_AT_ALPHA), bool):
        for n in names:
            options = decision_options(format_text, n)
            if options:
                decided[n] = options[0] if scalars[NORMAL_AT_ALPHA] else options[1]
    rule = relationship_rule(format_text)
    r_name = next((k for k in scalars if "correlation of" in k and isinstance(scalars[k], (int, float))), None)
    p_value = scalars.get("p-value of that correlation")
    if rule and r_name and isinstance(p_value, (int, float)):
        for n in names:
            options = relationship_options(format_text, n)
            if options and n not in decided:
                decided[n] = relationship_word(options, float(scalars[r_name]), float(p_value), *rule)
    asked = [n for n in names if n not in decided]
    mapping = match_names(asked, list(scalars)) or {}
    if len(mapping) < len(asked):
        # values in grouped results: 'mean Fare Child' is the mean Fare of the row 'Child'
        cells = dict(scalars)
        for t in tables:
            cols, rows = t.get("columns", []), t.get("rows", [])
            if len(cols) >= 2 and cols != ["value"] and len(rows) <= 50 and "(first rows)" not in t.get("name", ""):
                for r in rows:
                    for c, v in zip(cols[1:], r[1:]):
                        cells[f"{c} {r[0]}"] = v
        mapping = match_names(asked, list(cells)) or {}
        scalars = cells
    lines = [f"@{n}[{decided[n]}]" if n in decided else f"@{n}[{fmt(scalars[mapping[n]], _digits_for(format_text, n, digits))}]"
             for n in names if n in mapping or n in decided]
    missing = [n for n in names if n not in mapping and n not in decided]
    if missing:
        lines.append(f"(No value matched {', '.join(missing)}.)")
    return "\n".join(lines) + "\n\n"


def _digits_for(fmt_text: str, name: str, digits: int | None) -> int | None:
    """The rounding the format states for ``name``'s own placeholder ('"p_value" is a number ..., rounded to four
    decimal places'), else ``digits`` (the question's one rounding)."""
    from auto_analyst.question_text import ROUNDING, WORDS

    m = re.search(rf"@{re.escape(name)}\[([^\]]*)\]", fmt_text)
    holder = m.group(1).strip().strip("\"'") if m else ""
    if not holder:
        return digits
    d = re.search(rf"[\"']{re.escape(holder)}[\"']\s+(?:is|are)\b([^@]*?)(?=\bwhere\b|[\"'][\w ]+[\"']\s+(?:is|are)\b|$)",
                  fmt_text[m.end():], re.S)
    r = ROUNDING.search(d.group(1)) if d else None
    return int(WORDS.get(r.group(1).lower(), r.group(1))) if r else digits


def _sentence_case(s: str) -> str:
    return s[:1].upper() + s[1:] if s else s


def _table_text(t: dict, digits: int | None, rounded: int | None = None) -> str:
    name, cols, rows, n = t.get("name", ""), t.get("columns", []), t.get("rows", []), t.get("n_rows", 0)
    if cols == ["value"] and n == 1 and rows and rows[0][0] is None:
        # a statistic of rows whose values are all missing: there is no figure, never the word 'None'
        return f"**{_sentence_case(name)}**: no value (every value of those rows is missing)."
    if cols == ["value"] and n == 1 and rows:
        return f"**{_sentence_case(name)}**: {shown(name, rows[0][0], digits, rounded)}."
    if "(first rows)" in name:
        return f"**{_sentence_case(name.replace(' (first rows)', ''))}**: added; its first rows are in the table below."
    if not rows:
        return f"**{_sentence_case(name)}**: no rows."
    if n <= 3 and len(cols) > 4:
        # a few wide rows (e.g. summary statistics of one column): one line per row, each value labelled
        lines = [f"- {fmt(r[0], digits)}: " + ", ".join(f"{c} {shown(f'{c} {r[0]}', x, digits, rounded)}"
                                                         for c, x in zip(cols[1:], r[1:]) if x is not None) for r in rows]
        return f"**{_sentence_case(name)}**:\n" + "\n".join(lines)
    if n <= LIST_ROWS and len(cols) <= 4:
        head = f"**{_sentence_case(name)}**"
        if len(cols) >= 2:
            head += f" ({', '.join(cols[1:])})" if len(cols) > 2 else ""
        lines = [f"- {fmt(r[0], digits)}: " + ", ".join(shown(f"{cols[i] if i < len(cols) else ''} {r[0]}", x, digits, rounded)
                                                         for i, x in enumerate(r[1:], 1)) for r in rows]
        return head + ":\n" + "\n".join(lines)
    return (f"**{_sentence_case(name)}**: a table of {n} rows with columns "
            f"{', '.join(cols[:8])}{', ...' if len(cols) > 8 else ''}; see the table below.")


EXPLAIN = {
    "pearson correlation": "A correlation runs from -1 to 1: near 0 means no straight-line relationship, near ±1 a "
                           "strong one.",
    "standard deviation": "The standard deviation measures how far values typically are from the mean.",
    "median": "The median is the middle value: half the rows are below it, half above.",
    "summary statistics": "25%, 50% and 75% are the quartiles: the values below which a quarter, half and three "
                          "quarters of the rows fall.",
}


def write_answer(tables: list[dict], figures: list[dict], assumptions: list[str], unanswered: str,
                 stdout: str = "", digits: int | None = None, brief: bool = False, beginner: bool = False,
                 rounded: int | None = None) -> str:
    """Compose the answer: one line per shown value or table, charts, assumptions, unanswered parts.

    ``rounded`` is the decimals the question asked its values rounded to (see :func:`shown`), None when it asks none.

    ``brief`` keeps the headline values only (a single value per part, no supporting tables when a
    value was shown); ``beginner`` adds a plain-words sentence for the statistics used.
    """
    if brief and any(t.get("columns") == ["value"] for t in tables):
        tables = [t for t in tables if t.get("columns") == ["value"]]
    lines = [_table_text(t, digits, rounded) for t in tables]
    if beginner:
        names = " ".join(t.get("name", "").lower() for t in tables)
        lines += [text for key, text in EXPLAIN.items() if key in names]
    for f in figures:
        lines.append(f"Chart: *{f.get('title') or 'figure'}*.")
    for note in stdout.splitlines():
        if note.startswith(("Chart shows the top", "Tie:", "Formula:", "Left out:")):
            lines.append(note)
    if assumptions:
        lines.append("Assumptions: " + "; ".join(dict.fromkeys(assumptions)) + ".")
    if unanswered:
        lines.append(unanswered)
    if not lines:
        lines.append("The script ran but showed no result.")
    return "\n\n".join(lines)
