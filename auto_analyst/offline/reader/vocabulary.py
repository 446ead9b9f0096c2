"""The words a table answers to, built from its own column names and values plus the curated lexicon.

For each column the vocabulary holds *terms*: word sequences that name it, each with how it was made
and a strength (a longer match wins, then a stronger one; two columns tied on both make the word
ambiguous, which the reader declines rather than guess):

======================  ========  =============================================================
how                     strength  example (column → words)
======================  ========  =============================================================
name                    10        ``Miles_per_Gallon`` → "miles per gallon" (snake/camel case split)
words                   9         ``distance_km`` → "distance", ``Weight_in_lbs`` → "weight"
                                  (unit suffixes dropped), "discount percent" (unit said in words),
                                  ``rainfall_total`` → "total rainfall" (a statistic's word said first)
flag                    9         ``is_member`` → "member", ``storm`` → "stormy"
expanded                8         ``rel_hum_pct`` → "relative humidity" (abbreviations expanded)
extreme                 8         ``temp_max`` → "maximum temperature", "high temp" (max/min said in words, either
                                  order; :mod:`~auto_analyst.offline.reader.forms`)
reordered               7         ``sleep_total`` → "total sleep" (the name's own words in another order)
initials                7         ``Miles_per_Gallon`` → "mpg"
clipped                 7         ``TOTEMP`` → "total employment", ``GNPDEFL`` → "GNP deflator" (the name joins
                                  the starts of two or three words of the question, each at least 3 letters
                                  unless whole; found in the question, not listed)
meaning                 7         ``v2`` → "net amount" (the data dictionary's "v2: net amount after refunds")
event                   6         ``signup_date`` → "sign up" (so "signed up in 2022" reads it)
head                    6         ``rel_hum_pct`` → "humidity" (the head word, when one column has it)
extreme_alone           6         ``temp_max`` → "high", "highs" (two max columns: both named, so declined)
extreme_rest            6         ``temp_max`` → "temperature" (shared with ``temp_min``: both named, so declined)
synonym                 5         ``sales_eur`` → "turnover", ``precip_mm`` → "rain"
verb                    4         ``sales_eur`` → "spend" ("how much was spent")
part                    3         ``store_code`` → "store" (a word only this column has)
======================  ========  =============================================================

Words match by their base forms (:func:`~auto_analyst.offline.reader.morphology.lemmas`), so
plurals and verb forms need no terms of their own. Gradable adjectives ("heaviest", "most expensive")
point at the columns whose terms are among the adjective's concepts in the lexicon. Row nouns are the
lexicon's, the table's own name and its singular, and the noun of an id column (``patient_id`` →
"patients"). Vocabularies are cached per table content.
"""

from __future__ import annotations

import difflib
import hashlib
import json
from dataclasses import dataclass, field
from functools import lru_cache

from auto_analyst.data.description import TableDescription
from auto_analyst.offline.reader.forms import paired_extremes, said_of_rows
from auto_analyst.offline.reader.lexicon import lexicon
from auto_analyst.offline.reader.morphology import adjective_bases, lemmas
from auto_analyst.offline.reader.terms import (FUNCTION_WORDS, STRENGTH, Term, column_terms, content_words, per_time,
                                               extreme_units, id_columns, identifying_column, listed_values,
                                               meaning_name, row_nouns, sibling_tails, split_compound)
from auto_analyst.offline.reader.text import fold, normalize, tokenize, words_of
from auto_analyst.offline.statistics import PATTERNS

__all__ = ["Mention", "Term", "Vocabulary", "vocabulary", "split_compound", "words_of", "CLOSE_MATCH", "meaning_name"]

CLOSE_MATCH = 0.8
"""difflib ratio a misspelling must reach to be taken as a column (click's 'did you mean' uses 0.6;
we ask for more because we act on the match)."""

@dataclass
class Mention:
    """A column named in the text: where (characters of the normalised text), which column, and how."""

    start: int
    end: int
    column: str
    how: str
    text: str


