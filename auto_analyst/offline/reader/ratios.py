"""Rates and ratios named in words: "churn rate" over a status column, "per capita", "per square metre", "X per Y".

Each link is said in the assumptions, and a ratio the reader cannot tie to exactly one column declines:

- "churn rate" where one column has a value of the same word ('churned' in `status`) is the percent of rows with
  that value (:func:`read_value_rate`); within groups ("churn rate by plan") it declines, since the percent
  shown for groups is each group's share of those rows, not the rate inside each group;
- "per capita" / "per person" divides by the one column the word "population" names, "per square metre" by the
  one column measured in square metres (:func:`read_per_unit`);
- "X per Y" with X and Y numeric columns ("kwh per floor area") is X / Y, never a grouping by the values of Y.

A ratio is answered as a new column (the ``derive`` task: ``X / Y`` row by row) and the statistic of it; the
assumptions say it is the statistic of each row's ratio, not total X over total Y.
"""

from __future__ import annotations

import re

from auto_analyst.data.description import TableDescription
from auto_analyst.offline.reader.morphology import lemmas
from auto_analyst.offline.reader.text import Reading
from auto_analyst.offline.reader.vocabulary import Vocabulary
from auto_analyst.offline.spec import Filter, Measure, QuerySpec

__all__ = ["read_value_rate", "read_per_unit", "ratio_parts"]

RATE = re.compile(r"\b([a-z]+)\s+rates?\b")
PER_HEAD = re.compile(r"\bper\s+(?:capita|person|head|inhabitant|resident)\b")
PER_AREA = re.compile(r"\bper\s+(?:square\s+(?:metre|meter|foot|feet)s?|sq\.?\s*(?:m|ft)|m2|m²|ft2|sqm|sqft)\b")
AREA_UNITS = {"m2", "sqm", "ft2", "sqft", "square"}
PER_COLUMN = re.compile(r"\bper\s+(?:the\s+)?$")


def read_value_rate(st: Reading, spec: QuerySpec, vocab: Vocabulary) -> bool:
    """'churn rate' where exactly one column holds a one-word value of that word ('churned'): the percent of rows
    with that value, said in the assumptions. Returns whether one was read."""
    named = [(c.start, c.end) for c in vocab.find(st.text)]
    for m in RATE.finditer(st.text):
        if not st.free(m.start(), m.end()) or any(a <= m.start() and m.end() <= b for a, b in named):
            continue  # 'interest rate' is the column `interest_rate`, not the percent of rows with 'interest'
        forms = lemmas(m.group(1))
        hits = {(col, value) for col, value, key in vocab.values
                if isinstance(value, str) and " " not in key and vocab.kind(col) == "categorical" and lemmas(key) & forms}
        if len(hits) != 1:
            continue
        col, value = hits.pop()
        spec.filters.append(Filter(column=col, op="==", value=value))
        spec.percent = True
        spec.assumptions.append(f"read '{m.group(0)}' as the percent of rows where `{col}` is '{value}'")
        st.take(m.start(), m.end())
        return True
    return False


def read_per_unit(st: Reading, spec: QuerySpec, vocab: Vocabulary) -> str | None:
    """The column 'per capita' or 'per square metre' divides by (its words explained), or None. Declines (a
    problem) when no column or several fit."""
    for pattern, what in ((PER_HEAD, "population"), (PER_AREA, "area")):
        m = pattern.search(st.text)
        if not m or not st.free(m.start(), m.end()):
            continue
        st.take(m.start(), m.end())
        if what == "population":
            cols = list(dict.fromkeys(x.column for x in vocab.find("population") if vocab.kind(x.column) == "numeric"))
        else:
            cols = [c for c, words in vocab.units.items() if set(words) & AREA_UNITS and vocab.kind(c) == "numeric"]
        if len(cols) != 1:
            spec.problems.append(f"I can't tell which column '{m.group(0)}' divides by: "
                                 + (f"{' or '.join(cols)}; name it." if cols else f"no column holds the {what}."))
            return None
        why = "its name says population" if what == "population" else "its unit is an area"
        spec.assumptions.append(f"read '{m.group(0)}' as divided by `{cols[0]}` ({why})")
        return cols[0]
    return None


def _per_column(text: str, spec: QuerySpec, table: TableDescription, mentions: list) -> str | None:
    """'kwh per floor area': a numeric grouping column named right after 'per' (each of its values a group would
    be nonsense), which is the ratio's denominator."""
    if not any(m.column for m in spec.measures):
        return None  # 'how many respondents per PID': a count of rows by groups
    cols = {c.name: c for c in table.columns}
    for m in mentions:
        c = cols.get(m.column)
        if m.column in spec.group_by and c is not None and c.kind == "numeric" and _measured(c) \
                and PER_COLUMN.search(text[:m.start]):
            return m.column
    return None


def _measured(col) -> bool:
    """A numeric column of amounts with fractions (floor areas, populations in millions), not of whole numbers: "per
    age", "per PID", "per year" on whole numbers group the rows, as they did before ratios were read."""
    values = [v for v, _ in col.top_values] + [col.min, col.max]
    return any(isinstance(v, float) and not float(v).is_integer() for v in values)


def ratio_parts(p, spec: QuerySpec, table: TableDescription) -> list[QuerySpec] | None:
    """The parts answering a ratio the part ``p`` asks for: a new column X / Y and the statistic of it; None when it
    asks for none. A ratio whose numerator is not one numeric column declines."""
    by = p.per or _per_column(p.text, spec, table, p.mentions)
    if by is None:
        if p.value_rate and spec.answerable and (spec.group_by or len(spec.filters) > 1 or spec.time_column):
            # the percent is of the whole table's rows: inside a group, a subset or a period it would be another number
            return [QuerySpec(table=spec.table, task="decline", problems=[
                "A rate within groups, a subset of the rows or a period is not computed offline (the percent would be "
                "of the whole table's rows); ask the rate of the whole table, or use a language model (--model)."])]
        return None
    if not spec.answerable:
        return None
    spec.group_by = [g for g in spec.group_by if g != by]
    nums = [m for m in spec.measures if m.column and m.column != by]
    if spec.task == "aggregate" and len(nums) == 1 and nums[0].func not in ("mean", "median"):
        # 'total kwh per square metre' is total over total, not the total of the rows' ratios
        return [QuerySpec(table=spec.table, task="decline", problems=[
            f"A {nums[0].func} of `{nums[0].column}` per `{by}` is not computed offline (only the mean or median of each "
            "row's ratio); ask for the average, or use --model."])]
    if spec.task != "aggregate" or len(nums) != 1 or len(spec.measures) != 1:
        return [QuerySpec(table=spec.table, task="decline", problems=[
            f"I can't tell which one column is divided by `{by}`; ask for 'the mean of X per {by}' with one column X."])]
    top = nums[0].column
    name = f"{top}_per_{by}"
    derive = QuerySpec(table=spec.table, task="derive", options={"name": name, "op": "/", "columns": [top, by]},
                       columns=[top, by])
    out = spec.model_copy(deep=True)
    out.measures = [Measure(func=nums[0].func, column=name)]
    out.assumptions = list(spec.assumptions) + [f"`{name}` is `{top}` / `{by}` row by row; the {nums[0].func} is of each row's ratio, not "
                       f"the total `{top}` over the total `{by}`"]
    return [derive, out]
