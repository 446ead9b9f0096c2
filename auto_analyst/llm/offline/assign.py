"""From the pieces the parser found (columns, aggregate words, chart words) to one task of a QuerySpec."""

from __future__ import annotations

import re

from auto_analyst.data.description import TableDescription
from auto_analyst.llm.offline import lexicon as lx
from auto_analyst.llm.offline.matching import fold
from auto_analyst.llm.offline.spec import FUNC_WORDS, Filter, Measure, QuerySpec

__all__ = ["assign", "default_func"]

SUPERLATIVES = {"min", "max"}


def default_func(column: str, spec: QuerySpec) -> str:
    """Sum for additive measures (revenue, sales, counts), mean otherwise; the choice is stated."""
    additive = any(h in column.lower() for h in lx.ADDITIVE_HINTS)
    func = "sum" if additive else "mean"
    spec.assumptions.append(f"used the {'total' if additive else 'average'} of '{column}' per group")
    return func


def assign(spec: QuerySpec, text: str, funcs: list[tuple[int, str, str]], chart: str | None, task_word: str | None,
           n: tuple[int, bool] | None, group_cols: list[str], numeric: list[str], categorical: list[str],
           dates: list[str], table: TableDescription) -> None:
    """Set ``spec.task`` and its fields; add a problem when the pieces do not make one clear question."""
    if spec.problems:
        spec.task = "decline"
        return
    group_cols = list(dict.fromkeys(group_cols))
    flags = [c.name for c in table.columns if c.kind == "boolean" and c.name in categorical]
    if flags and not chart and task_word is None and n is None:
        categorical = [c for c in categorical if c not in flags]
        if spec.percent and len(flags) == 1 and not numeric:
            # "what share of customers churned, by plan": the percent of rows where the flag is true
            spec.task, spec.group_by = "aggregate", group_cols
            spec.measures = [Measure(func="pct_true", column=flags[0])]
            return
        for flag in flags:  # "churned customers", "customers who did not churn": keep rows where it is so
            stem = re.escape(fold(flag.lower())[:4])
            negated = re.search(r"\b(?:not|non|never|didn't|did not|didnt|haven't|has not|have not)[\s-]+(?:\w+\s+)?" + stem,
                                text) is not None
            spec.filters.append(Filter(column=flag, op="==", value=not negated))
    if numeric and len({f for _, f, _ in funcs}) > 1 and any(w in ("number of", "count of") for _, f, w in funcs):
        # "the mean number of wins": the number is the column itself, not a count of rows
        funcs = [(pos, f, w) for pos, f, w in funcs if w not in ("number of", "count of")]
    plain_funcs = [f for _, f, w in funcs if f not in SUPERLATIVES or w in ("minimum", "maximum", "min", "max")]
    superlative = next((f for _, f, w in funcs if f in SUPERLATIVES and w not in ("minimum", "maximum", "min", "max")), None)
    if chart:
        _chart(spec, chart, text, group_cols, numeric, categorical, dates, plain_funcs, table)
    elif task_word in ("describe", "missing", "columns", "shape", "corr_matrix"):
        spec.task = task_word
        spec.columns = list(dict.fromkeys(numeric + categorical + dates))
        if task_word == "shape" and spec.filters:
            spec.task, spec.measures = "aggregate", [Measure(func="count")]
    elif task_word == "correlation":
        if len(numeric) == 2:
            spec.task, spec.x, spec.y = "correlation", numeric[0], numeric[1]
        elif len(numeric) > 2:
            spec.task, spec.columns = "corr_matrix", numeric
        else:
            spec.problems.append("A correlation needs two numeric columns; name both.")
    elif task_word == "value_counts" and not numeric:
        col = (categorical + group_cols)[:1]
        if not col:
            spec.problems.append("Say which column's distribution you want.")
        else:
            spec.task, spec.columns = "value_counts", col
    elif task_word == "value_counts" and numeric:
        spec.task, spec.columns = "describe", numeric
    elif n is not None:
        only = [c.name for c in table.columns if c.kind == "numeric"]
        if not numeric and not group_cols and not categorical and len(only) == 1:
            # "the total of the top 5 payments" on a table with one numeric column: that column
            numeric = only
            spec.assumptions.append(f"ranked by '{only[0]}', the only numeric column")
        _top_n(spec, n, group_cols, numeric, categorical, plain_funcs, table)
    elif superlative and re.search(r"\bwhen\b", text) and not group_cols and numeric and _when_column(table):
        # "when was unemployment highest": the date of the highest value
        _rank(spec, superlative, [_when_column(table)], numeric, categorical, plain_funcs, table)
    elif superlative and (re.match(r"^\s*(which|what|in which|for which)\b", text) or group_cols
                          or (spec.time_grain and not plain_funcs)):
        _rank(spec, superlative, group_cols, numeric, categorical, plain_funcs, table)
    elif plain_funcs or superlative:
        _aggregate(spec, funcs, group_cols, numeric, categorical)
    elif spec.percent and (spec.filters or group_cols or categorical):
        # "what percent of orders come from North", "share of revenue by region"
        spec.task, spec.group_by = "aggregate", group_cols or [c for c in categorical][:1]
        spec.measures = [Measure(func="sum", column=numeric[0])] if numeric else [Measure(func="count")]
    else:
        spec.problems.append("I can't tell which statistic or chart you want (for example mean, total, count, "
                             "histogram, bar chart).")
    if spec.problems:
        spec.task = "decline"


