"""The parser's working state: the text of one question part and which of its characters are explained."""

from __future__ import annotations

import re

from auto_analyst.llm.offline import lexicon as lx

__all__ = ["ParseState", "num"]


class ParseState:
    """The text of one part and which characters are already explained."""

    def __init__(self, text: str):
        self.text = text
        self.used = [False] * len(text)

    def take(self, start: int, end: int) -> None:
        self.used[start:end] = [True] * (end - start)

    def free(self, start: int, end: int) -> bool:
        return not any(self.used[start:end])

    def leftover_words(self) -> list[str]:
        chars = [c if not u else " " for c, u in zip(self.text, self.used)]
        words = [w.strip("'") for w in re.findall(r"\d+(?:\.\d+)?|[\w'$€£%#]+", "".join(chars))]
        words = [w for w in words if w and w not in ("s",)]
        # a number nobody explained is a condition or a size the answer would silently drop: never ignorable
        return [w for w in words if w not in lx.IGNORABLE]


def num(s: str):
    """A number written in text ('12', '0.5', 'three') as int/float; other text unchanged."""
    s = s.strip("'")
    if s in lx.NUMBER_WORDS:
        return lx.NUMBER_WORDS[s]
    try:
        f = float(s)
        return int(f) if f.is_integer() and "." not in s else f
    except ValueError:
        return s
