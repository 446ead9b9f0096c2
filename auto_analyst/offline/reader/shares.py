"""'What percent of them is that?': the set a percent follow-up is a percent of.

After "how many airports are in Texas?" and "and how many of those are above 1000 ft?", "what percent of them is
that?" is the narrowed count as a percent of the count before it (the rows the earlier turn's conditions keep), never
of the whole table. The wider set is the turn before the previous one, when the previous turn kept its conditions and
added some (a narrowing); "of them / of those" with no such turn declines, since which rows 'them' are the words do
not say. "What percent of all airports is that?" stays a percent of the whole table (said so in its label).
"""

from __future__ import annotations

import re

from auto_analyst.offline.reader.pieces import Pieces
from auto_analyst.offline.spec import QuerySpec

__all__ = ["percent_of_earlier"]

REFERS = re.compile(r"\b(?:that|this|it|them|those|these|they)\b")
OF_THEM = re.compile(r"\b(?:of|among|from)\s+(?:them|those|these|that\s+(?:group|set))\b|^\s*(?:them|those|these)\b")
WHOLE = re.compile(r"\b(?:all|whole|entire|total|overall|every)\b")


def percent_of_earlier(p: Pieces, spec: QuerySpec, prev: QuerySpec | None, earlier: QuerySpec | None) -> None:
    """Set ``spec.percent_of`` (a percent follow-up of ``prev``, a count or total kept to some rows) to the rows
    ``earlier`` (the turn before ``prev``) counted when ``prev`` narrowed them; decline 'of them' when no such turn
    is there. Changes ``spec`` in place; anything else is left alone."""
    if prev is None or not spec.answerable or not spec.percent or spec.task != "aggregate" or spec.group_by \
            or spec.time_grain or not prev.filters or spec.filters != prev.filters or p.spec.filters \
            or not REFERS.search(p.text) or WHOLE.search(p.text) or prev.percent:
        return
    if not all(m.func in ("count", "sum") for m in spec.measures):
        return
    if _narrowed(prev, earlier):
        spec.percent_of = list(earlier.filters) or None
        of = "; ".join(f.to_text() for f in earlier.filters)
        spec.assumptions.append(f"a percent of the rows the question before counted ({of}), not of the whole table" if of
                                else "a percent of all rows, which the question before counted")
    elif OF_THEM.search(p.text):
        spec.task = "decline"
        spec.problems.append("I can't tell which rows 'them' are a part of: no earlier question counted a wider set "
                             "than the last answer; ask 'what percent of <those rows> have <condition>'.")


def _narrowed(prev: QuerySpec, earlier: QuerySpec | None) -> bool:
    """Did ``prev`` keep every condition of ``earlier`` (an answered figure over all its rows) and add some?"""
    return earlier is not None and earlier.answerable and earlier.table == prev.table \
        and earlier.task == "aggregate" and not earlier.group_by and not earlier.time_grain \
        and len(earlier.filters) < len(prev.filters) and all(f in prev.filters for f in earlier.filters)