def _when_column(table: TableDescription) -> str | None:
    dates = [c.name for c in table.columns if c.kind == "datetime"]
    return dates[0] if len(dates) == 1 else None


def numeric_like(table: TableDescription) -> set[str]:
    return {c.name for c in table.columns if c.kind in ("numeric", "datetime")}


def _measure_for(col: str, funcs: list[str], spec: QuerySpec) -> Measure:
    func = next((f for f in funcs if f not in ("count",)), None) or default_func(col, spec)
    return Measure(func=func, column=col)


def _aggregate(spec: QuerySpec, funcs: list[tuple[int, str, str]], group_cols, numeric, categorical) -> None:
    spec.task = "aggregate"
    spec.group_by = group_cols
    # pair each aggregate word with the next numeric column written after it
    cols_in_order = numeric + [c for c in categorical if c not in group_cols]
    if not cols_in_order:
        if any(f == "count" for _, f, _ in funcs):
            spec.measures = [Measure(func="count")]
            return
        spec.problems.append("Say which column to compute that on.")
        return
    fs = [f for _, f, _ in funcs]
    if len(cols_in_order) == 1 or len(fs) == 1:
        for col in cols_in_order:
            for f in fs:
                if f == "count" and col in categorical and not group_cols and "nunique" not in fs:
                    spec.task, spec.columns = "value_counts", [col]
                    spec.measures = []
                    return
                if f in ("mean", "median", "sum", "std", "var", "min", "max") and col not in numeric:
                    spec.problems.append(f"'{col}' is not numeric, so its {FUNC_WORDS[f]} is not defined here.")
                    return
                if f == "mean" and any(h in col.lower() for h in ("rate", "ratio", "pct", "percent", "share")):
                    spec.assumptions.append(f"used the simple (unweighted) mean of '{col}': each row counts once")
                spec.measures.append(Measure(func=f, column=col))
    else:
        for f, col in zip(fs, cols_in_order):
            spec.measures.append(Measure(func=f, column=col))
        if len(fs) != len(cols_in_order):
            spec.problems.append("I can't pair each statistic with its column; ask one at a time.")


def _rank(spec: QuerySpec, superlative: str, group_cols, numeric, categorical, plain_funcs, table=None) -> None:
    numeric = [c for c in numeric if c not in group_cols]
    groups = group_cols + [c for c in categorical if c not in group_cols]
    if groups and numeric and not plain_funcs and groups[0] in numeric_like(table) \
            and not any(h in numeric[0].lower() for h in lx.ADDITIVE_HINTS):
        # "in which year was inflation highest": the year of the highest single value
        spec.task, spec.group_by, spec.ascending = "rank", groups[:1], superlative == "min"
        spec.measures = [Measure(func=superlative, column=numeric[0])]
        spec.assumptions.append(f"took the {'lowest' if superlative == 'min' else 'highest'} single value of "
                                f"'{numeric[0]}' in each {groups[0]}")
        return
    if not groups and spec.time_grain:
        # "which month had the most orders": rank the periods
        spec.task, spec.ascending = "rank", superlative == "min"
        spec.measures = [_measure_for(numeric[0], plain_funcs, spec)] if numeric else [Measure(func="count")]
        return
    if not groups:
        if numeric:
            # "what is the highest price" is a max, not a ranking of groups
            spec.task = "aggregate"
            spec.measures = [Measure(func=superlative, column=c) for c in numeric]
            return
        spec.problems.append("Say which column's groups to compare.")
        return
    spec.task, spec.group_by, spec.ascending = "rank", groups[:1], superlative == "min"
    if numeric:
        spec.measures = [_measure_for(numeric[0], plain_funcs, spec)]
    else:
        spec.measures = [Measure(func="count")]


def _top_n(spec: QuerySpec, n: tuple[int, bool], group_cols, numeric, categorical, plain_funcs, table=None) -> None:
    spec.task, spec.n, spec.ascending = "top_n", n[0], n[1]
    nums = {c.name for c in table.columns if c.kind == "numeric"} if table is not None else set()
    if not numeric and not categorical and len(group_cols) == 1 and group_cols[0] in nums:
        numeric, group_cols = group_cols, []  # "top 5 rows by invest": rank rows by that column
    groups = group_cols + [c for c in categorical if c not in group_cols]
    if groups:
        spec.group_by = groups[:1]
        spec.measures = [_measure_for(numeric[0], plain_funcs, spec)] if numeric else [Measure(func="count")]
    elif numeric:
        spec.measures = [Measure(func=(plain_funcs[0] if plain_funcs else "max"), column=numeric[0])]
        if plain_funcs and plain_funcs[0] == "sum":
            spec.assumptions.append(f"summed the {n[0]} {'smallest' if n[1] else 'largest'} values of '{numeric[0]}'")
    else:
        spec.problems.append("Say which column to rank by.")


def _chart(spec: QuerySpec, kind: str, text: str, group_cols, numeric, categorical, dates, plain_funcs, table) -> None:
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
        from auto_analyst.llm.offline.conditions import time_column

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