def _matches(term_word: str, token: str) -> bool:
    return term_word == token or bool(lemmas(term_word) & lemmas(token))


def _spelled_by(key: str, words: list[str]) -> bool:
    """Whether ``key`` is the words' starts joined, each start at least 3 letters (2 when the whole word)."""
    if not words:
        return not key
    w = words[0]
    for k in range(min(len(w), len(key)), 1, -1):
        if (k >= 3 or k == len(w)) and key.startswith(w[:k]) and _spelled_by(key[k:], words[1:]):
            return True
    return False


def _statistic(token: str) -> bool:
    """Whether ``token`` alone is a statistic's word ('average', 'mean', 'total')."""
    return any(p.fullmatch(token) for p, _ in PATTERNS)


def _adjective_before(toks: list, k: int) -> bool:
    """Whether token ``k`` is a word a preceding 'high'/'low' would describe (not a function word or the end)."""
    return k < len(toks) and toks[k].kind in ("word", "number") and toks[k].text not in FUNCTION_WORDS \
        and toks[k].text not in ("with", "during", "from", "over", "under", "above", "below", "recorded", "reading")


def _verb_form(token: str) -> bool:
    """A past form ('ordered', 'admitted', 'bought'), which is how a date column's event is said."""
    return token.endswith("ed") or token in lexicon().irregular_verbs


def _is_noun(token: str) -> bool:
    lex = lexicon()
    return bool(lemmas(token) & (lex.entity_nouns | lex.row_nouns))


