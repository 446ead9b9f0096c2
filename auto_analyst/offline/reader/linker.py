"""Stage 2 of the reader: link words to the table: columns, row nouns, the table itself, gradable adjectives.

Category values, comparisons and periods are linked by
:mod:`~auto_analyst.offline.reader.conditions`, statistics and chart words by
:mod:`~auto_analyst.offline.reader.words`. Everything linked is marked explained in the
:class:`~auto_analyst.offline.reader.text.Reading`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from auto_analyst.offline.reader.lexicon import lexicon
from auto_analyst.offline.reader.morphology import adjective_bases, lemmas
from auto_analyst.offline.reader.text import Reading, words_of
from auto_analyst.offline.reader.vocabulary import Mention, Vocabulary
from auto_analyst.offline.reader.whole_names import ambiguous_parts
from auto_analyst.offline.spec import QuerySpec

__all__ = ["RowNoun", "Superlative", "link_columns", "link_row_nouns", "link_superlatives", "link_table", "fuzzy_columns"]

# the table's own row nouns (its name, an id column's noun) beat these weaker terms: 'patients' are the
# rows, not patient_id, and 'wines' the rows of table wine, not the column od280/od315_of_diluted_wines
BELOW_ROW_NOUN = {"part", "verb", "head", "synonym", "initials", "event", "unit"}


@dataclass
class RowNoun:
    """A noun that names the rows ('trips', 'orders', 'the car'); ``plural`` tells 'the heaviest car' from 'cars'."""

    start: int
    end: int
    word: str
    plural: bool


@dataclass
class Superlative:
    """'heaviest', 'most expensive', 'longest': the maximum (or minimum) of the column the adjective describes."""

    start: int
    end: int
    column: str
    func: str  # max | min
    word: str


STAT_PHRASES = re.compile(r"\b(?:population\s+|sample\s+)?standard\s+deviations?\b|\bcorrelation\s+coefficients?\b|"
                          r"\bmean\s+(?:squared|absolute)\s+error\b|\bnormal\s+distribution\b|\bsignificance\s+level\b|"
                          r"\binter[- ]?quartile\s+range\b|\bnull\s+hypothesis\b|\blinear\s+regression\b|\bp[- ]values?\b")
STRONG = {"backtick", "quoted", "name", "words", "flag"}


def link_columns(st: Reading, vocab: Vocabulary, spec: QuerySpec) -> list[Mention]:
    """Column mentions in the part's free text (ambiguous ones become problems); their spans are explained.

    A statistic's own words ('standard deviation', 'p-value') are no mention of a column that merely shares
    a word with them (standard_level), and neither is a word joined by a hyphen to another ('score' in
    'z-score'), unless a column is named by the whole of it."""
    busy = _busy_spans(st) + [m.span() for m in DATA_POINT.finditer(st.text)]  # 'data point': rows, never a column
    stats = [m.span() for m in STAT_PHRASES.finditer(st.text)]
    found = [m for m in vocab.find(st.text, skip=busy)
             if m.how in STRONG or not (any(a < m.end and m.start < b for a, b in stats) or _hyphenated(st.text, m))]
    strong_measure = any(m.how in STRONG and vocab.kind(m.column) == "numeric" for m in found)
    strong_ends = {m.end for m in found if m.how in STRONG and vocab.kind(m.column) == "numeric"}
    for m in [m for m in found if m.how not in STRONG and strong_measure and _passive(st.text, m, strong_ends)]:
        found.remove(m)  # 'home runs hit by the players', 'the number of doubles hit': a verb describing the measure
        st.take(m.start, m.end)
    out: list[Mention] = []
    by_span: dict[tuple[int, int], list[Mention]] = {}
    for m in found:
        by_span.setdefault((m.start, m.end), []).append(m)
    verbs = []
    for (s, e), ms in sorted(by_span.items()):
        if not st.free(s, e):
            continue
        if ms[0].how == "verb":
            verbs.append(ms)
            continue
        if ms[0].how not in STRONG and _statistic_before_of(st.text, s, e):
            continue  # 'sum of invest': the statistic, never a synonym of a column (`value`) it happens to be
        if ms[0].how in BELOW_ROW_NOUN and _is_row_noun(st.text[s:e], vocab.row_nouns):
            continue  # 'how many patients': the rows, not the patient_id column
        if _period_rows(st.text, s, e, ms[0].column):
            continue  # 'how many quarters had ...', 'the 3 quarters with ...': rows that are periods
        if ms[0].how == "part" and vocab.kind(ms[0].column) != "numeric" \
                and _is_row_noun(st.text[s:e], lexicon().entity_nouns):
            continue  # 'how many orders' on a table with order_date: the rows (a count column keeps its noun)
        if len(ms) > 1:
            spec.problems.append(f"'{st.text[s:e]}' could be any of the columns {', '.join(m.column for m in ms)}; "
                                 "say which one.")
            st.take(s, e)
            continue
        out.append(ms[0])
        st.take(s, e)
        if ms[0].how == "unit":  # never a link the answer does not explain
            units = next(iter(vocab.units.get(ms[0].column, [])), "")
            spec.assumptions.append(f"took '{st.text[s:e]}' as `{ms[0].column}` (its unit, {units}, measures it)")
        elif ms[0].how == "synonym":  # a word the column's name does not have: said, so a wrong link is seen
            said = st.text[s:e]
            spec.assumptions.append(f"took '{said}' as `{ms[0].column}` (a word the lexicon gives for it)")
        elif ms[0].how == "head" and len(ms[0].text.split()) < max(
                len(t.words) for t in vocab.terms if t.column == ms[0].column and t.how in ("name", "words")):
            # 'interest' for `realint` (real interest): the name says more than the words, so a wrong link is seen
            spec.assumptions.append(f"took '{st.text[s:e]}' as `{ms[0].column}` (the last word of its name)")
        elif ms[0].how == "clipped":  # the name spells the words' starts: said, so a wrong link is seen
            spec.assumptions.append(f"took '{st.text[s:e]}' as `{ms[0].column}` (its name joins the starts of those "
                                    "words)")
        elif ms[0].how in ("extreme", "extreme_alone"):  # 'the daily high': said, so a wrong link is seen
            said = st.text[s:e]
            if said.split() != words_of(ms[0].column):
                spec.assumptions.append(f"took '{said}' as `{ms[0].column}` (its name says {_extreme_word(ms[0].column)})")
        elif ms[0].how == "meaning":  # the data dictionary named it so
            spec.assumptions.append(f"took '{st.text[s:e]}' as `{ms[0].column}` (the data dictionary: "
                                    f"\"{vocab.meaning(ms[0].column)}\")")
    named = {m.column for m in out}
    measured = any(vocab.kind(c) == "numeric" for c in named)
    for ms in verbs:  # 'how much was spent': the measure the verb names, when it names one
        s, e = ms[0].start, ms[0].end
        if any(m.column in named for m in ms) or measured:
            st.take(s, e)  # 'the tips paid', 'home runs hit': the verb describes a measure already named
        elif len(ms) == 1:
            out.append(ms[0])
            st.take(s, e)
    return sorted(out, key=lambda m: m.start)


def _statistic_before_of(text: str, s: int, e: int) -> bool:
    """A statistic's word (offline/statistics.py PATTERNS: 'sum', 'total', 'mean') standing before 'of' ('sum of X')."""
    from auto_analyst.offline.statistics import PATTERNS

    word = text[s:e]
    return re.match(r"\s+of\b", text[e:]) is not None and any(p.fullmatch(word) for p, _ in PATTERNS)


