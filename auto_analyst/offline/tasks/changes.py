"""Change between two periods: "the percent change in invest from 1935 to 1954", "how much did revenue grow between
2016 and 2023", "... for each firm": the value of the later period minus (or in percent of) the earlier one.

The periods are the two ends of the year range the reader read ('from 1935 to 1954', 'between 1940 and 1950') on the
period column (a column of years, or the years of a date column); only those two years are compared, never the
years between them. The value of a period is its one row's value (in each group). With a statistic named ("the
percent change in total yield") it is that statistic of the period's rows. With several rows in a period and none
named, the code stops with a sentence asking which (the change of a total and of a mean differ), except for a
percent change where both periods have as many rows (in each group): the percent change of the total is then the
percent change of the mean, and it is shown. Nothing is guessed.
"""

from __future__ import annotations

import re

from auto_analyst.data.description import TableDescription
from auto_analyst.offline.reader.pieces import Pieces
from auto_analyst.offline.reader.words import PLAIN
from auto_analyst.offline.spec import FUNC_WORDS, Measure, QuerySpec
from auto_analyst.offline.templates import Template
from auto_analyst.offline.tasks._common import info

NAMES = ["change"]
TITLE = "change between two periods"
KEYWORDS = re.compile(r"\b(?:change[sd]?|grow(?:th|n|s)?|grew|increased?|decreased?|ris(?:e|en)|rose|f[ae]ll|fallen|"
                      r"drop(?:ped)?|declined?)\b")
# two years said as the ends of the change: 'from 1935 to 1954', 'between 1940 and 1950'
ENDS = re.compile(r"\b(?:from|between)\s+((?:18|19|20)\d\d)\s+(?:to|and|until)\s+((?:18|19|20)\d\d)\b")
STATS = ("sum", "mean", "median", "max", "min")

VALUE = Template("change of {column:col} from {a:int} to {b:int} of {period:col}[ by {group:col}]")
STAT = Template("change of {measure:measures} from {a:int} to {b:int} of {period:col}[ by {group:col}]")
TEMPLATES = [VALUE, STAT]


def active(text: str) -> bool:
    """Only a part naming two years as the ends of a range is a change between periods ('grew' alone is not)."""
    return ENDS.search(text) is not None


def claim(p: Pieces, table: TableDescription) -> int:
    return 2 if p.keywords.get("change") and ENDS.search(p.text) else 0


def recognize(p: Pieces, spec: QuerySpec, table: TableDescription) -> bool:
    """Fill a change spec: the measured column, the period column and its two years, the grouping (at most one)."""
    years = next((f for f in spec.filters if f.op == "years" and isinstance(f.value, int) and isinstance(f.value2, int)),
                 None)
    if years is None or p.chart or p.n is not None or p.task_word or spec.time_grain:
        return False  # 'plot how sales changed', 'top 3', 'by month': more than a change, declined rather than dropped
    period = years.column
    measured = [c for c in dict.fromkeys(p.numeric) if c != period and c not in p.group_cols]
    groups = [g for g in p.group_cols if g != period]
    if len(measured) != 1:
        spec.task = "change"
        spec.problems.append("Say which one numeric column changes (e.g. 'percent change in <column> from 1935 to 1954').")
        return True
    if len(groups) > 1:
        spec.task = "change"
        spec.problems.append("A change between two periods is shown for one grouping at most; name one column to group by.")
        return True
    # 'how much did X grow' names no statistic; 'the largest increase' ranks changes, which is not read here
    said = [(f, w) for _, f, w in p.funcs if w != "how much"]
    funcs = [f for f, _ in said]
    if len(set(funcs)) > 1 or any(f not in STATS or (f in ("max", "min") and w not in PLAIN) for f, w in said):
        return False
    spec.task = "change"
    spec.filters = [f for f in spec.filters if f is not years]
    spec.group_by = groups
    col = measured[0]
    spec.measures = [Measure(func=funcs[0], column=col)] if funcs else []
    spec.options = {"column": col, "period": period, "start": years.value, "end": years.value2}
    when = f"`{period}` {years.value2} against {years.value}"
    if funcs:
        spec.assumptions.append(f"compared the {FUNC_WORDS[funcs[0]]} of `{col}` in {when}, only those two years")
    else:
        several = ("with several rows a year, the percent change of their total, shown only when both years have as "
                   "many rows (it is then that of their mean)") if spec.percent else \
            "several rows a year stop the answer, asking for the statistic"
        spec.assumptions.append(f"compared `{col}` in {when}, only those two years; the value of a year is its one row"
                                f"{' in each ' + groups[0] if groups else ''} ({several})")
    if info(table, period).kind not in ("numeric", "datetime"):
        spec.problems.append(f"`{period}` holds no years to compare; name the column of years.")
    return True


def to_text(spec: QuerySpec) -> str:
    o = spec.options
    group = spec.group_by[0] if spec.group_by else None
    if spec.measures:
        return STAT.render(measure=spec.measures, a=o["start"], b=o["end"], period=o["period"], group=group)
    return VALUE.render(column=o["column"], a=o["start"], b=o["end"], period=o["period"], group=group)