@dataclass
class Vocabulary:
    """Terms, values, row nouns and adjectives of one table (build with :func:`vocabulary`)."""

    table: TableDescription
    columns: list[str]
    terms: list[Term] = field(default_factory=list)
    by_first: dict[str, list[Term]] = field(default_factory=dict)
    units: dict[str, list[str]] = field(default_factory=dict)  # column → unit words of its name
    row_nouns: set[str] = field(default_factory=set)
    table_words: set[str] = field(default_factory=set)
    id_column: str | None = None
    values: list[tuple[str, object, str]] = field(default_factory=list)  # (column, value, folded words)
    _close: dict[str, list[str]] = field(default_factory=dict, repr=False)

    def kind(self, column: str) -> str:
        return next(c.kind for c in self.table.columns if c.name == column)

    def meaning(self, column: str) -> str:
        return next((c.meaning for c in self.table.columns if c.name == column), "")

    # ----------------------------------------------------------------------------- finding
    def find(self, text: str, skip: list[tuple[int, int]] = ()) -> list[Mention]:
        """Column mentions in normalised ``text``, left to right, longest then strongest first.

        Spans in ``skip`` are not read. A span two columns name equally well is reported once for each
        column (the caller declines it as ambiguous).
        """
        toks = tokenize(text)
        out: list[Mention] = []
        i = 0
        while i < len(toks):
            t = toks[i]
            if any(a <= t.start < b for a, b in skip):
                i += 1
                continue
            if t.kind in ("backtick", "quoted"):
                col = self.lookup(t.inner)
                if col:
                    out.append(Mention(t.start, t.end, col, "backtick" if t.kind == "backtick" else "quoted", t.text))
                i += 1
                continue
            best = self._best_at(toks, i)
            if best and max(n for n, _, _ in best) >= 2 and _statistic(t.text):
                # 'average radius error': 'average radius' (`mean radius` said otherwise) and 'radius error' overlap;
                # the phrase reaching further wins and the statistic word stands alone ('mean radius' alone stays)
                after = self._best_at(toks, i + 1) if i + 1 < len(toks) else []
                if after and i + 1 + max(n for n, _, _ in after) > i + max(n for n, _, _ in best):
                    i += 1
                    continue
            if not best:
                i += 1
                continue
            top = max((n, s) for n, s, _ in best)
            winners = list(dict.fromkeys(term.column for n, s, term in best if (n, s) == top))
            how = next(term.how for n, s, term in best if (n, s) == top)
            end = toks[i + top[0] - 1].end
            for col in winners:
                out.append(Mention(t.start, end, col, how, text[t.start:end]))
            i += top[0]
        return out

    def _best_at(self, toks: list, i: int) -> list[tuple[int, int, "Term"]]:
        """(words, strength, term) of every term matching from ``toks[i]`` on (the clipped name when it is longer
        or stronger)."""
        t = toks[i]
        best: list[tuple[int, int, Term]] = []
        for term in self._candidates(t.text):
            n = len(term.words)
            if i + n > len(toks) or any(toks[i + k].kind not in ("word", "number") for k in range(n)):
                continue
            if not all(_matches(term.words[k], toks[i + k].text) for k in range(n)):
                continue
            if term.how == "event" and n == 1 and not _verb_form(t.text):
                continue  # 'ordered' reads the order date; 'orders' are rows
            if term.how == "verb" and not _verb_form(t.text) and (t.text.endswith("s") or _is_noun(t.text)):
                continue  # 'spent', 'spend' name the measure; 'orders' is a noun
            if term.how == "extreme_alone" and not t.text.endswith("s") and _adjective_before(toks, i + 1):
                continue  # 'a high of 5', 'the daily high' name temp_max; 'high wind', 'a high correlation' do not
            if term.how in ("extreme", "extreme_alone") and said_of_rows(toks, i, n):
                continue  # 'days with high temperatures', 'had a high temperature': hot days, no threshold said
            best.append((n, term.strength, term))
        clipped = self._clipped(toks, i)
        if clipped is not None and (not best or (clipped[0], STRENGTH["clipped"]) > max((n, s) for n, s, _ in best)):
            best = [(clipped[0], STRENGTH["clipped"], Term(tuple(toks[i + k].text for k in range(clipped[0])),
                                                            clipped[1], "clipped"))]
        return best

    def _clipped(self, toks: list, i: int) -> tuple[int, str] | None:
        """(words, column) when the words from ``toks[i]`` on are spelled, clipped, by one column's name:
        'total employment' for TOTEMP (tot + emp), 'gnp deflator' for GNPDEFL. Each word gives at least its first 3
        letters (2 when whole), two or three words, ordinary words ('of', 'the') never; one column only."""
        from auto_analyst.offline.reader.terms import FUNCTION_WORDS

        found: set[tuple[int, str]] = set()
        for col in self.columns:
            key = "".join(words_of(col))
            if len(key) < 5 or not key.isalpha():
                continue
            for n in (2, 3):
                words = [toks[i + k] for k in range(n) if i + k < len(toks)]
                if len(words) < n or any(w.kind != "word" or w.text in FUNCTION_WORDS for w in words):
                    break
                if _spelled_by(key, [w.text for w in words]):
                    found.add((n, col))
        return found.pop() if len(found) == 1 else None

    def _candidates(self, word: str) -> list[Term]:
        seen: list[Term] = []
        for form in lemmas(word) | {word}:
            seen += self.by_first.get(form, [])
        return list(dict.fromkeys(seen))

    def lookup(self, name: str) -> str | None:
        """A column by its exact name, else by its name ignoring case, spaces and underscores."""
        if name in self.columns:
            return name
        key = " ".join(words_of(name))
        hits = {t.column for t in self.terms if t.how in ("name", "words") and " ".join(t.words) == key}
        if len(hits) == 1:
            return hits.pop()
        exact = [c for c in self.columns if fold(c).strip() == fold(name).strip()]
        return exact[0] if len(exact) == 1 else None

    def close(self, words: str) -> list[str]:
        """Columns one close spelling away from ``words`` (difflib ratio ≥ :data:`CLOSE_MATCH`)."""
        words = " ".join(words_of(words))
        if len(words) < 4:
            return []
        hit = self._close.get(words)
        if hit is None:
            hit = self._close[words] = self._close_uncached(words)
        return hit

    def _close_uncached(self, words: str) -> list[str]:
        scored: dict[str, float] = {}
        n = len(words)
        for t in self.terms:
            if t.how not in ("name", "words", "expanded", "head"):
                continue
            phrase = " ".join(t.words)
            if _negates(words.split(), list(t.words)):
                continue  # 'employment' is no misspelling of 'unemployment': a correction never flips the meaning
            if 2 * min(n, len(phrase)) < CLOSE_MATCH * (n + len(phrase)):
                continue  # lengths too far apart for the ratio to reach the bar
            m = difflib.SequenceMatcher(None, words, phrase)
            if m.real_quick_ratio() < CLOSE_MATCH or m.quick_ratio() < CLOSE_MATCH:
                continue
            r = m.ratio()
            if r >= CLOSE_MATCH:
                scored[t.column] = max(r, scored.get(t.column, 0))
        if not scored and " " not in words:
            # an abbreviated column name: 'infl' for 'inflation' (at least 4 letters, one column only)
            for t in self.terms:
                p = " ".join(t.words)
                if t.how == "name" and len(p) >= 4 and " " not in p and words.startswith(p) and len(p) >= 0.4 * len(words):
                    scored[t.column] = 0.8
        return sorted(scored, key=lambda c: -scored[c])

    def adjective(self, word: str) -> list[tuple[str, str, str]]:
        """(column, 'max'|'min', base adjective) for a gradable adjective of some column's measure
        ('heaviest' → Weight_in_lbs, max; 'fastest' → finish_time, min)."""
        return [(c, d, b) for c, d, b, _ in self.adjective_links(word)]

    def adjective_links(self, word: str) -> list[tuple[str, str, str, bool]]:
        """As :meth:`adjective`, with whether the column is one of the adjective's ``inverse`` measures (the lexicon:
        'fastest' on a time is its minimum). An inverse measure is read from the column's name or from its unit
        ('duration' for a column in seconds), never from synonyms."""
        adjectives = lexicon().adjectives
        out = []
        for base in adjective_bases(word) | {word}:
            entry = adjectives.get(base)
            if not entry:
                continue
            flip = "min" if entry["direction"] == "max" else "max"
            for words, direction, inverse, hows in (
                    (entry["concepts"], entry["direction"], False, ("name", "words", "expanded", "head")),
                    (entry.get("inverse", []), flip, True, ("name", "words", "expanded", "head", "unit"))):
                concepts = {tuple(c.split()) for c in words}
                cols = [t.column for t in self.terms if t.how in hows and self.kind(t.column) == "numeric"
                        and (t.words in concepts or t.words[-1:] in concepts) and not (inverse and per_time(t.column))]
                if not inverse and entry.get("inverse"):  # 'fast' on a rate per time (m_per_s): a speed
                    cols += [c for c in self.columns if self.kind(c) == "numeric" and per_time(c)]
                out += [(col, direction, base, inverse) for col in dict.fromkeys(cols)]
        return out

    def value_words(self) -> set[str]:
        return {w for c in self.table.columns for v, _ in c.top_values if isinstance(v, str) for w in words_of(v)}