def _extreme_word(column: str) -> str:
    from auto_analyst.offline.reader.forms import extreme_of

    e = extreme_of(words_of(column))
    return "the maximum" if e and e[0] == "max" else "the minimum"


def _passive(text: str, m: Mention, strong_ends: set[int]) -> bool:
    """A participle after a named measure ('doubles hit') or before 'by' ('hit by the players')."""
    word = text[m.start:m.end]
    if " " in word or not (word.endswith("ed") or word in lexicon().irregular_verbs):
        return False
    return re.match(r"\s+by\b", text[m.end:]) is not None or (m.start - 1) in strong_ends


def _hyphenated(text: str, m: Mention) -> bool:
    before = m.start >= 2 and text[m.start - 1] == "-" and text[m.start - 2].isalnum()
    after = m.end + 1 < len(text) and text[m.end] == "-" and text[m.end + 1].isalnum()
    return before or after


def _busy_spans(st: Reading) -> list[tuple[int, int]]:
    spans, start = [], None
    for i, u in enumerate(st.used + [False]):
        if u and start is None:
            start = i
        elif not u and start is not None:
            spans.append((start, i))
            start = None
    return spans


PERIOD_WORDS = {"quarter", "year", "month", "week", "day", "season"}


def _period_rows(text: str, s: int, e: int, column: str) -> bool:
    """A plural period word naming a period column ('quarters' for column quarter) counts the rows, unless it
    groups ('by quarters', 'which years')."""
    word = text[s:e]
    from auto_analyst.offline.reader.vocabulary import words_of

    if not word.endswith("s") or words_of(column) != [word[:-1]] or word[:-1] not in PERIOD_WORDS:
        return False
    return not re.search(r"\b(?:by|per|each|every|which|what|across)\s+(?:the\s+)?$", text[:s])


