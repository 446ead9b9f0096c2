"""'Compare A and B' for the built-in tasks: the statistic for each, side by side.

Called by :func:`auto_analyst.offline.reader.builtin.assign` when the question asks to compare; sets
``spec.task`` and its measures, or adds a problem saying what to compare.
"""

from __future__ import annotations

from auto_analyst.offline.reader.measures import measure_for as _measure_for
from auto_analyst.offline.reader.pieces import Pieces
from auto_analyst.offline.spec import Measure, QuerySpec

__all__ = ["compare"]


def compare(p: Pieces, spec: QuerySpec, group_cols, numeric, categorical, plain_funcs) -> None:
    """'compare A and B': the statistic for each, side by side (the values named, or two columns)."""
    by_col: dict[str, list] = {}
    for f in spec.filters:
        if f.op in ("==", "year", "month"):
            by_col.setdefault(f.column + "|" + f.op, []).append(f)
    named = [k for k, v in by_col.items() if len(v) >= 2]
    if len(named) == 1:
        col, op = named[0].split("|")
        cats = [c for c in categorical if c != col]
        if op == "==":
            spec.group_by = [col]
        else:
            spec.time_column, spec.time_grain = col, op
        measures = [_measure_for(c, plain_funcs, spec) for c in numeric] or [Measure(func="count")]
        spec.task, spec.measures = "aggregate", measures
        if cats or group_cols:
            spec.problems.append("Compare one thing at a time: the values of one column, or two columns.")
        return
    if not named and group_cols and numeric and not categorical:
        # "compare the sales of members and non-members": the statistic for each group
        spec.task, spec.group_by = "aggregate", group_cols[:1]
        spec.measures = [_measure_for(c, plain_funcs, spec) for c in numeric]
        return
    if not named and len(numeric) >= 2 and not group_cols:
        spec.task = "aggregate"
        spec.measures = [_measure_for(c, plain_funcs, spec) for c in numeric]
        return
    spec.problems.append("Say what to compare: two values of one column ('compare North and South') or two "
                         "columns ('compare price and cost').")
