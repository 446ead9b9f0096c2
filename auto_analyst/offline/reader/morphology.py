"""English word forms for the offline reader: plurals, comparatives and superlatives, verb forms.

:func:`lemmas` gives the candidate base forms of a word as written in a question ("heaviest" →
"heavy", "signed" → "sign", "categories" → "category", "bought" → "buy"); the reader matches a
word when one of its candidates is a word of the table's vocabulary. Candidates may include
non-words ("hott" on the way to "hot"): they only ever match vocabulary words. The rules are the
regular inflections of English (-s/-es/-ies plurals, -er/-est with consonant doubling and a dropped
final e, -ed/-ing); irregular verbs come from the lexicon.

:func:`derived_bases` undoes derivation rather than inflection: the adjective a noun makes ("snowy" →
"snow", "sunny" → "sun", "Japanese" → "Japan", "European" → "Europe", "Canadian" → "Canada"), by the
suffixes of English word formation that make adjectives from nouns (-y, and the place-name suffixes
-ese, -an/-ian/-ean, -ish, -i), and the lexicon's ``demonyms`` for the forms no rule makes ("French" →
"France", "Dutch" → "Netherlands").
"""

from __future__ import annotations

from functools import lru_cache

from auto_analyst.offline.reader.lexicon import lexicon

__all__ = ["adjective_bases", "derived_bases", "lemmas", "plural", "quality_nouns", "singular"]

IRREGULAR_PLURALS = {"people": "person", "children": "child", "men": "man", "women": "woman", "feet": "foot",
                     "teeth": "tooth", "mice": "mouse", "geese": "goose", "criteria": "criterion", "indices": "index",
                     "analyses": "analysis", "phenomena": "phenomenon"}
SINGULAR_TO_PLURAL = {v: k for k, v in IRREGULAR_PLURALS.items()}
# words ending in s that are not plurals ("status", "analysis", "gas")
NOT_PLURAL_ENDINGS = ("ss", "us", "is", "as", "os")


def singular(word: str) -> str:
    """The singular of a plural noun ('categories' → 'category'); other words unchanged."""
    if word in IRREGULAR_PLURALS:
        return IRREGULAR_PLURALS[word]
    if len(word) > 4 and word.endswith("ies"):
        return word[:-3] + "y"
    if len(word) > 4 and word.endswith(("ses", "xes", "zes", "ches", "shes")):
        return word[:-2]
    if len(word) > 3 and word.endswith("s") and not word.endswith(NOT_PLURAL_ENDINGS):
        return word[:-1]
    return word


def plural(word: str) -> str:
    """The plural of a noun ('category' → 'categories', 'class' → 'classes')."""
    if word in SINGULAR_TO_PLURAL:
        return SINGULAR_TO_PLURAL[word]
    if len(word) > 2 and word.endswith("y") and word[-2] not in "aeiou":
        return word[:-1] + "ies"
    if word.endswith(("s", "x", "z", "ch", "sh")):
        return word + "es"
    return word + "s"


def _undouble(stem: str) -> list[str]:
    """'hott' → ['hott', 'hot']; 'larg' → ['larg', 'large']."""
    out = [stem]
    if len(stem) > 2 and stem[-1] == stem[-2] and stem[-1] not in "aeiosl":
        out.append(stem[:-1])
    if stem and stem[-1] not in "aeiouy":
        out.append(stem + "e")
    return out


@lru_cache(maxsize=20000)
def lemmas(word: str) -> frozenset[str]:
    """Candidate base forms of a noun or verb (plural, -ed, -ing, -s, irregular verbs), the word included.

    Comparative and superlative forms are left to :func:`adjective_bases`: 'highest' must not read
    as a column called 'High'.
    """
    w = word.lower().strip("'")
    if w.endswith("'s"):
        w = w[:-2]
    out = {w}
    lex = lexicon()
    if w in lex.irregular_verbs:
        out.add(lex.irregular_verbs[w])
    out.add(singular(w))
    n = len(w)
    if n > 4 and w.endswith("ied"):
        out.add(w[:-3] + "y")
    elif n > 3 and w.endswith("ed"):
        out.update(_undouble(w[:-2]))
        out.add(w[:-1])  # created → create
    if n > 4 and w.endswith("ing"):
        out.update(_undouble(w[:-3]))
    return frozenset(x for x in out if x)


