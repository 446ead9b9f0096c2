"""Several values of one column joined by 'and' with a statistic: the statistic for each value.

"the average height of male and female students", "mean petal_width for setosa and virginica" ask one figure per
value (grouped by that column, over the rows of those values), never one figure pooled over both; "male or female",
"setosa and virginica combined / together / in total" keep the pooled figure. A total ('total revenue for North
and South') stays one figure: it adds up, and 'total' reads as 'in total' (tests/llm/test_offline_widened.py).
The values' words are found in the part's text; when any is not found there (a value read through another word)
the pooled reading is kept as before.
"""

from __future__ import annotations

import re

from auto_analyst.offline.reader.text import fold
from auto_analyst.offline.spec import QuerySpec

__all__ = ["per_value"]

POOLED = re.compile(r"\b(?:combined|together|in\s+total|pooled|overall|altogether|as\s+a\s+whole|jointly)\b")


def per_value(text: str, spec: QuerySpec) -> None:
    """Group ``spec`` (an aggregate of column statistics, no grouping) by the one column whose several '=='
    values are joined by 'and' in ``text``; says so in the assumptions. Leaves ``spec`` as it is otherwise."""
    if spec.task != "aggregate" or spec.group_by or spec.problems or not spec.measures \
            or any(m.column is None or m.func in ("sum", "count") for m in spec.measures) or POOLED.search(text):
        return
    counts: dict[str, list] = {}
    for f in spec.filters:
        if f.op == "==" and isinstance(f.value, str):
            counts.setdefault(f.column, []).append(f.value)
    several = [(c, vs) for c, vs in counts.items() if len(vs) > 1]
    if len(several) != 1:
        return
    col, values = several[0]
    spans = []
    for v in values:
        m = re.search(rf"\b{re.escape(fold(v.strip()))}(?:s|es)?\b", text)
        if m is None:
            return  # the value read through another word: where its connector is, the text does not say
        spans.append((m.start(), m.end()))
    spans.sort()
    gaps = [text[a[1]:b[0]] for a, b in zip(spans, spans[1:])]
    if any(re.search(r"\bor\b|\bnor\b", g) for g in gaps) or not re.search(r"\band\b|&", gaps[-1]) \
            or any(not re.fullmatch(r"\s*,?\s*(?:(?:and|&)\s*)?", g) for g in gaps):
        # (the normalised text has no commas: 'setosa versicolor and virginica' is a list of three)
        return
    spec.group_by = [col]
    said = " and ".join(f"'{v}'" for v in values)
    spec.assumptions.append(f"gave the {spec.measures[0].label() if len(spec.measures) == 1 else 'figures'} for "
                            f"each of {said} of `{col}` (say 'combined' for one figure over them all)")
