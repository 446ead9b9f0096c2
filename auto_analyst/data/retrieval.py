"""Which columns of a wide table a question is about, and every column name in a compact list.

A table with hundreds of columns cannot be described column by column in a prompt. The
description therefore shows in full the columns the question names or resembles, found here by
three kinds of evidence (no model, no index: a few thousand names take milliseconds):

- the name: the whole name in the question ('sensor_75', 'sensor 75', 'Sensor75'), or every word
  of the name ('total_revenue', 'totalRevenue' → total, revenue), numbers matching as numbers
  ('sensor 7' is sensor_07, never sensor_75);
- a resemblance: a name word is a prefix of a question word or the other way round ('temp' and
  'temperature'), an abbreviation of it ('avg', 'qty'), or nearly the same spelling (difflib
  ratio ≥ 0.85: 'temprature'); a unit letter ending a name ('temp_c') may be left unsaid;
- a value: a text column holding a value the question quotes ('in Berlin' → the city column).

:func:`compact_names` lists every name with runs of numbered names folded ('sensor_01..sensor_80'),
and :func:`expand_names` undoes it, so a planner can still ask for any column.
"""

from __future__ import annotations

import difflib
import re

import pandas as pd

__all__ = ["compact_names", "expand_names", "name_words", "relevant_columns"]

# Columns shown in full because of the question, at most (the best evidence first).
MAX_RELEVANT = 20
# Text columns with more distinct values than this are not searched for quoted values.
MAX_VALUES_SEARCHED = 500
# difflib's ratio above which two words count as the same word misspelt; 0.85 accepts one wrong
# letter in a word of 7 ('temprature') and rejects different words of the same stem ('sales'/'scale').
FUZZY_RATIO = 0.85
_STOP = frozenset("an and are as at by de del der die for from how in is it its of on or per show the to "
                  "what which with".split())
_TOKEN = re.compile(r"[^\W\d_]+|\d+")
_RUN = re.compile(r"^(?P<pre>.*?)(?P<num>\d+)(?P<post>\D*)$")


def name_words(name: str) -> list[str]:
    """The words of a column name, lower case: snake, kebab, camel and digits split.

    Example:
        >>> name_words("totalRevenue_2023-Q4")
        ['total', 'revenue', '2023', 'q', '4']
    """
    out = []
    for token in _TOKEN.findall(str(name)):
        start = 0
        for i in range(1, len(token)):
            prev, cur, nxt = token[i - 1], token[i], token[i + 1] if i + 1 < len(token) else ""
            # camelCase and HTTPServer boundaries: a capital after a small letter, or the last
            # capital of a run of capitals followed by a small letter
            if cur.isupper() and (prev.islower() or (prev.isupper() and nxt.islower())):
                out.append(token[start:i])
                start = i
        out.append(token[start:])
    return [w.lower() for w in out]


def _squash(text: str) -> str:
    return re.sub(r"[\W_]+", "", text.lower())


def _same_word(a: str, b: str) -> bool:
    if a == b:
        return True
    if a.isdigit() or b.isdigit():
        return a.isdigit() and b.isdigit() and int(a) == int(b)
    short, long_ = sorted((a, b), key=len)
    if len(short) >= 3 and long_.startswith(short):
        return True
    if 3 <= len(short) <= 4 and short[0] == long_[0] and _subsequence(short, long_):
        return True  # abbreviations: avg/average, qty/quantity, amt/amount, pct/percent
    return len(short) >= 5 and difflib.SequenceMatcher(None, a, b).ratio() >= FUZZY_RATIO


def _subsequence(short: str, long_: str) -> bool:
    it = iter(long_)
    return all(ch in it for ch in short)