@lru_cache(maxsize=20000)
def adjective_bases(word: str) -> frozenset[str]:
    """Candidate positive forms of a comparative or superlative ('heaviest' → 'heavy', 'hotter' → 'hot',
    'largest' → 'large'), and of an adverb ('annually' → 'annual'); the word itself included."""
    w = word.lower()
    out = {w}
    n = len(w)
    if n > 4 and w.endswith("iest"):
        out.add(w[:-4] + "y")
    elif n > 4 and w.endswith("est"):
        out.update(_undouble(w[:-3]))
    if n > 3 and w.endswith("ier"):
        out.add(w[:-3] + "y")
    elif n > 3 and w.endswith("er"):
        out.update(_undouble(w[:-2]))
    if n > 3 and w.endswith("ly"):
        out.add(w[:-2])
        if w.endswith("ily"):
            out.add(w[:-3] + "y")
    return frozenset(x for x in out if x)


# adjective suffix → what the noun may end with instead (English word formation: -y makes 'snowy' of 'snow';
# the place-name suffixes make 'Japanese' of 'Japan', 'Canadian' of 'Canada', 'Turkish' of 'Turkey'); the longest
# suffix is tried first, and every candidate is only ever matched against a value or column word of the table
DERIVING_SUFFIXES = (("ese", ("", "a")), ("ian", ("", "a", "ia", "y", "e")), ("ean", ("e", "ea", "")),
                     ("an", ("", "a", "o", "e")), ("ish", ("", "ey", "y", "land", "and")), ("i", ("",)), ("n", ("",)),
                     ("y", ("", "e")))
MIN_DERIVED_BASE = 3
"""A base shorter than this ('su' of 'sunny' before undoubling aside) is too short to name anything reliably."""


@lru_cache(maxsize=20000)
def derived_bases(word: str) -> frozenset[str]:
    """Candidate nouns an adjective is derived from ('snowy' → 'snow', 'sunny' → 'sun', 'japanese' → 'japan',
    'european' → 'europe', 'german' → 'germany'), the word itself left out; plural adjectives of people
    ('Europeans', 'Canadians') too. Candidates may be non-words: they only ever match a table's words.

    Irregular forms come from the lexicon's ``demonyms`` ('french' → 'france'); a base is at least
    :data:`MIN_DERIVED_BASE` letters.
    """
    w = word.lower()
    if w.endswith("s") and len(w) > 4 and not w.endswith(NOT_PLURAL_ENDINGS) and w[:-1].endswith(("an", "i", "ese")):
        w = w[:-1]  # 'Canadians', 'Pakistanis'
    out: set[str] = set()
    demonyms = lexicon().demonyms
    if w in demonyms:
        out.update(demonyms[w])
    for suffix, endings in DERIVING_SUFFIXES:
        if len(w) <= len(suffix) + 2 or not w.endswith(suffix):
            continue
        stem = w[: -len(suffix)]
        stems = _undouble(stem)[:2] if suffix == "y" else [stem]  # 'sunny' → 'sun', 'foggy' → 'fog'
        for st in stems:
            for end in endings:
                out.add(st + end)
        if suffix == "n":
            out.add(w + "y")  # 'german' → 'germany' (the adjective is the shorter word)
    out.discard(w)
    out.discard(word.lower())
    return frozenset(x for x in out if len(x) >= MIN_DERIVED_BASE)


# adjective ending → the endings of the noun of its quality (efficient → efficiency, humid → humidity, stable →
# stability, productive → productivity, popular → popularity, dense → density, happy → happiness)
QUALITY_SUFFIXES = (("ent", ("ency", "ence")), ("ant", ("ance", "ancy")), ("ble", ("bility",)), ("ive", ("ivity", "iveness")),
                    ("ous", ("osity", "ousness")), ("y", ("iness",)), ("e", ("ity", "eness")), ("", ("ity", "ness")))


@lru_cache(maxsize=20000)
def quality_nouns(adjective: str) -> frozenset[str]:
    """Candidate nouns naming the quality an adjective describes ('efficient' → 'efficiency', 'humid' → 'humidity',
    'profitable' → 'profitability'); they only ever match a table's column words."""
    w = adjective.lower()
    out: set[str] = set()
    for ending, nouns in QUALITY_SUFFIXES:
        if len(w) > len(ending) + 2 and w.endswith(ending):
            stem = w[: len(w) - len(ending)] if ending else w
            out.update(stem + n for n in nouns)
    return frozenset(out)
