"""A follow-up's reference to the one group the previous answer named: 'its', 'from there', 'that one',
'that year' / 'that firm', read from that answer's typed value (never its text)."""
from __future__ import annotations

import re
from typing import Any

from auto_analyst.data.description import TableDescription
from auto_analyst.offline.reader.pieces import Pieces
from auto_analyst.offline.reader.time_read import time_column
from auto_analyst.offline.spec import Filter, QuerySpec

__all__ = ["NAMED_ONE", "THERE", "WHICH_WAS", "named_one", "named_one_ref", "which_was_that"]

# 'there' pointing at a place said before ('total births there'), never the 'there' of 'how many are there',
# 'is there', 'was there any', 'there were': those say that something exists, they point at nothing
THERE = (r"(?:(?:from|in|at|of)\s+there|(?<!\bis )(?<!\bare )(?<!\bwas )(?<!\bwere )(?<!\bbe )(?<!\bbeen )"
         r"(?<!\bis\s)(?<!\bam )there(?!\s+(?:is|are|was|were|be|been|exists?|will|would|has|have|had|seems?)\b)"
         r"(?!'s|'re))")
NAMED_ONE = re.compile(r"\b(?:its|" + THERE + r"|(?:that|this)\s+(?P<noun>one|[a-z_]+))\b")
GRAINS = ("year", "month", "quarter")


def named_one_ref(p: Pieces, prev: QuerySpec) -> re.Match | None:
    """'its', 'from there', 'that one', 'that year' / 'that firm' (the previous answer's grouping): a reference to
    the one group the previous answer named. 'that year' after an answer not grouped by year is not one (the year
    of its condition is kept by the merge as it is)."""
    for m in NAMED_ONE.finditer(p.text):
        noun = m.group("noun")
        if m.group(0) == "its" and any(x.end <= m.start() for x in p.mentions):
            continue  # 'the average age and its standard deviation': the column said before it
        if noun is None or noun == "one":
            return m
        if noun in GRAINS and prev.time_grain == noun and not prev.group_by:
            return m
        if prev.group_by and any(x.start == m.start("noun") and x.column == prev.group_by[0] for x in p.mentions):
            return m
    return None


def named_one(prev: QuerySpec, p: Pieces, table: TableDescription, shown: Any) -> Filter | str | None:
    """The condition keeping the one group the previous answer named, when the part refers to it ('its', 'from
    there', 'that year'), from the value that answer showed (typed, never its text); a problem when the part
    refers to one group and the previous answer named none or several; None when it refers to no group."""
    m = named_one_ref(p, prev)
    if m is None or not (prev.group_by or prev.time_grain):
        return None  # 'its median' after a single figure: the same rows, as the merge keeps them
    said = m.group(0)
    if prev.group_by and any(f.column == prev.group_by[0] and ((f.op == "in_top" and f.value == 1) or f.op == "==")
                             for f in prev.filters):
        return None  # 'and its poverty rate?' after 'the murder rate of the top one': one group shown, kept as it is
    if prev.task != "rank" or shown is None or isinstance(shown, (list, dict)):
        return (f"I can't tell which one group of the earlier answer '{said}' means (it showed several or none); "
                "name it.")
    if prev.group_by:
        col = next((c for c in table.columns if c.name == prev.group_by[0]), None)
        value = _typed(shown, col.kind if col is not None else "categorical")
        if value is None:
            return f"I can't read the group the earlier answer named as a value of `{prev.group_by[0]}`; name it."
        return Filter(column=prev.group_by[0], op="==", value=value)
    value = _typed(shown, "numeric")
    if prev.time_grain not in GRAINS or not isinstance(value, int) or not prev.time_column:
        return f"I can't tell which {prev.time_grain} '{said}' means; name it."
    return Filter(column=prev.time_column, op=prev.time_grain, value=value)


def _typed(value: Any, kind: str) -> Any:
    """A value of the previous answer's table as a value of a column of ``kind`` (rank tables show labels as
    text: '2014', '4'); None when it is not one."""
    if kind in ("categorical", "text", "identifier"):
        return value if isinstance(value, str) else None
    if kind != "numeric" or isinstance(value, bool):
        return None  # a yes/no or date group named as text: which value it is, the table's text does not say
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    return int(number) if number.is_integer() else number


WHICH_WAS = re.compile(r"^\s*(?:and\s+)?(?:in\s+|on\s+)?(?:which|what)\s+(?P<noun>[a-z_]+)\s+(?:was|is|were)\s+"
                       r"(?:that|it|this)\b")
# 'when was that?', 'what date?', 'which day was it?': the time of the one figure, on the table's time column
WHEN_WAS = re.compile(r"^\s*(?:and\s+)?(?:when\s+(?:was|is|were|did|does|do|had|has)\s+(?:that|it|this)\b"
                      r"|(?:on\s+|at\s+)?(?:which|what)\s+(?:date|day|time|period)\b(?:\s+(?:was|is|were)\s+"
                      r"(?:that|it|this))?\s*\??\s*$)")


def which_was_that(p: Pieces, prev: QuerySpec, new: QuerySpec, table: TableDescription | None = None) -> bool:
    """'which year was that?': the value of a column at the one figure the previous answer gave. After a highest
    or lowest value of all rows it is the group holding it (the rank of the same statistic by that column); after
    anything else (a mean, a figure of several rows) no one row holds it and ``new`` declines. False when the part
    is not such a question."""
    m = WHICH_WAS.search(p.text)
    col = next((x.column for x in p.mentions if m and x.start == m.start("noun")), None) if m else None
    if col is None and WHEN_WAS.search(p.text):
        # 'when was that?' names no column: the table's one time column, or a decline saying so (never the
        # earlier figure again as if it were the date)
        col = time_column(table) if table is not None else None
        if col is None:
            new.problems.append("I can't tell when the earlier answer's figure was: the table has no one date or "
                                "year column; ask it whole (e.g. 'in which year was ... highest?').")
            return True
    if col is None:
        return False
    one = [x for x in prev.measures if x.column is not None]
    if prev.task == "aggregate" and not prev.group_by and not prev.time_grain and len(one) == 1 \
            and one[0].func in ("max", "min") and col != one[0].column:
        new.task, new.group_by, new.ascending, new.n, new.measures = "rank", [col], one[0].func == "min", None, one
        return True
    said = f" ({prev.measures[0].label()})" if prev.measures else ""
    new.problems.append(f"I can't tell which `{col}` that was: the earlier answer{said} is not the value of one row, "
                        f"so I can't place it; ask it whole (e.g. 'which {col} had the highest ...?').")
    return True
