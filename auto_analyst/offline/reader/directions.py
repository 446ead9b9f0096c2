"""Compass words (part of stage 2): 'south of 25 degrees' is a condition on the latitude column, 'the northernmost' the
row with its largest value, 'west of the prime meridian' a longitude below 0.

The words and the coordinate each orders are the lexicon's ``directions`` (after ISO 6709: latitude positive north of
the equator, longitude positive east of the prime meridian). A column is taken as the coordinate only when the table
names it so (`latitude`, `lat`, `lng`: its name or the lexicon's abbreviation) and every value lies in the coordinate's
range (-90..90, -180..180); otherwise the part declines naming the word. Each link is said in the assumptions.
"""

from __future__ import annotations

import re

from auto_analyst.data.description import DatasetDescription, TableDescription
from auto_analyst.offline.reader.lexicon import lexicon
from auto_analyst.offline.reader.text import Reading, number, words_of
from auto_analyst.offline.reader.vocabulary import Mention, Vocabulary, vocabulary
from auto_analyst.offline.spec import Filter, QuerySpec

__all__ = ["coordinate_column", "direction_filters", "direction_superlatives", "other_tables_note"]

_WORDS = r"(north|south|east|west)"
OF = re.compile(rf"\b(?:to\s+the\s+)?{_WORDS}\s+of\s+(?:(?P<v>-?\d+(?:\.\d+)?)\s*(?:degrees?|deg|°)?"
                rf"(?:\s+(?P<hemi>north|south|east|west|[nsew])\b)?|the\s+(?P<zero>[a-z]+(?:\s+meridian)?))")
MOST = re.compile(rf"\b(?:{_WORDS}(?:ern)?most|most\s+{_WORDS}(?:erly|ern)|(?:farthest|furthest)\s+{_WORDS})\b")
_SIGN = {"north": 1, "n": 1, "east": 1, "e": 1, "south": -1, "s": -1, "west": -1, "w": -1}


def coordinate_column(word: str, vocab: Vocabulary, table: TableDescription) -> tuple[str | None, str]:
    """(the column of the coordinate a compass word orders, or None; the problem's sentence when None)."""
    entry = lexicon().directions[word]
    coord, limit = entry["coordinate"], entry["limit"]
    cols = list(dict.fromkeys(t.column for t in vocab.terms if t.words == (coord,) and vocab.kind(t.column) == "numeric"
                              and t.how in ("name", "words", "expanded")))
    if len(cols) != 1:
        found = f"several columns could be the {coord} ({', '.join(cols)})" if cols else f"no column is the {coord}"
        return None, f"'{word}' orders the {coord}, and {found}; name the column to compare."
    col = next(c for c in table.columns if c.name == cols[0])
    hemisphere = next((w for w in words_of(col.name)[1:] if w in _SIGN and _SIGN[w] < 0), None)
    if hemisphere is not None:
        # `longitude_W`, `lat_s`: degrees counted positive to the west (south), the other way round from ISO 6709
        return None, (f"'{word}' orders the {coord}, and `{col.name}` may count degrees positive to the "
                      f"{'west' if coord == 'longitude' else 'south'} ('{hemisphere}' in its name); name the condition "
                      f"on `{col.name}` as a number.")
    if not (isinstance(col.min, (int, float)) and isinstance(col.max, (int, float)) and -limit <= col.min
            and col.max <= limit):
        return None, (f"'{word}' orders the {coord} in degrees from -{limit} to {limit}, and `{col.name}` has values "
                      f"outside that range; name the condition on `{col.name}` as a number.")
    return col.name, ""


