"""Links made by the forms of words (part of stage 2): an adjective to the value it is derived from, a qualifier
of a measure ('high', 'low') to the column whose name carries max or min.

Each link is said in the answer's assumptions, so a wrong one is seen:

- 'snowy days' on a column `weather` with a value 'snow' is ``weather == 'snow'`` ("took 'snowy' as weather =
  'snow'"); 'Japanese cars' with a value 'Japan' of `origin` is ``origin == 'Japan'``; 'American' with a value
  'USA' is ``origin == 'USA'`` (the lexicon's ``demonyms``). The candidate bases come from
  :func:`~auto_analyst.offline.reader.morphology.derived_bases`; a word that two values could be declines
  naming both (the caller's rule for a value of several columns).
- 'more than 20 mm of precipitation' compares `precipitation` when no column carries mm and millimetres measure
  that column's quantity (the lexicon's ``quantities``), said as an assumption (:func:`unit_quantity_columns`).
- 'the daily high', 'high temperature', 'the lows' name the column whose name pairs a measure with max or min
  (`temp_max`: :func:`extreme_terms`); with two such columns 'high' alone names both and the part declines.

Words the reader knows for something else (statistics, framing, numbers, months, row nouns) are never read
this way: 'many' is no adjective of a value 'man', 'median' none of 'media'.
"""

from __future__ import annotations

import re
from functools import lru_cache

from auto_analyst.offline.reader.lexicon import lexicon
from auto_analyst.offline.reader.morphology import derived_bases, lemmas
from auto_analyst.offline.reader.text import tokenize, words_of

__all__ = ["absence_filters", "derived_values", "paired_extremes", "said_of_rows", "extreme_of", "extreme_rests", "extreme_terms", "unit_quantity_columns", "EXTREME_ALONE"]

MIN_WORD = 4
"""Shortest word read as an adjective of a value ('icy' is left out: three letters name too many things)."""


@lru_cache(maxsize=1)
def _known_words() -> frozenset[str]:
    lex = lexicon()
    return frozenset(lex.ignorable | lex.framing | lex.row_nouns | lex.entity_nouns | set(lex.number_words)
                     | set(lex.months) | set(lex.grains) | set(lex.units))


def _statistic_word(word: str) -> bool:
    from auto_analyst.offline.statistics import STATISTICS

    return any(s.pattern and re.search(s.pattern, word) for s in STATISTICS)


def derived_values(text: str, values: list[tuple[str, object, str]],
                   column_words: set[str]) -> list[tuple[str, object, int, int, str, str]]:
    """(column, value, start, end, base, how) for each word of normalised ``text`` derived from a listed value;
    ``how`` is 'derived' (a suffix rule) or 'listed' (the lexicon's ``demonyms``).

    ``values`` are the vocabulary's (column, value, folded key); ``column_words`` the words that name columns (a
    word naming a column is read as the column, never as an adjective of a value).
    """
    by_key: dict[str, list[tuple[str, object]]] = {}
    for col, value, key in values:
        by_key.setdefault(key, []).append((col, value))
    known = _known_words()
    out = []
    for t in tokenize(text):
        w = t.text
        if t.kind != "word" or len(w) < MIN_WORD or w in known or w in column_words or w in by_key:
            continue
        if lemmas(w) & (known | column_words) or _statistic_word(w):
            continue
        listed = set(lexicon().demonyms.get(w, ()))
        for base in sorted(derived_bases(w)):
            for col, value in by_key.get(base, []):
                out.append((col, value, t.start, t.end, base, "listed" if base in listed else "derived"))
    return out


EXTREME_ALONE = {"high", "highs", "low", "lows"}
"""Qualifiers that name a column alone ('the daily high'); 'maximum' alone stays the statistic."""


def extreme_of(words: list[str]) -> tuple[str, list[str]] | None:
    """('max'|'min', the other words) when a column name's first or last word says max or min ('temp_max',
    'min_price', 'HighTemp'); None otherwise, or when nothing else is left."""
    ext = lexicon().extremes
    if len(words) < 2:
        return None
    for direction, forms in ext.items():
        for k in (0, len(words) - 1):
            if words[k] in forms:
                rest = words[:k] + words[k + 1:]
                return direction, rest
    return None


