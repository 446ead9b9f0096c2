"""The offline model's reading of a question: a typed query specification and its canonical text.

The canonical text (written by :func:`auto_analyst.offline.canonical.render`) is
what the offline planner writes as the ``standalone_question``; the strict canonical parser reads it
back, which is how the analysts and the next turn's follow-ups build on it.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field

from auto_analyst.offline.statistics import NAMES, STATISTICS

__all__ = ["Filter", "Measure", "QuerySpec", "quote_col", "quote_val", "Z_ASSUMED"]

# the assumption an outlier search says when its z-score rule names no threshold (planning declines an answer
# format on it: no one threshold is standard)
Z_ASSUMED = "z-score threshold"

Func = Literal[NAMES]  # one per row of statistics.STATISTICS
# built-in tasks; task plugins (auto_analyst.offline.tasks) add their own names
Task = str
Chart = Literal["histogram", "bar", "scatter", "line", "box", "pie"]
Grain = Literal["day", "week", "month", "month_of_year", "quarter", "year"]

FUNC_WORDS = {s.name: s.words for s in STATISTICS}


def quote_col(name: str) -> str:
    return f"`{name}`"


def quote_val(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    return "'" + str(value).replace("'", "’") + "'"


class Filter(BaseModel):
    """Keep rows where ``column op value``.

    op 'year'/'month'/'quarter' compare a date's year, month (1-12) or quarter (1-4); 'years' and
    'months' are ranges (``value`` to ``value2``, either end open for years); 'in_top' keeps the rows
    whose ``column`` is among the ``value`` groups with the highest (``ascending``: lowest) ``by`` measure
    ("those three", "the top one").
    """

    column: str
    op: Literal["==", "!=", ">", ">=", "<", "<=", "between", "year", "month", "quarter", "years", "months", "in_top"]
    value: Any
    value2: Any = None
    by: "Measure | None" = None
    ascending: bool = False

    def to_text(self) -> str:
        c = quote_col(self.column)
        if self.op == "between":
            return f"{c} between {quote_val(self.value)} and {quote_val(self.value2)}"
        if self.op in ("year", "month", "quarter"):
            return f"{c} in {self.op} {self.value}"
        if self.op == "months":
            return f"{c} in months {self.value} to {self.value2}"
        if self.op == "in_top":
            return f"{c} among the {'bottom' if self.ascending else 'top'} {self.value} by {self.by.to_text()}"
        if self.op == "years":  # a range of years, open at either end
            if self.value2 is None:
                return f"{c} in years from {self.value}"
            if self.value is None:
                return f"{c} in years up to {self.value2}"
            return f"{c} in years {self.value} to {self.value2}"
        return f"{c} {self.op} {quote_val(self.value)}"


class Measure(BaseModel):
    """An aggregate: ``func`` of ``column``; column None with func 'count' counts rows."""

    func: Func
    column: str | None = None

    def to_text(self) -> str:
        if self.column is None:
            return "count of rows"
        return f"{FUNC_WORDS[self.func]} of {quote_col(self.column)}"

    def label(self) -> str:
        if self.column is None:
            return "number of rows"
        return f"{FUNC_WORDS[self.func]} {self.column}"


class QuerySpec(BaseModel):
    """One part of a question, as the offline model understood it."""

    table: str = ""
    task: Task = "decline"
    measures: list[Measure] = Field(default_factory=list)
    group_by: list[str] = Field(default_factory=list)
    time_column: str | None = None
    time_grain: Grain | None = None
    filters: list[Filter] = Field(default_factory=list)
    chart: Chart | None = None
    x: str | None = None
    y: str | None = None
    columns: list[str] = Field(default_factory=list, description="Columns a describe/missing/value_counts/corr task covers.")
    n: int | None = None
    ascending: bool = False
    rounding: int | None = None
    percent: bool = False
    percent_of: list[Filter] | None = Field(default=None, description=(
        "The rows a percent is of: None the whole table; else the rows these conditions keep, a part of `filters` "
        "('what percent of them is that?' after a count narrowed from an earlier one)."))
    percent_by_group: bool = Field(default=False, description=(
        "A grouped percent whose denominator is each group's own figure over the rows `percent_of` keeps (None: all "
        "the group's rows), not the total over the groups ('share of Female within each rank'; reader/shares.py)."))
    replaced: list[Filter] = Field(default_factory=list, description=(
        "Conditions of the earlier turn a value of another column was read in place of ('what about France?' after "
        "'in Asia'); the code checks that each nests with a condition kept (else declines)."))
    yes_no: bool = Field(default=False, description=(
        "A count asked as yes or no ('is there any airport above 10000 ft?'): the answer says yes or no with the "
        "count, and no rows kept is the answer no, not an error."))
    options: dict[str, Any] = Field(default_factory=dict, description="Parameters of a plugin task (target, method, k...).")
    assumptions: list[str] = Field(default_factory=list)
    problems: list[str] = Field(default_factory=list)

    @property
    def answerable(self) -> bool:
        return self.task != "decline" and not self.problems


Filter.model_rebuild()
