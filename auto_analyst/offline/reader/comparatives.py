"""Comparisons said with adjectives and 'or more' (part of stage 2, called by ``conditions.read_filters``): 'trips
longer than 10 km', 'faster than 200 minutes' (a time, which 'fast' orders the other way: said in the assumptions),
'aged 60 or older', 'bmi 30 or above'. The adjectives and their measures are the lexicon's ``adjectives``."""

from __future__ import annotations

import re

from auto_analyst.data.description import TableDescription
from auto_analyst.offline.reader.forms import unit_quantity_columns
from auto_analyst.offline.reader.morphology import adjective_bases
from auto_analyst.offline.reader.text import Reading, number
from auto_analyst.offline.reader.time_read import named_column
from auto_analyst.offline.reader.vocabulary import Mention, Vocabulary
from auto_analyst.offline.spec import Filter, QuerySpec

__all__ = ["COMPARATIVE", "comparatives", "or_more", "units_after"]

COMPARATIVE = re.compile(r"\b(?:(more|less)\s+([a-z]+)|([a-z]+er))\s+than\s+(-?\d+(?:\.\d+)?)\b")


def units_after(st: Reading, at: int, vocab: Vocabulary, column: str) -> None:
    """'above 10 km': the unit of the compared column, written after the number, is explained."""
    m = re.match(r"\s*([a-z%$€£]+)\b", st.text[at:])
    if m and (m.group(1) in vocab.units.get(column, []) or m.group(1) in ("%", "percent")):
        st.take(at + m.start(1), at + m.end(1))


OR_MORE = re.compile(r"(?P<v1>-?\d+(?:\.\d+)?)\s*(?P<unit>[a-z%$€£]+\s+)??(?:or|and)\s+(?P<word>[a-z]+)\b(?!\s+than\b)")
_UP = ("more", "above", "over", "higher", "greater", "up", "larger", "bigger")
_DOWN = ("less", "fewer", "below", "under", "lower", "smaller", "down")


def or_more(st: Reading, spec: QuerySpec, mentions: list[Mention], used: set[int], table: TableDescription,
            vocab: Vocabulary) -> None:
    """'aged 60 or older', 'bmi 30 or above', 'patients 65 and over': the number itself included (>= / <=). The
    column is the one named right before the number, or the one a comparative adjective measures ('older': age)."""
    for m in OR_MORE.finditer(st.text):
        if not st.free(m.start(), m.end()):
            continue
        word = m.group("word")
        before = next((k for k, x in enumerate(mentions) if x.end <= m.start()
                       and st.text[x.end:m.start()].strip() in ("", "of") and k not in used), None)
        col, up = None, None
        if word in _UP or word in _DOWN:
            if before is None:
                continue
            col, up = mentions[before].column, word in _UP
        else:
            hits = {(c, d) for c, d, _ in vocab.adjective(word)}
            if len({c for c, _ in hits}) != 1 or not word.endswith("er"):
                continue
            col, direction = hits.pop()
            if before is not None and mentions[before].column != col:
                continue  # 'bmi 30 or older': the number is not of the column the adjective measures
            up = direction == "max"
        if named_column(table, col).kind != "numeric":
            continue
        unit = (m.group("unit") or "").strip()
        if unit and unit not in vocab.units.get(col, []) + ["years", "year"] \
                and col not in unit_quantity_columns(unit, vocab, among=[col]):
            continue  # 'a high of 5 degrees or less': degrees measure temp_max, which says no unit of its own
        spec.filters.append(Filter(column=col, op=">=" if up else "<=", value=number(m.group("v1"))))
        if unit and unit not in vocab.units.get(col, []) + ["years", "year"]:
            spec.assumptions.append(f"took '{m.group('v1')} {unit}' as {m.group('v1')} in `{col}` (the unit measures it; "
                                    "the column does not say its unit)")
        st.take(mentions[before].start if before is not None else m.start(), m.end())
        if before is not None:
            used.add(before)


def comparatives(st: Reading, spec: QuerySpec, vocab: Vocabulary) -> None:
    """'trips longer than 10 km', 'patients older than 65', 'more expensive than 20'."""
    for m in COMPARATIVE.finditer(st.text):
        if not st.free(m.start(), m.end()):
            continue
        word = m.group(2) or m.group(3)
        bases = adjective_bases(word) if m.group(3) else {word}
        hits = {x for b in bases for x in vocab.adjective_links(b)}
        if len({c for c, _, _, _ in hits}) != 1:
            continue
        col, direction, base, inverse = hits.pop()
        bigger = (direction == "max") != (m.group(1) == "less")
        spec.filters.append(Filter(column=col, op=">" if bigger else "<", value=number(m.group(4))))
        st.take(m.start(), m.end())
        if inverse:  # 'faster than 200 minutes': a time, which 'fast' orders the other way
            spec.assumptions.append(f"took '{m.group(0)}' as `{col}` {'>' if bigger else '<'} {m.group(4)} (a time or "
                                    f"duration: '{base}' orders it the other way)")
        units_after(st, m.end(), vocab, col)