def parse(text: str, table: TableDescription) -> QuerySpec | None:
    """The spec of a canonical change text, or None."""
    f = VALUE.parse(text)
    measures = []
    if f is None:
        f = STAT.parse(text)
        if f is None or len(f["measure"]) != 1 or f["measure"][0].func not in STATS:
            return None
        measures = f["measure"]
    col = measures[0].column if measures else f["column"]
    spec = QuerySpec(table=table.name, task="change", measures=measures, group_by=[f["group"]] if f.get("group") else [])
    spec.options = {"column": col, "period": f["period"], "start": f["a"], "end": f["b"]}
    return spec


def labels(spec: QuerySpec) -> list[str]:
    return [] if spec.group_by else [_label(spec)]


def _label(spec: QuerySpec) -> str:
    o = spec.options
    what = f"{FUNC_WORDS[spec.measures[0].func]} {o['column']}" if spec.measures else o["column"]
    return f"{'percent ' if spec.percent else ''}change of {what} from {o['start']} to {o['end']}"


def code(spec: QuerySpec, i: int) -> dict[str, str]:
    o, d = spec.options, f"data_{i}"
    col, per, a, b = o["column"], o["period"], o["start"], o["end"]
    keys = (spec.group_by or ["_all"]) + ["_period"]  # '_all': one group when none is asked, so both ends unstack
    func = spec.measures[0].func if spec.measures else None
    lines = [f"rows_{i} = {d}.assign(_all=0, _period=pd.to_datetime({d}[{per!r}]).dt.year if "
             f"pd.api.types.is_datetime64_any_dtype({d}[{per!r}]) else {d}[{per!r}])",
             f"rows_{i} = rows_{i}[rows_{i}['_period'].isin([{a}, {b}]) & rows_{i}[{col!r}].notna()]",
             f"for year_{i} in ({a}, {b}):",
             f"    if not (rows_{i}['_period'] == year_{i}).any():",
             f"        raise LookupError(f'No rows of {col} in {per} {{year_{i}}}, so there is no change to compute.')",
             f"counts_{i} = rows_{i}.groupby({keys!r})[{col!r}].count().unstack('_period')"]
    if func is None:
        lines += [f"if (counts_{i} > 1).any().any():"]
        if spec.percent:
            lines += [f"    if not counts_{i}[{a}].equals(counts_{i}[{b}]):",
                      f"        raise ValueError('{per} {a} and {b} hold different numbers of rows of {col}, so the percent "
                      f"change of their total and of their mean differ; say which (e.g. \"percent change in total {col}\").')",
                      f"    print('several rows a {per}, as many in {a} as in {b}: the percent change of the total is that "
                      f"of the mean')"]
        else:
            lines += [f"    raise ValueError('{per} {a} and {b} hold several rows of {col}; say whether to compare their "
                      f"total or their mean (e.g. \"how much did the total {col} grow\").')"]
    agg = {"sum": "sum", "mean": "mean", "median": "median", "max": "max", "min": "min"}.get(func or "sum")
    lines += [f"ends_{i} = rows_{i}.groupby({keys!r})[{col!r}].{agg}().unstack('_period')"]
    change = f"(ends_{i}[{b}] / ends_{i}[{a}] - 1) * 100" if spec.percent else f"ends_{i}[{b}] - ends_{i}[{a}]"
    label = _label(spec)
    if spec.percent:
        # a percent change from a base of 0 or below is undefined (inf) or misleading (-10 to 5 is no '-150%'): such a
        # group has none, and a sentence says why; with no groups the run stops with that sentence
        change = f"({change}).where(ends_{i}[{a}] > 0)"
        why = f"the percent change is undefined or misleading when the {a} value is 0 or below"
        lines += [f"base_{i} = ends_{i}[{a}] <= 0"]
        if not spec.group_by:
            lines += [f"if base_{i}.any():", f"    raise ValueError('{why[0].upper() + why[1:]} ({col} in {a}: ' + "
                      f"str(ends_{i}[{a}].iloc[0]) + '); ask for the change instead.')"]
    if spec.rounding is not None:
        change = f"({change}).round({spec.rounding})"
    if spec.group_by:
        lines += [f"result_{i} = ends_{i}[[{a}, {b}]].assign(**{{{label!r}: {change}}}).reset_index()",
                  f"result_{i}.columns = [str(c) for c in result_{i}.columns]",
                  f"print(result_{i}.to_string(index=False))", f"show(result_{i}, name={label!r})"]
        if spec.percent:
            lines += [f"if base_{i}.any():", f"    show('left out ' + ', '.join(map(str, ends_{i}.index[base_{i}])) + "
                      f"': {why}', name='groups with no percent change')"]
    else:
        what = f"{FUNC_WORDS[func]} {col}" if func else col
        # several rows a year (a percent change of equal counts): the values shown are totals, and say so
        lines += [f"value_{i} = float(({change}).iloc[0])",
                  f"what_{i} = {what!r} if {func is not None} or not (counts_{i} > 1).any().any() else 'total ' + {col!r}",
                  f"show(float(ends_{i}[{a}].iloc[0]), name=f'{{what_{i}}} in {a}')",
                  f"show(float(ends_{i}[{b}].iloc[0]), name=f'{{what_{i}}} in {b}')",
                  f"show(value_{i}, name={label!r})"]
    return {"statistics": "\n".join(lines)}
