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
    """Set ``spec.percent_of`` (a percent follow-up of ``prev``, a count or total) to the rows the set 'them' names:
    ``prev``'s when the part adds conditions of its own ('what percent of those are above 1000 ft?'), else ``earlier``'s
    (the turn before ``prev``) when ``prev`` narrowed them ('what percent of them is that?'); decline 'of them' when no
    such set is there, and a percent of a mean. Changes ``spec`` in place; anything else is left alone."""
    if prev is None or not spec.answerable or not spec.percent or spec.task != "aggregate" or spec.group_by \
            or spec.time_grain or not REFERS.search(p.text) or WHOLE.search(p.text) or prev.percent \
            or prev.task != "aggregate" or prev.group_by or prev.time_grain:
        return
    if not all(m.func in ("count", "sum") for m in spec.measures):
        if spec.measures == prev.measures:  # after a mean (a share of nothing) or different ids (not computed)
            _decline(spec, "I compute a percent only of a count of rows or of a total, and the earlier answer is another "
                           "figure; ask for the count or the total and its percent.")
        return
    own = [f for f in spec.filters if f not in prev.filters]
    if own and p.spec.filters and all(f in spec.filters for f in prev.filters):
        # 'what percent of those is France?': the rows the previous turn counted are the whole
        spec.percent_of = list(prev.filters) or None
        if prev.filters:
            spec.assumptions.append("a percent of the rows the question before counted ("
                                    + "; ".join(f.to_text() for f in prev.filters) + "), not of the whole table")
    elif own:
        if OF_THEM.search(p.text):  # 'what percent of those is CA?' after TX: CA is not among them
            _decline(spec, "I can't tell which rows 'them' are: the new condition replaces the earlier one rather than "
                           "narrowing it; ask 'what percent of <rows> have <condition>'.")
    elif _narrowed(prev, earlier):
        spec.percent_of = list(earlier.filters) or None
        of = "; ".join(f.to_text() for f in earlier.filters)
        spec.assumptions.append(f"a percent of the rows the question before counted ({of}), not of the whole table" if of
                                else "a percent of all rows, which the question before counted")
    elif OF_THEM.search(p.text) and prev.filters:
        _decline(spec, "I can't tell which rows 'them' are a part of: no earlier question counted a wider set than the "
                       "last answer; ask 'what percent of <those rows> have <condition>'.")


def _decline(spec: QuerySpec, problem: str) -> None:
    spec.task = "decline"
    spec.problems.append(problem)


def _narrowed(prev: QuerySpec, earlier: QuerySpec | None) -> bool:
    """Did ``prev`` keep every condition of ``earlier`` (the same figure, over all its rows) and add some? ('how many
    firms?' then 'how many rows have invest above 500?' counted other things: no wider set of the same)"""
    return earlier is not None and earlier.answerable and earlier.table == prev.table \
        and earlier.measures == prev.measures \
        and earlier.task == "aggregate" and not earlier.group_by and not earlier.time_grain \
        and len(earlier.filters) < len(prev.filters) and all(f in prev.filters for f in earlier.filters)
