"""Finding the turn a user quoted: normalising text as the page shows it, then an exact or a partial match."""

from __future__ import annotations

import re
from collections.abc import Sequence
from difflib import SequenceMatcher
from typing import Any

from pydantic import BaseModel

from auto_analyst.memory.users.history_schema import TurnRecord

__all__ = ["QuoteMatch", "normalise", "clean_quote", "best_answer", "MIN_PARTIAL_QUOTE_CHARS", "PARTIAL_SCAN_LIMIT"]

MIN_PARTIAL_QUOTE_CHARS = 20
"""Shortest common run (characters, after normalising) accepted as a partial quote match.

Below about 20 characters a quoted fragment ("the mean is 4.2") matches many answers by chance."""

PARTIAL_SCAN_LIMIT = 2000
"""Most recent turns scanned for a partial (fuzzy) quote match; exact matches scan all turns."""


class QuoteMatch(BaseModel):
    """The turn whose answer contains a quoted text, and its neighbours in the same session.

    Attributes:
        turn: the matching turn.
        context: up to 3 turns in order: the previous turn, ``turn``, the next turn.
        matched: the normalised text that matched (the whole quote, or the common run).
        exact: True when the whole normalised quote occurs in the answer.
    """

    turn: TurnRecord
    context: list[TurnRecord]
    matched: str
    exact: bool


def normalise(text: str) -> str:
    """Lower-case ``text``, drop Markdown emphasis and list bullets, and collapse all whitespace to single
    spaces (for quote matching: a user copies the answer as the page shows it, '**Total**: 5' as 'Total: 5')."""
    text = re.sub(r"\*\*|__|(?<!\w)[*_`](?!\s)|(?<!\s)[*_`](?!\w)", "", text)
    text = re.sub(r"(?m)^\s*[-*•]\s+", " ", text)
    return re.sub(r"\s+", " ", text).strip().lower()


def clean_quote(text: str) -> str:
    """``text`` as quoted by a user, normalised (:func:`normalise`), without block-quote markers and surrounding quote marks."""
    lines = [re.sub(r"^\s*>\s?", "", line) for line in text.splitlines()]  # Markdown block quotes
    return normalise(" ".join(lines)).strip("\"'“”‘’`…. ")


def best_answer(quote: str, rows: Sequence[dict[str, Any]]) -> tuple[int, str, bool] | None:
    """The row whose ``answer`` the cleaned ``quote`` (:func:`clean_quote`) comes from, of ``rows`` (``id`` and
    ``answer``, newest first): ``(id, matched text, exact)``, or None.

    The whole quote found in an answer wins (newest first); otherwise the answer sharing the longest common run
    of at least :data:`MIN_PARTIAL_QUOTE_CHARS` characters with it, among the newest :data:`PARTIAL_SCAN_LIMIT`
    (ties: newest).
    """
    exact_id = next((r["id"] for r in rows if quote in normalise(r["answer"])), None)
    if exact_id is not None:
        return exact_id, quote, True
    best: tuple[int, int, str] | None = None  # (run length, id, matched text)
    if len(quote) >= MIN_PARTIAL_QUOTE_CHARS:
        for r in rows[:PARTIAL_SCAN_LIMIT]:
            answer = normalise(r["answer"])
            matcher = SequenceMatcher(None, quote, answer, autojunk=False)
            m = matcher.find_longest_match(0, len(quote), 0, len(answer))
            if m.size >= MIN_PARTIAL_QUOTE_CHARS and (best is None or m.size > best[0]):
                best = (m.size, r["id"], quote[m.a:m.a + m.size])
    return (best[1], best[2], False) if best else None