def _is_row_noun(phrase: str, nouns: set[str]) -> bool:
    return any(f in nouns for f in lemmas(phrase) | {phrase})


def link_row_nouns(st: Reading, vocab: Vocabulary) -> list[RowNoun]:
    """Nouns naming the rows: the lexicon's, the table's name and its singular, an id column's noun, and
    (when no column claims them) the lexicon's entity nouns ('customers', 'trips')."""
    out = []
    own = vocab.row_nouns
    entities = lexicon().entity_nouns
    value_words = {words for _, _, words in vocab.values if " " not in words}
    for t in st.tokens:
        if t.kind != "word" or not st.free(t.start, t.end):
            continue
        forms = lemmas(t.text) | {t.text}
        # 'among students' where 'student' is a value of a column: a restriction, not the rows (left for the
        # value reader, or unexplained so the question declines: never skipped as if it named every row)
        if not forms & own and forms & entities and forms & value_words:
            continue
        if forms & own or forms & entities:
            out.append(RowNoun(t.start, t.end, t.text, plural=t.text.endswith("s") or t.text in ("people", "children")))
            st.take(t.start, t.end)
    for m in DATA_POINT.finditer(st.text):
        if st.free(m.start(), m.end()):
            out.append(RowNoun(m.start(), m.end(), m.group(0), plural=m.group(0).endswith("s")))
            st.take(m.start(), m.end())
    return out


DATA_POINT = re.compile(r"\bdata\s*points?\b")
TABLE_WORDS = r"(?:dataset|data\s*set|data|file|table|csv|spreadsheet|sheet|dataframe|data\s*frame)s?"
FILE_NAME = re.compile(r"\b[\w.-]+\.(?:csv|xlsx|xls|parquet|json|tsv)\b(?:\s+file)?")
REFERENCE = re.compile(rf"\b(?:(?:in|of|from|for|within|across)\s+)?(?:(?:the|this|our|my|given|provided|whole|entire)\s+)*"
                       rf"((?:[a-z0-9]+\s+){{0,3}}?){TABLE_WORDS}\b(?:'s)?")