def direction_filters(st: Reading, spec: QuerySpec, mentions: list[Mention], used: set[int], table: TableDescription,
                      vocab: Vocabulary) -> None:
    """'south of 25 degrees (latitude)' → latitude < 25; 'east of -70 longitude', 'west of 100 degrees west' (-100),
    'south of the equator' (0). A number whose sign is not that of the column's mean, with no hemisphere word,
    declines: 'west of 100 degrees' on American longitudes (mean near -95) may mean 100° W."""
    for m in OF.finditer(st.text):
        word = m.group(1)
        entry = lexicon().directions[word]
        if not st.free(m.start(), m.end()):
            continue
        if m.group("zero") is not None and not any(m.group("zero") in e["zero"] for e in lexicon().directions.values()):
            continue  # 'north of the city': no line of a coordinate
        col, problem = coordinate_column(word, vocab, table)
        end = m.end()
        if col is None:
            spec.problems.append(problem)
            st.take(m.start(), end)
            continue
        if m.group("zero") is not None:
            if m.group("zero") not in entry["zero"]:
                spec.problems.append(f"'{word} of the {m.group('zero')}' compares the {entry['coordinate']}, which the "
                                     f"{m.group('zero')} does not mark; name the value.")
                st.take(m.start(), end)
                continue
            value = 0
        else:
            value = number(m.group("v"))
            if m.group("hemi"):
                value = abs(value) * _SIGN[m.group("hemi")]
            info = next(c for c in table.columns if c.name == col)
            centre = info.mean if info.mean is not None else (info.min + info.max) / 2
            if not m.group("hemi") and value * centre < 0:
                # '100 degrees' on American longitudes (mean near -95) may mean 100° W: the sign is not certain
                hemis = ("north", "south") if entry["coordinate"] == "latitude" else ("east", "west")
                spec.problems.append(f"The values of `{col}` lie mostly {'below' if centre < 0 else 'above'} 0, and "
                                     f"'{m.group(0)}' gives {value:g}: say the sign ('{-value:g}') or the hemisphere "
                                     f"('{abs(value):g} degrees {hemis[0] if value < 0 else hemis[1]}').")
                st.take(m.start(), end)
                continue
            if abs(value) > entry["limit"]:
                spec.problems.append(f"'{m.group(0)}' is outside the {entry['coordinate']}'s range "
                                     f"(-{entry['limit']} to {entry['limit']}).")
                st.take(m.start(), end)
                continue
        for k, x in enumerate(mentions):  # '25 degrees latitude', '-70 of longitude': the compared column itself
            gap = st.text[end:x.start]
            if x.column == col and x.start >= end and re.fullmatch(r"\s*(?:of\s+)?", gap):
                used.add(k)
                end = x.end
                break
        op = ">" if entry["direction"] == "max" else "<"
        spec.filters.append(Filter(column=col, op=op, value=value))
        spec.assumptions.append(f"took '{st.text[m.start():m.end()].strip()}' as `{col}` {op} {value:g} ({entry['coordinate']}"
                                f" grows to the {'north' if entry['coordinate'] == 'latitude' else 'east'})")
        st.take(m.start(), end)


def direction_superlatives(st: Reading, spec: QuerySpec | None, vocab: Vocabulary) -> list[tuple[int, int, str, str, str]]:
    """'northernmost', 'most westerly', 'furthest south': (start, end, column, 'max'|'min', words) of the coordinate
    the word orders; a part with no such column (or several) declines naming the word."""
    out = []
    for m in MOST.finditer(st.text):
        if not st.free(m.start(), m.end()):
            continue
        word = m.group(1) or m.group(2) or m.group(3)
        entry = lexicon().directions[word]
        col, problem = coordinate_column(word, vocab, vocab.table)
        st.take(m.start(), m.end())
        if col is None:
            if spec is not None:
                spec.problems.append(problem)
            continue
        out.append((m.start(), m.end(), col, entry["direction"], m.group(0)))
        if spec is not None:
            spec.assumptions.append(f"took '{m.group(0)}' as the {'highest' if entry['direction'] == 'max' else 'lowest'}"
                                    f" `{col}` ({entry['coordinate']} grows to the "
                                    f"{'north' if entry['coordinate'] == 'latitude' else 'east'})")
    return out


def other_tables_note(text: str, table: TableDescription, desc: DatasetDescription) -> list[str]:
    """With several tables loaded, a compass word read on ``table`` says so when another table has that coordinate
    too ('south of 25' on cities, while citiesm has a latitude): never a silent choice of table. ``text`` is folded."""
    words = {m.group(1) for m in OF.finditer(text)} | {next(g for g in m.groups() if g) for m in MOST.finditer(text)}
    notes = []
    for coord in dict.fromkeys(lexicon().directions[w]["coordinate"] for w in sorted(words)):
        word = next(w for w in sorted(words) if lexicon().directions[w]["coordinate"] == coord)
        names = {t.name for t in desc.tables}
        joins = {t.name for t in desc.tables if "__" in t.name and set(t.name.split("__")) <= names}  # 'a__b' views
        others = [t.name for t in desc.tables if t.name not in joins | {table.name}
                  and coordinate_column(word, vocabulary(t), t)[0]]
        if others:
            notes.append(f"read the {coord} of table '{table.name}' ({', '.join(repr(o) for o in others)} has a {coord} "
                         "too; name the table to read it instead)")
    return notes
