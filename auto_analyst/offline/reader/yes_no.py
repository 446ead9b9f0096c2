"""'Is there any airport above 10000 ft?', 'Did Chile have any births below 200?': a count asked as yes or no.

A question opening with a yes/no verb ('is there', 'are there', 'did', 'does', 'has', 'have', 'was', 'were') that
says 'any' (or 'a', 'an', 'some', 'at least one') and keeps rows by conditions, with nothing to measure, is the number
of rows those conditions keep, answered 'yes' or 'no' with that number (``QuerySpec.yes_no``): no row kept is the
answer 'no', never an error. A yes/no question asking a statistic ('is the mean above 5?') is not this. One naming
no rows ('are there any above 2900 ft?', 'is there any from Japan?': no noun, no value before 'any') is left to the
follow-up stage: after 'how many
airports are in TX?' it asks about those airports, never silently about all rows.
"""

from __future__ import annotations

import re

from auto_analyst.offline.reader.pieces import Pieces
from auto_analyst.offline.reader.text import fold, normalize
from auto_analyst.offline.spec import Measure, QuerySpec

__all__ = ["asks_yes_no", "yes_no_count"]

OPENING = re.compile(r"^\s*(?:and\s+|so\s+|then\s+)?(?:is|are|was|were|do|does|did|has|have|had)\b")
ANY = re.compile(r"\b(?:any|anyone|anybody|anything|at least one|some|an?)\b|\b(?:is|are|was|were)\s+there\b")


def asks_yes_no(p: Pieces) -> bool:
    """Does part ``p`` ask whether any row exists ('are there any cars with ...')? Not when it asks a statistic,
    a chart or a task of its own."""
    return bool(OPENING.search(p.text) and ANY.search(p.text)) and not p.funcs and not p.chart and not p.task_word \
        and not p.group_cols and not p.superlatives and not p.why


def _value_as_subject(p: Pieces, spec: QuerySpec) -> bool:
    """Is a named value the subject, said before 'any' ('did Chile have any births below 200?'), not a condition
    after it ('is there any from Japan?')?"""
    at = ANY.search(p.text)
    return at is not None and any(isinstance(f.value, str) and fold(normalize(f.value)) in p.text[:at.start()]
                                  for f in spec.filters)


def yes_no_count(p: Pieces, spec: QuerySpec, numeric: list[str], categorical: list[str]) -> bool:
    """Make ``spec`` the yes/no count of the rows its conditions keep when ``p`` asks one with nothing else to
    measure; True when it did."""
    if not (asks_yes_no(p) and spec.filters and not numeric and not categorical and not spec.time_grain):
        return False
    if not p.row_nouns and not _value_as_subject(p, spec):
        return False  # 'are there any above 2900 ft?', 'is there any from Japan?' name no rows: a follow-up's
    spec.task, spec.measures, spec.yes_no, spec.group_by = "aggregate", [Measure(func="count")], True, []
    return True
