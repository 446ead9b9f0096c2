"""Terms of a table's columns: the word sequences that name each column, built from its name and the lexicon.

See :mod:`auto_analyst.offline.reader.vocabulary` for the table of term kinds and strengths; this
module builds them: names split into words, unit suffixes dropped or said in words, abbreviations
expanded, compounds split ('realgdp'), heads, initials, synonyms, measure verbs, yes/no stems, the
verbs of date columns; plus the table's row nouns, id columns and listed values.
"""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass

from auto_analyst.data.description import TableDescription
from auto_analyst.offline.reader.lexicon import lexicon
from auto_analyst.offline.reader.morphology import plural, singular
from auto_analyst.offline.reader.text import fold, normalize, words_of
from auto_analyst.offline.statistics import BY_NAME, PATTERNS

__all__ = ["Term", "per_time", "STRENGTH", "GENERIC", "column_terms", "extreme_units", "content_words", "split_compound", "row_nouns", "id_columns",
           "identifying_column", "listed_values", "meaning_name", "sibling_tails"]

GENERIC = {"column", "columns", "field", "fields", "variable", "variables", "feature", "features", "unnamed", "col",
           "code", "codes", "number", "numbers", "name", "names", "value", "values", "count", "total", "level",
           "group", "date", "dates", "time", "times", "price", "amount", "rate", "rates", "type", "id", "index",
           "data", "info", "score", "new", "old", "is", "has", "of", "the", "in", "per", "and", "by", "a", "no", "nr"}
DATE_WORDS = {"date", "time", "on", "at", "dt", "day", "timestamp", "ts", "datetime", "when", "year", "yr"}
FLAG_PREFIXES = {"is", "has", "was", "did", "flag", "flg", "had", "can", "any"}
STRENGTH = {"backtick": 12, "quoted": 11, "name": 10, "words": 9, "flag": 9, "expanded": 8, "extreme": 8, "reordered": 7,
            "initials": 7,
            "meaning": 7, "clipped": 7, "event": 6, "head": 6, "extreme_alone": 6, "extreme_rest": 6, "synonym": 5,
            "unit": 5, "verb": 4, "part": 3}


@dataclass(frozen=True)
class Term:
    """Words that name ``column``; ``how`` says how the term was made (see the module table)."""

    words: tuple[str, ...]
    column: str
    how: str

    @property
    def strength(self) -> int:
        return STRENGTH[self.how]


def content_words(words: list[str], units: dict[str, str]) -> tuple[list[str], list[str]]:
    """(words less a trailing unit or 'in <unit>' phrase, the unit words dropped)."""
    w = list(words)
    dropped: list[str] = []
    for k in range(1, len(w)):  # 'salary in thousands of dollars', 'weight in lbs'
        if w[k] == "in" and all(x in units or x in ("of",) for x in w[k + 1:]) and k + 1 < len(w):
            dropped, w = w[k:], w[:k]
            break
    while len(w) > 1 and w[-1] in units:
        dropped.insert(0, w.pop())
    return w, dropped


# short forms that are also ordinary words: expanded only as the first word of a longer name ('per_dem')
PREFIX_ONLY = {"per", "no", "min", "max", "rep", "ind", "pos", "neg", "cat", "div", "exp", "ret", "pt"}
# heads too vague for synonyms of their own ('pressure' of systolic_bp is not air pressure)
NO_SYNONYM_HEADS = {"pressure", "time", "rate", "level", "index", "length", "size", "count", "value"}


def per_time(name: str) -> bool:
    """Whether a column's name is a rate 'X per <time>' (`m_per_s`, `words_per_min`, `km_per_hour`): a speed, which
    'fast' orders upwards, never a duration although its last word is one. The time words are the lexicon's units and
    unit aliases of the quantities measuring a duration (seconds, minutes, hours)."""
    lex = lexicon()
    words = words_of(name)
    times = {s for s, q in lex.quantities.items() if "duration" in q}
    spoken = {w: s for s, aliases in lex.unit_aliases.items() for w in aliases} | dict(lex.units)
    return any(w == "per" and k + 1 < len(words) and (words[k + 1] in times or spoken.get(words[k + 1]) in times)
               for k, w in enumerate(words))