def relevant_columns(frame: pd.DataFrame, question: str, limit: int = MAX_RELEVANT) -> list[str]:
    """The columns of ``frame`` the question names, resembles or quotes a value of, best first.

    Args:
        frame: the table.
        question: the user's question (any text).
        limit: at most this many columns.

    Returns:
        Column names (as ``str``), strongest evidence first, ties in table order.
    """
    words = name_words(question)
    if not words:
        return []
    squashed = _squash(question)
    scored: list[tuple[float, int, str]] = []
    for position, col in enumerate(map(str, frame.columns)):
        score = _name_score(col, words, squashed)
        if score:
            scored.append((score, position, col))
    found = {c for _, _, c in scored}
    phrases = _phrases(words)
    for position, col in enumerate(map(str, frame.columns)):
        if col not in found and _quotes_a_value(frame[col], phrases):
            scored.append((1.0, position, col))
    scored.sort(key=lambda x: (-x[0], x[1]))
    return [c for _, _, c in scored[:limit]]


def _name_score(col: str, words: list[str], squashed: str) -> float:
    whole = _squash(col)
    if len(whole) >= 4 and whole in squashed and not whole.isdigit():
        return 4.0  # the whole name, however it is spaced or cased
    parts = [w for w in name_words(col) if w not in _STOP] or name_words(col)
    if len(parts) >= 2 and len(parts[-1]) == 1 and not parts[-1].isdigit():
        parts = parts[:-1]  # a unit letter at the end ('temp_c', 'dist_m') is rarely said
    if not parts:
        return 0.0
    matched = [any(_same_word(p, w) for w in words) for p in parts]
    if all(matched):
        return 2.0 + (1.0 if all(p in words for p in parts) else 0.0) - 0.5 * (len(parts) == 1 and len(parts[0]) < 3)
    return 0.0


def _phrases(words: list[str]) -> set[str]:
    """The question's runs of one to three words (values such as 'new york' have spaces)."""
    return {" ".join(words[i:i + n]) for n in (1, 2, 3) for i in range(len(words) - n + 1)} - _STOP


def _quotes_a_value(s: pd.Series, phrases: set[str]) -> bool:
    if pd.api.types.is_numeric_dtype(s) or pd.api.types.is_datetime64_any_dtype(s) or pd.api.types.is_bool_dtype(s):
        return False
    try:
        values = s.dropna().unique()
    except TypeError:  # unhashable cells (lists, dicts)
        return False
    if len(values) > MAX_VALUES_SEARCHED:
        return False
    return any(" ".join(name_words(str(v))) in phrases for v in values if len(str(v)) >= 3)


def compact_names(names: list[str]) -> list[str]:
    """Every name in order, with runs of names that differ only by a consecutive number folded.

    'sensor_01', 'sensor_02', …, 'sensor_80' becomes 'sensor_01..sensor_80' (a run needs three
    names or more, the same prefix and suffix, each number one more than the last, written with
    the first one's zero padding). :func:`expand_names` gives the names back exactly.
    """
    out: list[str] = []
    i = 0
    while i < len(names):
        j = i
        while j + 1 < len(names) and _numbered(names[i], j + 1 - i) == names[j + 1]:
            j += 1
        if j - i >= 2:
            out.append(f"{names[i]}..{names[j]}")
        else:
            out.extend(names[i:j + 1])
        i = j + 1
    return out


def _numbered(first: str, k: int) -> str | None:
    """The k-th name after ``first`` in its run ('x_08', 2 → 'x_10'), or None when it has no number."""
    m = _RUN.match(first)
    if not m or ".." in first:
        return None
    num = m["num"]
    width = len(num) if num.startswith("0") and len(num) > 1 else 0
    return f"{m['pre']}{str(int(num) + k).zfill(width)}{m['post']}"


def expand_names(items: list[str]) -> list[str]:
    """The inverse of :func:`compact_names`."""
    out: list[str] = []
    for item in items:
        first, sep, last = item.partition("..")
        m = _RUN.match(first)
        if sep and m and _RUN.match(last):
            run = [first]
            while run[-1] != last and len(run) <= 1_000_000:
                nxt = _numbered(first, len(run))
                if nxt is None:
                    break
                run.append(nxt)
            if run[-1] == last:
                out.extend(run)
                continue
        out.append(item)
    return out
