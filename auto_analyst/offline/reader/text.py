"""Stage 1 of the reader: normalised text, its tokens, and which of them are explained so far.

Every later stage works on :class:`Reading`: the normalised text of one question part (lowercase,
accents folded, camelCase and snake_case split), its tokens, and a mark on every character a stage
has explained (a column, a value, a number, a keyword). What is left unexplained at the end makes
the part decline (stage 5, ``checks``): that is why the offline model never answers a question it
only half read.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

from auto_analyst.offline.reader.lexicon import lexicon

__all__ = ["Reading", "Token", "fold", "normalize", "number", "tokenize", "words_of"]

_QUOTES = str.maketrans({"“": '"', "”": '"', "„": '"', "«": '"', "»": '"', "‘": "'", "’": "'"})
TOKEN = re.compile(r"`[^`]+`|(?<![\w'])'[^']+'(?![\w])|\"[^\"]+\"|-?\d+(?:\.\d+)?|[\w$€£#%]+(?:'[a-z]+)?|[=<>!]+")


def normalize(text: str) -> str:
    """Lowercase; camelCase and snake_case split; punctuation except . % $ € £ # ' " ` = < > ! - into spaces."""
    text = text.translate(_QUOTES)
    text = re.sub(r"\b[iI]\.\s?[eE]\.?,?", " that is ", text)  # 'i.e.,' and 'e.g.' are words, not sentence ends
    text = re.sub(r"\b[eE]\.\s?[gG]\.?,?", " for example ", text)
    text = re.sub(r"(?<=[a-z])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])", " ", text)
    text = unicodedata.normalize("NFC", text).lower()
    text = re.sub(r"[_/\\]+", " ", text)
    text = re.sub(r"[^\w.%$€£#'\"`=<>!\- ]+", " ", text)
    return re.sub(r"\s+", " ", text).strip()


def fold(text: str) -> str:
    """Accent-folded lowercase: 'Montréal' → 'montreal'."""
    nfkd = unicodedata.normalize("NFKD", text)
    return "".join(c for c in nfkd if not unicodedata.combining(c)).lower().strip()


def words_of(name: str) -> list[str]:
    """The words of a name as the reader sees them: 'Weight_in_lbs' → ['weight', 'in', 'lbs'], 'column_1' →
    ['column', '1']."""
    return [t.text for t in tokenize(fold(normalize(name))) if t.kind in ("word", "number")]


@dataclass(frozen=True)
class Token:
    """One token of normalised text: ``kind`` is word, number, quoted, backtick or symbol."""

    text: str
    start: int
    end: int
    kind: str

    @property
    def inner(self) -> str:
        """The text inside quotes or backticks (the text itself otherwise)."""
        return self.text[1:-1] if self.kind in ("quoted", "backtick") else self.text


def tokenize(text: str) -> list[Token]:
    """Tokens of normalised ``text`` with their character spans."""
    out = []
    for m in TOKEN.finditer(text):
        s = m.group(0)
        if s.startswith("`"):
            kind = "backtick"
        elif s[0] in "'\"" and len(s) > 1 and s[-1] == s[0]:
            kind = "quoted"
        elif re.fullmatch(r"-?\d+(?:\.\d+)?", s):
            kind = "number"
        elif re.fullmatch(r"[=<>!]+", s):
            kind = "symbol"
        else:
            kind = "word"
        out.append(Token(s, m.start(), m.end(), kind))
    return out


def number(s: str):
    """A number written in text ('12', '0.5', 'three') as int/float; other text unchanged."""
    s = s.strip("'")
    words = lexicon().number_words
    if s in words:
        return words[s]
    try:
        f = float(s)
        return int(f) if f.is_integer() and "." not in s else f
    except ValueError:
        return s


_CMP = (r"more than|greater than|higher than|larger than|bigger than|over|above|exceeding|exceeds|at least|less than|"
        r"fewer than|lower than|smaller than|under|below|at most|no more than|no less than|up to|equals?|equal to")