def split_compound(word: str, tails: frozenset[str] = frozenset()) -> list[str] | None:
    """'realgdp' → ['real', 'gdp'], 'totalsales' → ['total', 'sales']: a word of two known parts (compound
    parts and abbreviations of the lexicon, or units), each of at least 2 letters; None otherwise.

    ``tails``: abbreviations another column of the same table ends a known compound with ('wt' of `bodywt`);
    a word of at least 3 letters before such a tail is a part too (`brainwt` → ['brain', 'wt']). Only a sibling
    vouches for it: 'ht' alone would split 'freight'."""
    lex = lexicon()
    known = lex.compound_parts | set(lex.abbreviations) | {w for e in lex.abbreviations.values() for x in e for w in x.split()}
    if len(word) < 5 or not word.isalpha() or word in known:
        return None
    for k in range(len(word) - 2, 1, -1):  # the longest first part first
        a, b = word[:k], word[k:]
        if a in known and (b in known or b in lex.units) and len(b) >= 2:
            return [a, b]
    for tail in sorted(tails, key=len, reverse=True):
        if word.endswith(tail) and len(word) - len(tail) >= 3:
            return [word[:-len(tail)], tail]
    return None


def sibling_tails(names: list[str]) -> frozenset[str]:
    """Abbreviations (of the lexicon, at least 2 letters) that end a known compound among ``names``: 'wt' of
    `bodywt` (body + wt), so that `brainwt` beside it splits the same way (:func:`split_compound`)."""
    abbreviations = lexicon().abbreviations
    return frozenset(parts[1] for n in names for w in words_of(n) if (parts := split_compound(w))
                     and parts[1] in abbreviations and len(parts[1]) >= 2)


def _expansions(words: list[str], abbreviations: dict[str, list[str]], limit: int = 8) -> list[list[str]]:
    """Each word replaced by its expansions ('rel hum' → 'relative humidity'), at most ``limit`` variants."""
    def options_of(k: int, w: str) -> list[list[str]]:
        if w in PREFIX_ONLY and not (k == 0 and len(words) > 1):
            return [[w]]
        return [[w]] + [e.split() for e in abbreviations.get(w, [])]

    options = [options_of(k, w) for k, w in enumerate(words)]
    out = []
    for combo in itertools.product(*options):
        flat = [x for part in combo for x in part]
        if flat != words:
            out.append(flat)
        if len(out) >= limit:
            break
    return out


FUNCTION_WORDS = {"a", "an", "the", "is", "are", "was", "be", "at", "on", "in", "of", "or", "and", "to", "as", "it", "by",
                  "for", "if", "no", "not", "so", "do", "up", "we", "us", "me", "my", "i", "am", "an", "per", "than"}


NAME_STATISTICS = {"mean": ("mean", "average", "avg"), "median": ("median",), "sum": ("total", "sum"),
                   "std": ("standard deviation", "std", "sd")}
"""Statistics whose word can end a column's name (`score_avg`, `rainfall_total`, `price_sd`), with the words that say
each (the words of its pattern in :mod:`~auto_analyst.offline.statistics` a name's phrase uses); max and min ones are
the extremes' (:func:`extreme_units`)."""


def _statistic(word: str) -> bool:
    """Whether ``word`` alone is a word of one of :data:`NAME_STATISTICS` ('avg', 'average', 'total'): alone it is the
    statistic, never a column's head."""
    return any(name in NAME_STATISTICS and p.fullmatch(word) for p, name in PATTERNS)


def extreme_units(col, units: dict[str, str], paired: bool) -> tuple[tuple[str, list[str]] | None, dict[str, str]]:
    """(the column's max/min qualifier and the other words of its name, or None; the units to read its name
    with). 'min' ends `temp_min` as the minimum when `temp_max` is there too (``paired``), `duration_min` as minutes."""
    from auto_analyst.offline.reader.forms import extreme_of

    words = words_of(col.name)
    extreme = extreme_of(words) if col.kind == "numeric" else None
    if extreme is None or not extreme[1]:
        return None, units
    forms = lexicon().extremes[extreme[0]]
    if not paired and any(w in units for w in words if w in forms):
        return None, units
    return extreme, {k: v for k, v in units.items() if k not in forms}


