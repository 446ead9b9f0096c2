"""Finding columns and values a question mentions: exact, case/space-insensitive, or one close spelling.

Rules (issue 3): a single close spelling is taken and reported ("took 'carier' as 'carrier'");
several candidates or none are never guessed. Closeness is difflib's ratio ≥ 0.8 (the cutoff
click's "did you mean" suggestions use is 0.6; we ask for more because we act on the match).
"""

from __future__ import annotations

import difflib
import re
import unicodedata
from dataclasses import dataclass

from auto_analyst.data.description import TableDescription

__all__ = ["normalize", "column_phrases", "ColumnMatcher", "Mention"]

CLOSE_MATCH = 0.8
# words too generic to stand for a column on their own ('code' could be store_code or zip code)
GENERIC_WORDS = {"codes", "number", "numbers", "names", "value", "values", "count", "total", "level", "group",
                 "date", "dates", "time", "times", "price", "amount", "rates"}


def normalize(text: str) -> str:
    """Lowercase, accents kept, punctuation except . - % $ € into spaces, camelCase split."""
    text = re.sub(r"(?<=[a-z])(?=[A-Z])", " ", text)
    text = unicodedata.normalize("NFC", text).lower()
    text = re.sub(r"[_/\\]+", " ", text)
    text = re.sub(r"[^\w.%$€£#'`=<>!\- ]+", " ", text)
    return re.sub(r"\s+", " ", text).strip()


def fold(text: str) -> str:
    """Accent-folded lowercase: 'Montréal' → 'montreal' (for value matching)."""
    nfkd = unicodedata.normalize("NFKD", text)
    return "".join(c for c in nfkd if not unicodedata.combining(c)).lower().strip()


def column_phrases(name: str) -> set[str]:
    """Ways a question may write a column: 'delivery_time_hours' → {'delivery time hours', ...}."""
    base = fold(normalize(name))
    phrases = {base, base.replace("-", " "), fold(name)}
    no_unit = re.sub(r"\s*\(.*?\)\s*", " ", name).strip()
    if no_unit and no_unit != name:
        phrases.add(fold(normalize(no_unit)))
    words = base.split()
    # trailing unit words are often left out: 'delivery time' for 'delivery_time_hours'
    units = {"hours", "hrs", "h", "kg", "km", "eur", "usd", "pct", "mins", "minutes", "days", "cm", "mm", "kwh", "m",
             "m2", "sqm", "sqft", "ms", "s", "secs", "seconds", "pct", "percent", "gb", "mb"}
    if len(words) > 1 and words[-1] in units:
        phrases.add(" ".join(words[:-1]))
    # plurals: 'campaigns' for 'campaign', 'categories' for 'category'
    for p in list(phrases):
        if p and p[-1].isalpha() and p not in ("year", "month", "day", "week", "quarter", "hour", "date", "time"):
            phrases.add(p[:-1] + "ies" if p.endswith("y") else p + ("es" if p.endswith(("s", "x", "ch")) else "s"))
    return {p for p in phrases if p}


@dataclass
class Mention:
    """A column found in the question: where, which column, and how it matched."""

    start: int
    end: int
    column: str
    how: str  # exact | fuzzy | backtick
    text: str


class ColumnMatcher:
    """Finds column mentions in normalised question text for one table."""

    def __init__(self, table: TableDescription):
        self.table = table
        self.columns = [c.name for c in table.columns]
        self.phrases: list[tuple[str, str]] = []
        for col in self.columns:
            for p in column_phrases(col):
                self.phrases.append((p, col))
        # longest phrase first so 'delivery time hours' wins over 'delivery'
        self.phrases.sort(key=lambda pc: -len(pc[0]))

    def find(self, text: str) -> list[Mention]:
        """Exact mentions in ``text`` (already normalised); backticked names first. Non-overlapping."""
        found: list[Mention] = []
        taken = [False] * len(text)
        for m in re.finditer(r"`([^`]+)`", text):
            col = self.lookup(m.group(1))
            if col:
                found.append(Mention(m.start(), m.end(), col, "backtick", m.group(0)))
                taken[m.start():m.end()] = [True] * (m.end() - m.start())
        for phrase, col in self.phrases:
            # a column word inside a hyphenated term ('score' in 'z-score') is not a mention
            for m in re.finditer(r"(?<![\w`-])" + re.escape(phrase) + r"(?![\w`]|-\w)", text):
                if any(taken[m.start():m.end()]):
                    continue
                found.append(Mention(m.start(), m.end(), col, "exact", m.group(0)))
                taken[m.start():m.end()] = [True] * (m.end() - m.start())
        return sorted(found, key=lambda x: x.start)

    def lookup(self, name: str) -> str | None:
        """A column by exact, then case- and space-insensitive name."""
        if name in self.columns:
            return name
        key = fold(normalize(name))
        hits = {c for p, c in self.phrases if p == key}
        return hits.pop() if len(hits) == 1 else None

    def close(self, words: str) -> list[str]:
        """Columns one close spelling away from ``words`` (a word or a few)."""
        words = fold(normalize(words))
        if len(words) < 4:
            return []
        scored = {}
        for p, col in self.phrases:
            r = difflib.SequenceMatcher(None, words, p).ratio()
            if r >= CLOSE_MATCH:
                scored[col] = max(r, scored.get(col, 0))
        if not scored and " " not in words and len(words) >= 5 and words not in GENERIC_WORDS:
            # one word of exactly one column's name: 'store' for 'store_code', 'version' for 'app_version'
            owners = {col for p, col in self.phrases if words in p.split() and " " in p}
            if len(owners) == 1:
                scored[owners.pop()] = 0.8
        if not scored and " " not in words:
            # an abbreviated column name: 'infl' for 'inflation' (at least 4 letters, one column only)
            for p, col in self.phrases:
                if len(p) >= 4 and " " not in p and words.startswith(p) and len(p) >= 0.4 * len(words):
                    scored[col] = 0.8
        return sorted(scored, key=lambda c: -scored[c])


def find_values(text: str, table: TableDescription, skip: set[str] = frozenset()) -> list[tuple[str, str, int, int]]:
    """Category values (from the description's top values) written in ``text``.

    Returns (column, value, start, end) for whole-word, accent- and case-insensitive matches; a value
    of several columns is reported for each (the caller treats that as ambiguous).
    """
    folded = fold(text)
    out = []
    for col in table.columns:
        if col.kind not in ("categorical", "boolean", "identifier") or col.name in skip:
            continue
        for value, _count in col.top_values:
            if value is None or isinstance(value, bool):
                continue
            v = fold(str(value))
            if len(v) < 2 or v.isdigit() and len(v) < 3:
                continue
            for m in re.finditer(r"(?<![\w])" + re.escape(v) + r"(?![\w])", folded):
                out.append((col.name, value, m.start(), m.end()))
    return out
