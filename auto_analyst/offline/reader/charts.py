"""Built-in charts and trends: the chart kind from the columns named, one line per period, bars per group."""

from __future__ import annotations

from auto_analyst.data.description import TableDescription
from auto_analyst.offline.reader.time_read import time_column
from auto_analyst.offline.reader.measures import measure_for as _measure_for, numeric_like
from auto_analyst.offline.spec import Measure, QuerySpec

__all__ = ["chart", "trend"]


def chart(spec: QuerySpec, kind: str, group_cols, numeric, categorical, dates, plain_funcs, table) -> None:
    spec.task = "chart"
    groups = group_cols + [c for c in categorical if c not in group_cols]
    if kind == "auto":
        if len(numeric) >= 2:
            kind = "scatter"
        elif numeric and (spec.time_grain or dates):
            kind = "line"
        elif numeric and groups:
            kind = "bar"
        elif numeric:
            kind = "histogram"
        elif groups:
            kind = "bar"
        else:
            spec.problems.append("Say which columns to plot.")
            return
    spec.chart = kind
    if kind == "scatter":
        if len(numeric) != 2:
            spec.problems.append("A scatter plot needs two numeric columns; name both.")
            return
        # columns in the order written: "plot A against B" gives x=A, y=B (as the hard input cases of tests/data expect)
        spec.x, spec.y = numeric[0], numeric[1]
    elif kind == "histogram":
        if not numeric:
            spec.chart = "bar"
            if not groups:
                spec.problems.append("Say which column to plot.")
                return
            spec.group_by, spec.measures = groups[:1], [Measure(func="count")]
        else:
            spec.x = numeric[0]
    elif kind == "box":
        if not numeric:
            spec.problems.append("A box plot needs a numeric column.")
            return
        spec.y, spec.x = numeric[0], (groups[0] if groups else None)
    elif kind == "line":
        tcol = dates[0] if dates else (spec.time_column or time_column(table))
        ordered = [g for g in groups if g in numeric_like(table)]
        if spec.time_grain and tcol:
            spec.time_column = tcol
            spec.group_by = [g for g in groups if g not in ordered][:1]  # one line per category
        elif ordered:
            spec.group_by = ordered[:1]  # e.g. "by year" where year is a column
        elif tcol:
            spec.group_by = [tcol]  # no period asked for: one point per date
        else:
            spec.problems.append("A line chart over time needs a date column.")
            return
        spec.measures = [_measure_for(c, plain_funcs, spec) for c in numeric[:1]] or [Measure(func="count")]
    else:  # bar, pie
        if not groups and not spec.time_grain:
            spec.problems.append("Say which column's groups to plot (for example 'by region').")
            return
        spec.group_by = groups[:1]
        spec.measures = [_measure_for(numeric[0], plain_funcs, spec)] if numeric else [Measure(func="count")]


def trend(spec: QuerySpec, group_cols, numeric, categorical, plain_funcs, table: TableDescription) -> None:
    """'any trends in X?': X over time, by a period that fits the data's span (a line chart and its table)."""
    tcol = spec.time_column or time_column(table)
    if tcol is None:
        spec.problems.append("A trend needs a date or year column, and this table has none; ask for a "
                             "correlation or a chart of two columns instead.")
        return
    if not numeric:
        cols = [c.name for c in table.columns if c.kind == "numeric"][:3]
        spec.problems.append("Say which measure's trend you want" + (f" (e.g. 'trend of {cols[0]}')" if cols else "") + ".")
        return
    col = next(c for c in table.columns if c.name == tcol)
    spec.task, spec.chart = "chart", "line"
    if col.kind == "datetime":
        spec.time_column = tcol
        if spec.time_grain is None:
            spec.time_grain = _grain_for(col)
            spec.assumptions.append(f"trend shown by {spec.time_grain} of '{tcol}'")
    else:
        spec.group_by = [tcol]
    spec.group_by = (spec.group_by or []) + [g for g in group_cols + categorical if g not in spec.group_by][:1] \
        if col.kind == "datetime" else spec.group_by
    spec.measures = [Measure(func=plain_funcs[0] if plain_funcs else "mean", column=numeric[0])]
    if not plain_funcs:
        spec.assumptions.append(f"used the average of '{numeric[0]}' per period")


def _grain_for(col) -> str:
    """Year for data spanning more than three years, month for more than two months, else day."""
    try:
        import datetime as dt

        lo, hi = dt.date.fromisoformat(str(col.min)[:10]), dt.date.fromisoformat(str(col.max)[:10])
        days = (hi - lo).days
    except (ValueError, TypeError):
        return "month"
    return "year" if days > 3 * 366 else "month" if days > 62 else "day"


