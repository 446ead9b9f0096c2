"""Numbers said with a scale word against a column already in that scale (part of stage 2): 'under 2 million' on
`population_millions` is 2 in the column's unit, never 2000000 compared raw.

The question's text has its scale words turned into digits before linking ('over 2 million' → 'over 2000000', see
:func:`text.spelled_numbers`), so a condition's value is in units. A column whose name ends in a scale word (the
lexicon's ``number_words`` of 1000 or more, plural or not, and the usual short forms k, mn, bn, 000s) counts in that
scale: a value said with a scale word is divided by it, said in the assumptions. A value of at least the scale said
without a scale word (the user may mean units or the column's scale) and the name 'm' (millions or metres) decline.
"""

from __future__ import annotations

import re

from auto_analyst.data.description import TableDescription
from auto_analyst.offline.reader.lexicon import lexicon
from auto_analyst.offline.reader.text import words_of
from auto_analyst.offline.spec import QuerySpec

__all__ = ["column_scale", "scaled_filters"]

_SHORT = {"k": 1000, "000": 1000, "000s": 1000, "mn": 10**6, "mio": 10**6, "bn": 10**9}
_OPS = (">", ">=", "<", "<=", "==", "!=", "between")


def column_scale(name: str) -> tuple[int | None, str]:
    """(the multiplier a column's name says its values are in, or None; the scale word). 'm' gives (0, 'm'): it may be
    millions or metres, so a scaled number against it is never converted."""
    words = words_of(name)[1:]
    scales = {w: v for w, v in lexicon().number_words.items() if v >= 1000}
    for w in reversed(words):
        if w in _SHORT:
            return _SHORT[w], w
        if w in scales or (w.endswith("s") and w[:-1] in scales):
            return scales.get(w, scales.get(w[:-1])), w
        if w == "m":
            return 0, w
    return None, ""


def scaled_filters(spec: QuerySpec, question: str, table: TableDescription) -> None:
    """Convert (or decline) each numeric condition on a column whose name carries a scale (module docstring)."""
    scales = [w for w, v in lexicon().number_words.items() if v >= 1000]
    said = re.search(rf"\d\s*(?:{'|'.join(map(re.escape, scales))})s?\b", question.lower())
    for f in spec.filters:
        if f.op not in _OPS or f.column not in {c.name for c in table.columns}:
            continue
        scale, word = column_scale(f.column)
        values = [v for v in (f.value, f.value2) if isinstance(v, (int, float)) and not isinstance(v, bool)]
        if scale is None or not values or all(abs(v) < (scale or 1000) for v in values):
            continue  # 'income_k under 100': a number below the scale is in the column's own unit
        if scale == 0 or not said:
            spec.problems.append(f"`{f.column}` counts in '{word}' (a scale), and the condition {f.to_text()} may be in "
                                 f"units or in '{word}'; say the number in the column's scale.")
            continue
        old = f.to_text()
        f.value = _scaled(f.value, scale)
        f.value2 = _scaled(f.value2, scale)
        spec.assumptions.append(f"`{f.column}` counts in '{word}': took {old} as {f.to_text()}")


def _scaled(v, scale: int):
    if not isinstance(v, (int, float)) or isinstance(v, bool):
        return v
    x = v / scale
    return int(x) if float(x).is_integer() else round(x, 12)