def link_table(st: Reading, vocab: Vocabulary) -> bool:
    """'in the Credit.csv file', 'the weather dataset', 'in the given dataset', 'AAPL' on table e5_aapl:
    references to the table are explained (a column or a value named there is read first)."""
    found = False
    for m in FILE_NAME.finditer(st.text):
        if st.free(m.start(), m.end()):
            st.take(m.start(), m.end())
            found = True
    for m in REFERENCE.finditer(st.text):
        words = m.group(1).split()
        if words and not all(w in vocab.table_words for w in words):
            # "the sales data": only the table word is a reference; 'sales' is read as a column or value
            tail = m.start(1) + len(m.group(1))
            if st.free(tail, m.end()):
                st.take(tail, m.end())
                found = True
            continue
        if st.free(m.start(), m.end()):
            st.take(m.start(), m.end())
            found = True
    for t in st.tokens:  # the table's own name written alone
        if t.kind == "word" and len(t.text) >= 4 and t.text in vocab.table_words and st.free(t.start, t.end):
            st.take(t.start, t.end)
            found = True
    return found


def link_superlatives(st: Reading, vocab: Vocabulary, spec: QuerySpec | None = None) -> list[Superlative]:
    """'heaviest', 'the most expensive', 'least humid', 'oldest': max/min of the column the adjective describes.

    An adjective that fits several columns is left unexplained (the part then declines, naming it).
    """
    from auto_analyst.offline.reader.directions import direction_superlatives

    from auto_analyst.offline.statistics import PATTERNS

    out = [Superlative(*hit) for hit in direction_superlatives(st, spec, vocab)]  # 'northernmost': the latitude
    out += _quality_superlatives(st, vocab, spec)
    # 'the difference between the highest and lowest elevation' is the range, not the highest elevation
    phrases = [x.span() for pat, _ in PATTERNS for x in pat.finditer(st.text) if " " in x.group(0).strip()
               and st.free(*x.span())]
    for m in re.finditer(r"\b(?:(most|least)\s+)?([a-z]+)\b", st.text):
        word = m.group(2)
        if not st.free(m.start(2), m.end(2)) or any(a <= m.start(2) and m.end(2) <= b for a, b in phrases):
            continue
        if m.group(1):
            if not st.free(m.start(1), m.end(1)):
                continue
            bases, flip = {word}, m.group(1) == "least"
        elif word.endswith("est") and len(word) > 4:
            bases, flip = adjective_bases(word) - {word}, False
        else:
            continue
        links = _chosen_links({x for b in bases for x in vocab.adjective_links(b)}, st.text[m.end():], vocab)
        if len({c for c, _, _, _ in links}) > 1 and spec is not None and not m.group(1):
            # 'the fastest runner' with km_per_hour and laps_per_min: either could be meant, so neither is guessed
            spec.problems.append(f"'{m.group(0)}' could order several columns ("
                                 f"{', '.join(sorted({f'`{c}`' for c, _, _, _ in links}))}); name the column.")
        if len({c for c, _, _, _ in links}) != 1:
            continue
        col, direction, base, inverse = links.pop()
        if flip:
            direction = "min" if direction == "max" else "max"
        out.append(Superlative(m.start(), m.end(), col, direction, m.group(0)))
        st.take(m.start(), m.end())
        if inverse and spec is not None:
            spec.assumptions.append(f"took '{m.group(0)}' as the {'lowest' if direction == 'min' else 'highest'} `{col}` "
                                    f"(a time or duration: '{base}' orders it the other way)")
    return out


def _chosen_links(links: set[tuple[str, str, str, bool]], after: str, vocab: Vocabulary) -> set:
    """The links of a superlative that fit the question: the column named right after it ('the fastest finish time',
    'the quickest acceleration'), else the columns of the adjective's own measure ('the fastest car': speed) before
    those it orders the other way (times), which count only when no column of its own measure is there."""
    named = next(iter(vocab.find(after)), None)
    if named is not None and not after[:named.start].strip() and vocab.kind(named.column) == "numeric":
        # 'the fastest km per hour': the order comes from the column the answer uses, never from another one
        return {x for x in links if x[0] == named.column}
    return {x for x in links if not x[3]} or links