def column_terms(col, units: dict[str, str], abbreviations: dict[str, list[str]],
                 paired: bool = False, tails: frozenset[str] = frozenset()) -> tuple[list[Term], list[str]]:
    """(terms, parts) of one column. ``paired``: another column has the same name with max and min swapped
    (`temp_max`, `temp_min`), so a trailing 'min' is the minimum, not minutes. ``tails``: see
    :func:`sibling_tails`."""
    from auto_analyst.offline.reader.forms import extreme_rests, extreme_terms

    lex = lexicon()
    words = words_of(col.name)
    if not words:
        return [], []
    extreme, units = extreme_units(col, units, paired)
    # a column named 'IS' or 'AT' is named in backticks or quotes (or by its expansion): 'is', 'at' are words
    terms = [] if len(words) == 1 and words[0] in FUNCTION_WORDS else [Term(tuple(words), col.name, "name")]
    split = [x for w in words for x in (split_compound(w, tails) or [w])]
    if split != words:
        terms.append(Term(tuple(split), col.name, "words"))
        words = split
    content, unit_words = content_words(words, units)
    if content != words:
        terms.append(Term(tuple(content), col.name, "words"))
        for u in unit_words:
            if u in units:
                spoken = units[u].split()
                terms.append(Term(tuple(content + spoken), col.name, "words"))
                terms.append(Term(tuple(content + ["in"] + spoken), col.name, "words"))
                if units[u] == "percent":
                    terms.append(Term(tuple(content + ["percentage"]), col.name, "words"))
                    terms.append(Term(tuple(content + ["rate"]), col.name, "words"))
    if col.kind == "boolean":
        stem = [w for w in content if w not in FLAG_PREFIXES] or content
        if stem != content:
            terms.append(Term(tuple(stem), col.name, "flag"))
        if len(stem) == 1 and not stem[0].endswith(("ed", "er", "y", "e")):
            terms.append(Term((stem[0] + "y",), col.name, "flag"))  # 'storm' → 'stormy'
    if col.kind == "datetime":
        stem = [w for w in content if w not in DATE_WORDS]
        if stem and stem != content:
            terms.append(Term(tuple(stem), col.name, "event"))
            if len(stem) == 1 and stem[0] in lex.particle_verbs:
                terms.append(Term(tuple(lex.particle_verbs[stem[0]].split()), col.name, "event"))
    expanded = _expansions(content, abbreviations)
    for e in expanded:
        terms.append(Term(tuple(e), col.name, "expanded"))
    # the name's words in another order ('total sleep' for sleep_total): every word is the column's own; two or three
    # words only, no function word (order matters in 'rate of return'); a term another column has exactly wins. A
    # statistic word moved must lead ('total sleep'): after the words it is their statistic ('concave points mean')
    for seq in [content] + expanded:
        if 2 <= len(seq) <= 3 and not set(seq) & FUNCTION_WORDS:
            terms += [Term(o, col.name, "reordered") for o in itertools.permutations(seq) if list(o) != seq
                      and not any(k and any(p.fullmatch(w) for p, _ in PATTERNS) for k, w in enumerate(o))]
    if content != words:  # the whole name expanded, its unit kept: 'average weekly hours' for avgWeeklyHours
        terms += [Term(tuple(e), col.name, "expanded") for e in _expansions(words, abbreviations)]
    # initials of a name of three words or more: Miles_per_Gallon → mpg, Body_Mass_Index → bmi
    if len(words) >= 3 and all(w.isalpha() for w in words):
        terms.append(Term(("".join(w[0] for w in words),), col.name, "initials"))
    # head words: the last content word (or its expansion) alone; a ratio 'X per Y' has no head
    heads: list[list[str]] = []
    if "per" not in content[1:]:
        heads = [content[-1:]] + [e[-1:] for e in expanded] + [e[-2:] for e in expanded if len(e) >= 2]
        if len(content) >= 3 and content[-2] not in FUNCTION_WORDS:
            # the last two words of a longer name are a head too, so that a tail two names share ('concave points' of
            # mean_concave_points and worst_concave_points) names neither, not only the one whose expansion made it
            heads.append(content[-2:])
    for h in heads:
        if h and list(h) != content and not (len(h) == 1 and (h[0] in GENERIC or len(h[0]) < 3 or _statistic(h[0]))):
            terms.append(Term(tuple(h), col.name, "head"))
    # a name ending in a statistic's word said with the word first: 'total rainfall' for rainfall_total, 'average
    # score' for score_avg; whole-name words, so the reader weighs the word as part of the name or as the statistic
    # (whole_names), never drops it or reads the rest alone as another column
    if col.kind == "numeric" and len(content) >= 2 and _statistic(content[-1]) and not _statistic(content[-2]):
        said = next(ws for name, ws in NAME_STATISTICS.items() if BY_NAME[name].pattern and re.fullmatch(
            BY_NAME[name].pattern, content[-1]))
        for w in dict.fromkeys((content[-1], *said)):  # 'mean score' names score_avg as 'average score' does
            terms.append(Term((*w.split(), *content[:-1]), col.name, "words"))
    # synonyms of the whole content, of each expansion and of the head
    phrases = {" ".join(content)} | {" ".join(e) for e in expanded}
    phrases |= {" ".join(h) for h in heads if h and " ".join(h) not in NO_SYNONYM_HEADS}
    for p in phrases:
        for s in lex.synonyms_of(p):
            terms.append(Term(tuple(s.split()), col.name, "synonym"))
    # verbs naming the measure ('spent' for sales), for numeric columns; never an ordinary verb ('make')
    if col.kind == "numeric":
        concept_words = phrases | {s for p in phrases for s in lex.synonyms_of(p)}
        for verb, concepts in lex.event_verbs.items():
            if concept_words & set(concepts) and verb not in lex.ignorable:
                terms.append(Term((verb,), col.name, "verb"))
    if extreme is not None:  # 'high temperature', 'maximum temp', 'the daily high' for temp_max
        direction, rest = extreme
        rests = [rest] + [e for e in _expansions(rest, abbreviations) if e]
        for t in extreme_terms(direction, rests):
            terms.append(Term(t, col.name, "extreme_alone" if len(t) == 1 else "extreme"))
        terms += [Term(t, col.name, "extreme_rest") for t in extreme_rests(rests)]
        forms = set(lex.extremes[direction])
        terms = [t for t in terms if not (t.how == "head" and set(t.words) <= forms)]  # 'max' alone is the statistic
    # a statistic's word ('mean' of `mean pressure`) is no part: alone it is the statistic, never the column
    parts = [w for w in content if len(w) >= 4 and w not in GENERIC and not w.isdigit()
             and not any(p.fullmatch(w) for p, _ in PATTERNS)]
    return [t for t in terms if not (len(t.words) == 1 and t.words[0] in FUNCTION_WORDS)], parts


