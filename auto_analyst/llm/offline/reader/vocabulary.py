"""The words a table answers to, built from its own column names and values plus the curated lexicon.

For each column the vocabulary holds *terms*: word sequences that name it, each with how it was made
and a strength (a longer match wins, then a stronger one; two columns tied on both make the word
ambiguous, which the reader declines rather than guess):

======================  ========  =============================================================
how                     strength  example (column → words)
======================  ========  =============================================================
name                    10        ``Miles_per_Gallon`` → "miles per gallon" (snake/camel case split)
words                   9         ``distance_km`` → "distance", ``Weight_in_lbs`` → "weight"
                                  (unit suffixes dropped), "discount percent" (unit said in words)
flag                    9         ``is_member`` → "member", ``storm`` → "stormy"
expanded                8         ``rel_hum_pct`` → "relative humidity" (abbreviations expanded)
initials                7         ``Miles_per_Gallon`` → "mpg"
event                   6         ``signup_date`` → "sign up" (so "signed up in 2022" reads it)
head                    6         ``rel_hum_pct`` → "humidity" (the head word, when one column has it)
synonym                 5         ``sales_eur`` → "turnover", ``precip_mm`` → "rain"
verb                    4         ``sales_eur`` → "spend" ("how much was spent")
part                    3         ``store_code`` → "store" (a word only this column has)
======================  ========  =============================================================

Words match by their base forms (:func:`~auto_analyst.llm.offline.reader.morphology.lemmas`), so
plurals and verb forms need no terms of their own. Gradable adjectives ("heaviest", "most expensive")
point at the columns whose terms are among the adjective's concepts in the lexicon. Row nouns are the
lexicon's, the table's own name and its singular, and the noun of an id column (``patient_id`` →
"patients"). Vocabularies are cached per table content.
"""

from __future__ import annotations

import difflib
import hashlib
import itertools
import json
from dataclasses import dataclass, field
from functools import lru_cache

from auto_analyst.data.description import TableDescription
from auto_analyst.llm.offline.reader.lexicon import lexicon
from auto_analyst.llm.offline.reader.morphology import adjective_bases, lemmas, plural, singular
from auto_analyst.llm.offline.reader.text import fold, normalize, tokenize, words_of

__all__ = ["Mention", "Term", "Vocabulary", "vocabulary", "CLOSE_MATCH"]

CLOSE_MATCH = 0.8
"""difflib ratio a misspelling must reach to be taken as a column (click's 'did you mean' uses 0.6;
we ask for more because we act on the match)."""

GENERIC = {"column", "columns", "field", "fields", "variable", "variables", "feature", "features", "unnamed", "col",
           "code", "codes", "number", "numbers", "name", "names", "value", "values", "count", "total", "level",
           "group", "date", "dates", "time", "times", "price", "amount", "rate", "rates", "type", "id", "index",
           "data", "info", "score", "new", "old", "is", "has", "of", "the", "in", "per", "and", "by", "a", "no", "nr"}
DATE_WORDS = {"date", "time", "on", "at", "dt", "day", "timestamp", "ts", "datetime", "when", "year", "yr"}
FLAG_PREFIXES = {"is", "has", "was", "did", "flag", "flg", "had", "can", "any"}
STRENGTH = {"backtick": 12, "quoted": 11, "name": 10, "words": 9, "flag": 9, "expanded": 8, "initials": 7,
            "event": 6, "head": 6, "synonym": 5, "verb": 4, "part": 3}


@dataclass(frozen=True)
class Term:
    """Words that name ``column``; ``how`` says how the term was made (see the module table)."""

    words: tuple[str, ...]
    column: str
    how: str

    @property
    def strength(self) -> int:
        return STRENGTH[self.how]


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


def _verb_form(token: str) -> bool:
    """A past form ('ordered', 'admitted', 'bought'), which is how a date column's event is said."""
    return token.endswith("ed") or token in lexicon().irregular_verbs


def _is_noun(token: str) -> bool:
    lex = lexicon()
    return bool(lemmas(token) & (lex.entity_nouns | lex.row_nouns))


def _content(words: list[str], units: dict[str, str]) -> tuple[list[str], list[str]]:
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


