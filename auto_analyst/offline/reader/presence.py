"""'On how many days was there any precipitation?', 'how many respondents have children?': a count of the rows
where an amount is above 0.

Counting a numeric column counts its non-missing values, which for a column with no gaps is every row:
read that way "days with any precipitation" would silently drop the word "any". An amount that is never
negative (its smallest value is 0 or more) is present on a row when it is above 0; for a column that can
be negative, "any X" says no condition the reader can name, so the part declines.
"""

from __future__ import annotations

import re

from auto_analyst.data.description import TableDescription
from auto_analyst.offline.reader.pieces import Pieces
from auto_analyst.offline.reader.row_ids import counted_ids
from auto_analyst.offline.spec import Filter, Measure, QuerySpec

__all__ = ["any_amount"]

# 'any rain', and 'have children' / 'with children' after a counted noun: the amount is there, i.e. above 0
ANY_BEFORE = re.compile(r"\b(?:any|some|(?:have|has|had|with)(?:\s+(?:any|some))?)\s+$")


def any_amount(p: Pieces, spec: QuerySpec, table: TableDescription) -> None:
    """Turn a count of a numeric column said as 'any X' into a count of rows where X > 0 (or a problem)."""
    if spec.task != "aggregate" or not spec.answerable:
        return
    for i in reversed(range(len(spec.measures))):  # from the end: a measure may be dropped below
        m = spec.measures[i]
        if m.func != "count" or m.column is None:
            continue
        said = next((x for x in p.mentions if x.column == m.column and ANY_BEFORE.search(p.text[:x.start])), None)
        col = next((c for c in table.columns if c.name == m.column), None)
        if said is None or col is None:
            continue
        words = p.text[said.start:said.end]
        lead = ANY_BEFORE.search(p.text[:said.start]).group(0).strip()
        if lead.split()[0] in ("have", "has", "had", "with") and any(f.column == m.column for f in spec.filters):
            continue  # 'days with temperature below 0': the condition says which rows, not mere presence
        if col.kind != "numeric" or not isinstance(col.min, (int, float)) or col.min < 0:
            spec.problems.append(f"I can't tell which rows have '{lead} {words}' (`{m.column}` is not an amount that is "
                                 f"never negative); say the condition, e.g. '{m.column} above 0'.")
            spec.task = "decline"
            return
        ident = counted_ids(p, table)[0]  # 'how many players had any fouls': the different players (reader/row_ids.py)
        spec.measures[i] = Measure(func="nunique", column=ident) if ident else Measure(func="count")
        if any(o.func == "nunique" for j, o in enumerate(spec.measures) if j != i):
            spec.measures.pop(i)  # 'how many respondents have kids': the respondents counted, kids only a condition
        elif ident:
            spec.assumptions.append(f"counted the different values of '{ident}' (the table has several rows for some "
                                    "of them), not the rows")
        if not any(f.column == m.column for f in spec.filters):
            spec.filters.append(Filter(column=m.column, op=">", value=0))
        spec.assumptions.append(f"read '{lead} {words}' as `{m.column}` > 0")