def row_nouns(table: TableDescription, id_cols: list[str]) -> set[str]:
    lex = lexicon()
    nouns = set(lex.row_nouns)
    name_words = words_of(table.name)
    if name_words:
        last = name_words[-1]
        nouns |= {last, singular(last), plural(singular(last))}
    for c in id_cols:
        stem = [w for w in words_of(c) if w not in ("id", "ids", "key", "no", "number", "nr", "code", "uuid", "guid")]
        if stem:
            nouns |= {stem[-1], plural(stem[-1])}
    return nouns


def id_columns(table: TableDescription) -> list[str]:
    out = []
    for c in table.columns:
        w = words_of(c.name)
        if c.kind == "identifier" or (w and w[-1] in ("id", "ids", "uuid", "guid", "key")) or (w == ["no"]):
            out.append(c.name)
    return out


def identifying_column(table: TableDescription, id_cols: list[str]) -> str | None:
    """The column that names a row: an id column, else a name/title column, else a column of unique labels."""
    if id_cols:
        return id_cols[0]
    for c in table.columns:
        if words_of(c.name) and words_of(c.name)[-1] in ("name", "title", "label") and c.kind != "numeric":
            return c.name
    for c in table.columns:
        if c.kind in ("categorical", "text") and c.distinct == table.n_rows - c.missing and table.n_rows > 1:
            return c.name
    return None


MAX_VALUE_CHARS = 80
"""Longest listed value matched in questions; longer ones are free text nobody types back."""


def listed_values(table: TableDescription) -> list[tuple[str, object, str]]:
    out = []
    for col in table.columns:
        if col.kind not in ("categorical", "boolean", "identifier"):
            continue
        for value, _count in col.top_values:
            if value is None or isinstance(value, bool) or len(str(value)) > MAX_VALUE_CHARS:
                continue
            key = fold(normalize(str(value)))
            if len(key) < 2 or key.isdigit() and len(key) < 3:
                continue
            out.append((col.name, value, key))
    return out


# words that end the naming phrase of a dictionary line ('net amount after refunds' names 'net amount')
_PHRASE_ENDS = {"in", "after", "before", "for", "from", "at", "on", "when", "where", "which", "that", "with", "by",
                "per", "as", "if", "is", "are", "was", "were", "including", "excluding", "without", "and", "or"}
_LEADING = {"the", "a", "an", "this", "each", "every", "its", "their"}


def meaning_name(meaning: str, column: str) -> tuple[str, ...]:
    """The name a data-dictionary meaning gives ``column``: the noun phrase it starts with, at most 4 words.

    ``"net amount after refunds, in EUR"`` → ``("net", "amount")``. Empty when the meaning is a sentence that
    only mentions the column ("Rows with a negative qty are refunds."), or its phrase is a generic word or
    the column's own name (nothing new to link).
    """
    if not meaning:
        return ()
    head = meaning.replace("\u2014", ",").replace(" - ", ",")
    for mark in ",;:.()[]":
        head = head.split(mark, 1)[0]
    words = [w[:-2] if w.endswith("'s") else w for w in words_of(head) if w != "s"]  # "the customer's key"
    while words and words[0] in _LEADING:
        words = words[1:]
    for k in range(1, len(words)):
        if words[k] in _PHRASE_ENDS or (words[k] == "of" and k + 1 < len(words) and words[k + 1] in _LEADING):
            words = words[:k]
            break
    own = words_of(column)
    if not words or len(words) > 4 or all(w in GENERIC for w in words) or tuple(words) == tuple(own):
        return ()
    if set(own) & set(words_of(meaning)) and not set(own) & set(words):
        return ()  # a sentence that mentions the column ('Rows with a negative qty are refunds.') names other things

    return tuple(words)