def split_compound(word: str) -> list[str] | None:
    """'realgdp' → ['real', 'gdp'], 'totalsales' → ['total', 'sales']: a word of two known parts (compound
    parts and abbreviations of the lexicon, or units), each of at least 2 letters; None otherwise."""
    lex = lexicon()
    known = lex.compound_parts | set(lex.abbreviations) | {w for e in lex.abbreviations.values() for x in e for w in x.split()}
    if len(word) < 5 or not word.isalpha() or word in known:
        return None
    for k in range(len(word) - 2, 1, -1):  # the longest first part first
        a, b = word[:k], word[k:]
        if a in known and (b in known or b in lex.units) and len(b) >= 2:
            return [a, b]
    return None


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
            best: list[tuple[int, int, Term]] = []
            for term in self._candidates(t.text):
                n = len(term.words)
                if i + n > len(toks) or any(toks[i + k].kind != "word" for k in range(n)):
                    continue
                if not all(_matches(term.words[k], toks[i + k].text) for k in range(n)):
                    continue
                if term.how == "event" and n == 1 and not _verb_form(t.text):
                    continue  # 'ordered' reads the order date; 'orders' are rows
                if term.how == "verb" and not _verb_form(t.text) and (t.text.endswith("s") or _is_noun(t.text)):
                    continue  # 'spent', 'spend' name the measure; 'orders' is a noun
                best.append((n, term.strength, term))
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
        ('heaviest' → Weight_in_lbs, max)."""
        adjectives = lexicon().adjectives
        out = []
        for base in adjective_bases(word) | {word}:
            entry = adjectives.get(base)
            if not entry:
                continue
            concepts = {tuple(c.split()) for c in entry["concepts"]}
            cols = []
            for t in self.terms:
                if t.how not in ("name", "words", "expanded", "head") or self.kind(t.column) != "numeric":
                    continue
                if t.words in concepts or (t.words[-1:] in concepts):
                    cols.append(t.column)
            for col in dict.fromkeys(cols):
                out.append((col, entry["direction"], base))
        return out

    def value_words(self) -> set[str]:
        return {w for c in self.table.columns for v, _ in c.top_values if isinstance(v, str) for w in words_of(v)}


def _column_terms(col, units: dict[str, str], abbreviations: dict[str, list[str]]) -> tuple[list[Term], list[str]]:
    lex = lexicon()
    words = words_of(col.name)
    if not words:
        return [], []
    terms = [Term(tuple(words), col.name, "name")]
    split = [x for w in words for x in (split_compound(w) or [w])]
    if split != words:
        terms.append(Term(tuple(split), col.name, "words"))
        words = split
    content, unit_words = _content(words, units)
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
    # initials of a name of three words or more: Miles_per_Gallon → mpg, Body_Mass_Index → bmi
    if len(words) >= 3 and all(w.isalpha() for w in words):
        terms.append(Term(("".join(w[0] for w in words),), col.name, "initials"))
    # head words: the last content word (or its expansion) alone; a ratio 'X per Y' has no head
    heads: list[list[str]] = []
    if "per" not in content[1:]:
        heads = [content[-1:]] + [e[-1:] for e in expanded] + [e[-2:] for e in expanded if len(e) >= 2]
    for h in heads:
        if h and list(h) != content and not (len(h) == 1 and (h[0] in GENERIC or len(h[0]) < 3)):
            terms.append(Term(tuple(h), col.name, "head"))
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
    parts = [w for w in content if len(w) >= 4 and w not in GENERIC and not w.isdigit()]
    return terms, parts


def _row_nouns(table: TableDescription, id_cols: list[str]) -> set[str]:
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


def _id_columns(table: TableDescription) -> list[str]:
    out = []
    for c in table.columns:
        w = words_of(c.name)
        if c.kind == "identifier" or (w and w[-1] in ("id", "ids", "uuid", "guid", "key")) or (w == ["no"]):
            out.append(c.name)
    return out


def _identifying(table: TableDescription, id_cols: list[str]) -> str | None:
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


def _values(table: TableDescription) -> list[tuple[str, object, str]]:
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


def _key(table: TableDescription) -> str:
    parts = [table.name] + [f"{c.name}|{c.kind}|{c.distinct}|{c.top_values[:3]}" for c in table.columns]
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
    for col in table.columns:
        terms, parts = _column_terms(col, units, abbreviations)
        vocab.terms += terms
        parts_of[col.name] = parts
        _, dropped = _content(words_of(col.name), units)
        spoken = [units[u] for u in dropped if u in units]
        vocab.units[col.name] = list(dict.fromkeys([u for u in dropped if u in units] + [w for sp in spoken for w in sp.split()]
                                                   + [a for sp in spoken for a in lex.unit_aliases.get(sp, [])]))
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
        if t.how in ("head", "synonym", "part", "initials"):
            counts.setdefault((t.words, t.how), set()).add(t.column)
    vocab.terms = [t for t in vocab.terms if t.how not in ("head", "synonym", "part", "initials")
                   or len(counts[(t.words, t.how)]) == 1]
    vocab.terms = list(dict.fromkeys(vocab.terms))
    for t in vocab.terms:
        for form in lemmas(t.words[0]) | {t.words[0]}:
            vocab.by_first.setdefault(form, []).append(t)
    id_cols = _id_columns(table)
    vocab.id_column = _identifying(table, id_cols)
    vocab.row_nouns = _row_nouns(table, id_cols)
    vocab.table_words = {w for w in words_of(table.name) if len(w) >= 3 and not w.isdigit()}
    vocab.values = _values(table)
    if len(_CACHE) > 64:
        _CACHE.clear()
    _CACHE[key] = vocab
    return vocab


@lru_cache(maxsize=4096)
def phrase_words(text: str) -> tuple[str, ...]:
    """Words of already-normalised text (cached)."""
    return tuple(t.text for t in tokenize(fold(normalize(text))) if t.kind == "word")