def _quality_superlatives(st: Reading, vocab: Vocabulary, spec: QuerySpec | None) -> list[Superlative]:
    """'the most fuel-efficient': the maximum of the one numeric column named by the noun of that quality ('fuel
    efficiency', a name of Miles_per_Gallon), said in the assumptions."""
    from auto_analyst.offline.reader.morphology import quality_nouns

    out = []
    for m in re.finditer(r"\b(most|least)\s+([a-z]+)(?:(-|\s+)([a-z]+))?\b", st.text):
        tries = ([(m.group(2), m.group(4), m.end())] if m.group(4) else []) + [(None, m.group(2), m.end(2))]
        for qualifier, adjective, end in tries:
            if not st.free(m.start(), end) or (vocab.adjective(adjective) and not qualifier):
                continue  # 'most expensive': the lexicon's adjective, read by link_superlatives
            cols = set()
            for noun in quality_nouns(adjective):
                phrase = f"{qualifier} {noun}" if qualifier else noun
                cols |= {x.column for x in vocab.find(phrase) if x.start == 0 and x.end == len(phrase)}
            if len(cols) != 1 or vocab.kind(next(iter(cols))) != "numeric":
                continue
            col, said = cols.pop(), st.text[m.start():end]
            out.append(Superlative(m.start(), end, col, "max" if m.group(1) == "most" else "min", said))
            st.take(m.start(), end)
            if spec is not None:
                spec.assumptions.append(f"took '{said}' as the {'highest' if m.group(1) == 'most' else 'lowest'} "
                                        f"`{col}` (the quality the adjective names)")
            break
    return out


def fuzzy_columns(unknown: list[str], vocab: Vocabulary, spec: QuerySpec) -> list[tuple[str, str]] | None:
    """Close spellings of columns for the unexplained words, as (column, words); None when a word stays
    unexplained (a problem then says which, listing the columns)."""
    taken: list[tuple[str, str]] = []
    numbers = lexicon().number_words  # 'eight' is no misspelling of 'weight'
    counted = [w for w in unknown if w in numbers]
    rest = [w for w in unknown if w not in numbers]
    i = 0
    while i < len(rest):  # two-word phrases first ('delivery tme'), then single words
        pair = " ".join(rest[i:i + 2]) if i + 1 < len(rest) else None
        hits = vocab.close(pair) if pair else []
        if len(hits) == 1:
            taken.append((hits[0], pair))
            spec.assumptions.append(f"took '{pair}' as '{hits[0]}'")
            del rest[i:i + 2]
            continue
        hits = vocab.close(rest[i])
        if len(hits) == 1:
            taken.append((hits[0], rest[i]))
            spec.assumptions.append(f"took '{rest[i]}' as '{hits[0]}'")
            del rest[i]
            continue
        if len(hits) > 1:
            spec.problems.append(f"'{rest[i]}' could be any of the columns {', '.join(hits)}; say which one.")
            return None
        i += 1
    shared = ambiguous_parts(rest, vocab)
    if shared:  # 'radius' with `mean radius`, `worst radius`, `radius error`: a part of several names, never one picked
        phrase, cols = shared[0]
        spec.problems.append(f"'{phrase}' could be any of the columns {', '.join(cols)}; say which one.")
        return None
    if rest:
        spec.problems.append(
            f"I can't tell what {', '.join(repr(w) for w in rest)} refers to: no column or value of table "
            f"'{spec.table}' matches. Columns: {', '.join(vocab.columns)}.{_short_value_hint(rest, vocab)}")
    if counted:
        spec.problems.append(f"I can't tell what {', '.join(map(repr, counted))} counts here; name the column it is a "
                             "value of.")
    return None if rest or counted else taken


def _short_value_hint(words: list[str], vocab: Vocabulary) -> str:
    """' If you mean a value, name its column and quote it: discipline 'B'.' for unread words of one or two characters
    that are values of some column (discipline = 'B'; too short to be read as values without their column's name: 'a' is an article)."""
    said = []
    for w in words:
        if len(w) > 2:
            continue
        said += [f"{c.name} = '{v}'" for c in vocab.table.columns if c.kind in ("categorical", "boolean", "identifier")
                 for v, _ in c.top_values if isinstance(v, str) and v.strip().lower() == w]
    return f" If you mean a value, name its column and quote it: {' or '.join(said)}." if said else ""