def spelled_numbers(text: str) -> str:
    """'above fifty', 'over two hundred and fifty', 'less than forty-five' → the digits ('above 50'). Only after a
    comparison word: elsewhere 'one' is 'which one', 'the top one'. Words from the lexicon's ``number_words``."""
    words = lexicon().number_words
    alt = "|".join(sorted(map(re.escape, words), key=len, reverse=True))
    # 'and' joins only after hundred/thousand/million ('two hundred and fifty'; 'between eighty and ninety' is two)
    spelled = rf"(?:{alt})(?:(?:[\s-]+|(?:(?<=hundred)|(?<=thousand)|(?<=million))\s+and\s+)(?:{alt}))*"
    # a number that counts things ('between two variables', 'over three groups') is no threshold: left as words
    counted = r"(?!\s+(?:variables?|columns?|groups?|categories|decimals?|places|samples|features|sets|tables|models|times)\b)"
    pattern = re.compile(rf"\b({_CMP})\s+({spelled})\b{counted}")
    both = re.compile(rf"\b(between)\s+({spelled})\s+(and|to)\s+({spelled})\b{counted}")

    def value(phrase: str) -> str:
        total = current = 0
        for w in re.findall(r"[a-z]+", phrase):
            if w == "and":
                continue
            v = words[w]
            if v == 100:
                current = max(current, 1) * 100
            elif v >= 1000:
                total, current = total + max(current, 1) * v, 0
            else:
                current += v
        return str(total + current)

    text = both.sub(lambda m: f"{m.group(1)} {value(m.group(2))} {m.group(3)} {value(m.group(4))}", text)
    text = pattern.sub(lambda m: f"{m.group(1)} {value(m.group(2))}", text)
    return _scaled_numbers(text, words)


def _scaled_numbers(text: str, words: dict[str, int]) -> str:
    """'over 2 million', 'under 1.5 thousand', 'fewer than 500,000' (normalised to '500 000', the SI way of grouping
    digits) → the digits ('over 2000000'), after a comparison word only (elsewhere '1,2' may be a list). The scale
    words are the lexicon's ``number_words`` of 1000 or more."""
    scales = "|".join(sorted((w for w, v in words.items() if v >= 1000), key=len, reverse=True))
    written = re.compile(rf"\b({_CMP})\s+(\d{{1,3}}(?:,\d{{3}})+(?:\.\d+)?|\d{{1,3}}(?: \d{{3}})+(?:\.\d+)?|\d+(?:\.\d+)?)"
                         rf"(?:\s+({scales}))?\b(?![,.]\d)")

    def digits(m: re.Match) -> str:
        if not m.group(3) and not re.search(r"[, ]", m.group(2)):
            return m.group(0)
        v = float(re.sub(r"[, ]", "", m.group(2))) * (words[m.group(3)] if m.group(3) else 1)
        return f"{m.group(1)} {int(v) if v.is_integer() else v}"

    return written.sub(digits, text)


class Reading:
    """One question part being read: its normalised text, tokens, and the characters explained so far."""

    def __init__(self, text: str):
        self.text = text
        self.tokens = tokenize(text)
        self.used = [False] * len(text)

    def take(self, start: int, end: int) -> None:
        """Mark ``text[start:end]`` as explained."""
        self.used[start:end] = [True] * (end - start)

    def free(self, start: int, end: int) -> bool:
        """True when no character of ``text[start:end]`` is explained yet."""
        return not any(self.used[start:end])

    def explained(self, tok: Token) -> bool:
        return all(self.used[tok.start:tok.end])

    def leftover(self) -> list[Token]:
        """Word, number and quoted tokens not (wholly) explained; a plural or possessive ending left over
        after its stem was explained does not count."""
        out = []
        for t in self.tokens:
            if t.kind == "symbol":
                continue
            rest = "".join(c for c, u in zip(t.text, self.used[t.start:t.end]) if not u).strip("'\" ")
            if not rest or rest in ("s", "es", "'s", "ies"):
                continue
            out.append(t)
        return out

    def leftover_words(self) -> list[str]:
        """The leftover tokens' words that are not ignorable (a number nobody explained never is)."""
        ign = lexicon().ignorable
        out = []
        for t in self.leftover():
            w = t.inner
            base = re.sub(r"'(?:s|re|ll|ve|d|m)$", "", w)  # "what's" is "what"; "didn't" is never ignorable
            if w not in ign and base not in ign:
                out.append(w)
        return out
