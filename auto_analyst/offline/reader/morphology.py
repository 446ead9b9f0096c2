"""English word forms for the offline reader: plurals, comparatives and superlatives, verb forms.

:func:`lemmas` gives the candidate base forms of a word as written in a question ("heaviest" →
"heavy", "signed" → "sign", "categories" → "category", "bought" → "buy"); the reader matches a
word when one of its candidates is a word of the table's vocabulary. Candidates may include
non-words ("hott" on the way to "hot"): they only ever match vocabulary words. The rules are the
regular inflections of English (-s/-es/-ies plurals, -er/-est with consonant doubling and a dropped
final e, -ed/-ing); irregular verbs come from the lexicon.
"""

from __future__ import annotations

from functools import lru_cache

from auto_analyst.offline.reader.lexicon import lexicon

__all__ = ["adjective_bases", "lemmas", "plural", "singular"]

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
