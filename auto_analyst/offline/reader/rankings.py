"""Built-in rankings: which group has the highest value, the top N groups or rows, the row with the largest value."""

from __future__ import annotations

from auto_analyst.offline.reader.measures import ADDITIVE_HINTS, measure_for as _measure_for, numeric_like, when_column
from auto_analyst.offline.reader.vocabulary import vocabulary
from auto_analyst.offline.spec import Measure, QuerySpec

__all__ = ["rank", "top_n"]


def rank(spec: QuerySpec, superlative: str, group_cols, numeric, categorical, plain_funcs, table=None) -> None:
    numeric = [c for c in numeric if c not in group_cols]
    groups = group_cols + [c for c in categorical if c not in group_cols]
    if groups and numeric and not plain_funcs and groups[0] in numeric_like(table) \
            and not any(h in numeric[0].lower() for h in ADDITIVE_HINTS):
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


def top_n(spec: QuerySpec, n: tuple[int, bool], group_cols, numeric, categorical, plain_funcs, table=None,
           rows: bool = False) -> None:
    spec.task, spec.n, spec.ascending = "top_n", n[0], n[1]
    nums = {c.name for c in table.columns if c.kind == "numeric"} if table is not None else set()
    if not numeric and not categorical and len(group_cols) == 1 and group_cols[0] in nums:
        numeric, group_cols = group_cols, []  # "top 5 rows by invest": rank rows by that column
    ident = (vocabulary(table).id_column or when_column(table)) if table is not None else None
    shown = []
    if rows and numeric:
        # "the 5 cars with the highest price and their make": N rows named by a row noun are N rows; a text
        # column named beside them (not after 'by'/'per') is shown with each row, it does not group them
        shown = [c for c in categorical if c not in group_cols and c != ident]
        categorical = []
    groups = [g for g in group_cols + [c for c in categorical if c not in group_cols] if not (rows and g == ident)]
    if groups:
        spec.group_by = groups[:1]
        spec.measures = [_measure_for(numeric[0], plain_funcs, spec)] if numeric else [Measure(func="count")]
    elif numeric:
        default = "min" if n[1] else "max"
        spec.measures = [Measure(func=(plain_funcs[0] if plain_funcs else default), column=numeric[0])]
        if plain_funcs and plain_funcs[0] == "sum":
            spec.assumptions.append(f"summed the {n[0]} {'smallest' if n[1] else 'largest'} values of '{numeric[0]}'")
        elif ident and ident != numeric[0] or shown:
            # the rows are named by their identifying column, then the columns asked with them
            spec.columns = list(dict.fromkeys(([ident] if ident and ident != numeric[0] else []) + shown))
    else:
        spec.problems.append("Say which column to rank by.")