NEGATING_PREFIXES = ("un", "non", "in", "im", "ir", "il", "dis", "anti")
"""Prefixes that turn a word into its opposite (English morphology: un-, non-, in-/im-/ir-/il-, dis-, anti-)."""


def _negates(asked: list[str], term: list[str]) -> bool:
    """Whether a word of ``asked`` and the same place of ``term`` differ only by a negating prefix."""
    return len(asked) == len(term) and any(
        a != b and any(a == p + b or b == p + a for p in NEGATING_PREFIXES) for a, b in zip(asked, term))


def _key(table: TableDescription) -> str:
    parts = [table.name, *table.same_rows_views] + [f"{c.name}|{c.kind}|{c.distinct}|{c.top_values[:3]}|{c.meaning}" for c in table.columns]
    return hashlib.sha1(json.dumps(parts).encode()).hexdigest()


_CACHE: dict[str, Vocabulary] = {}


def vocabulary(table: TableDescription) -> Vocabulary:
    """The vocabulary of ``table`` (built once per table content, then cached)."""
    key = _key(table)
    hit = _CACHE.get(key)
    if hit is not None:
        hit.table = table
        return hit
    lex = lexicon()
    units, abbreviations = lex.units, lex.abbreviations
    vocab = Vocabulary(table=table, columns=[c.name for c in table.columns])
    parts_of: dict[str, list[str]] = {}
    paired = paired_extremes(table)
    tails = sibling_tails([c.name for c in table.columns])  # `brainwt` beside `bodywt`: brain + wt
    for col in table.columns:
        terms, parts = column_terms(col, units, abbreviations, paired=col.name in paired, tails=tails)
        vocab.terms += terms
        parts_of[col.name] = parts
        _, col_units = extreme_units(col, lex.units, col.name in paired)  # 'min' of temp_min is no unit
        _, dropped = content_words(words_of(col.name), col_units)
        spoken = [col_units[u] for u in dropped if u in col_units]
        vocab.units[col.name] = list(dict.fromkeys([u for u in dropped if u in col_units] + [w for sp in spoken for w in sp.split()]
                                                   + [a for sp in spoken for a in lex.unit_aliases.get(sp, [])]))
        if col.kind == "numeric":  # 'energy consumption' for kwh: the quantity its unit measures
            whole = words_of(col.name)  # a column named by its unit alone ('kwh') keeps the unit as its name
            measured_in = spoken or ([col_units[whole[0]]] if len(whole) == 1 and whole[0] in col_units else [])
            if per_time(col.name):  # the 's' of m_per_s is a denominator: a speed, not a duration
                measured_in = []
            vocab.terms += [Term(tuple(q.split()), col.name, "unit") for sp in measured_in
                            for q in lex.quantities.get(sp, [])]
            if measured_in and not vocab.units[col.name]:
                vocab.units[col.name] = [whole[0]]
    vocab.terms += [Term(words, col.name, "meaning") for col in table.columns
                    if (words := meaning_name(col.meaning, col.name))]
    # a word only one column has ('store' for store_code) is a weak term of that column
    owners: dict[str, set[str]] = {}
    for col, parts in parts_of.items():
        for w in parts:
            owners.setdefault(w, set()).add(col)
    named = {t.words for t in vocab.terms if t.how in ("name", "words", "flag", "expanded", "head")}
    for w, cols in owners.items():
        if len(cols) == 1 and (w,) not in named:
            vocab.terms.append(Term((w,), cols.pop(), "part"))
    # a head or synonym two columns share names neither (the stronger terms still do)
    counts: dict[tuple, set[str]] = {}
    for t in vocab.terms:
        if t.how in ("head", "synonym", "part", "initials", "unit", "meaning"):
            counts.setdefault((t.words, t.how), set()).add(t.column)
    vocab.terms = [t for t in vocab.terms if t.how not in ("head", "synonym", "part", "initials", "unit", "meaning")
                   or len(counts[(t.words, t.how)]) == 1]
    vocab.terms = list(dict.fromkeys(vocab.terms))
    for t in vocab.terms:
        for form in lemmas(t.words[0]) | {t.words[0]}:
            vocab.by_first.setdefault(form, []).append(t)
    id_cols = id_columns(table)
    vocab.id_column = identifying_column(table, id_cols)
    vocab.row_nouns = row_nouns(table, id_cols)
    vocab.table_words = {w for n in [table.name, *table.same_rows_views] for w in words_of(n)
                         if len(w) >= 3 and not w.isdigit()}  # a view showing the table unchanged names it too
    vocab.values = listed_values(table)
    if len(_CACHE) > 64:
        _CACHE.clear()
    _CACHE[key] = vocab
    return vocab


@lru_cache(maxsize=4096)
def phrase_words(text: str) -> tuple[str, ...]:
    """Words of already-normalised text (cached)."""
    return tuple(t.text for t in tokenize(fold(normalize(text))) if t.kind == "word")