def extreme_terms(direction: str, rests: list[list[str]]) -> list[tuple[str, ...]]:
    """The ways a question says the measure's max or min: 'maximum temperature', 'high temp', 'temperature high',
    'max temperature', and the qualifier alone ('high', 'lows') when ``rests`` (the measure's words, expanded)
    are not empty."""
    forms = [f for f in lexicon().extremes.get(direction, []) if len(f) > 2]
    out: list[tuple[str, ...]] = []
    for rest in rests:
        for f in forms:
            out += [tuple([f] + rest), tuple(rest + [f])]
    out += [(f,) for f in forms if f in EXTREME_ALONE]
    return list(dict.fromkeys(out))


def extreme_rests(rests: list[list[str]]) -> list[tuple[str, ...]]:
    """The measure alone ('temperature' of `temp_max`): a term two such columns share, so the question that says
    only 'temperature' declines naming both, never picks one."""
    return list(dict.fromkeys(tuple(r) for r in rests if r))


QUANTITY_TERMS = ("name", "words", "expanded", "head", "synonym")


def unit_quantity_columns(unit: str, vocab, among: list[str] | None = None) -> list[str]:
    """Numeric columns whose name carries no unit and names a quantity ``unit`` measures ('mm' → `precipitation`,
    through the lexicon's ``quantities``); '20 mm of precipitation' compares that column. ``among``: the columns the
    question named there ('a high of 5 degrees': `temp_max`, whose measure, temperature, degrees measure)."""
    lex = lexicon()
    spoken = lex.units.get(unit) or next((sp for sp, aliases in lex.unit_aliases.items() if unit in aliases), None)
    quantities = set(lex.quantities.get(spoken or "", []))
    if not quantities:
        return []
    hows = QUANTITY_TERMS + (("extreme_rest",) if among else ())
    out = [t.column for t in vocab.terms if t.how in hows and " ".join(t.words) in quantities
           and vocab.kind(t.column) == "numeric" and not vocab.units.get(t.column) and (among is None or t.column in among)]
    return list(dict.fromkeys(out))


def absence_filters(text: str, vocab) -> list[tuple[int, int, list[str], str]]:
    """(start, end, columns, word) for 'dry' ('a completely dry day') and 'zero X' ('zero precipitation'): the
    measure is 0. The columns are the numeric ones named by the lexicon's ``absence`` words of the adjective (or the
    one named after 'zero'); the caller takes one column and declines on several."""
    lex = lexicon()
    out = []
    for m in re.finditer(r"\b([a-z]+)\b", text):
        measures = lex.absence.get(m.group(1))
        if not measures:
            continue
        cols = [t.column for t in vocab.terms if t.how in QUANTITY_TERMS and " ".join(t.words) in measures
                and vocab.kind(t.column) == "numeric"]
        out.append((m.start(), m.end(), list(dict.fromkeys(cols)), m.group(1)))
    return out


_HAVING = {"a", "an", "with", "had", "have", "has", "having", "are", "were", "is", "was", "very", "too", "quite",
           "relatively", "extremely", "unusually", "particularly", "especially"}
_THRESHOLD = {"of", "above", "below", "over", "under", "more", "less", "greater", "higher", "lower", "between", "exceeding",
              "at", "equal", "reaching", "and"}


def said_of_rows(toks: list, i: int, n: int) -> bool:
    """'high'/'low' as an adjective said of the rows ('days with high temperatures', 'had a low'), with no threshold
    after it: not the max/min column (hot days are no reading of temp_max)."""
    if toks[i].text not in ("high", "highs", "low", "lows"):
        return False
    before = toks[i - 1].text if i > 0 else ""
    after = toks[i + n].text if i + n < len(toks) else ""
    return before in _HAVING and after not in _THRESHOLD


def paired_extremes(table) -> set[str]:
    """Columns whose name has a twin with max and min swapped (`temp_max` and `temp_min`)."""
    seen: dict[tuple, set[str]] = {}
    for c in table.columns:
        e = extreme_of(words_of(c.name))
        if e is not None:
            seen.setdefault(tuple(e[1]), set()).add(e[0])
    out = set()
    for c in table.columns:
        e = extreme_of(words_of(c.name))
        if e is not None and len(seen[tuple(e[1])]) == 2:
            out.add(c.name)
    return out
