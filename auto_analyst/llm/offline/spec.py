"""The offline model's reading of a question: a typed query specification and its canonical text.

The canonical text (:meth:`QuerySpec.to_text`) is what the offline planner writes as the
``standalone_question``; the parser reads it back, which is how follow-ups build on earlier turns.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field

__all__ = ["Filter", "Measure", "QuerySpec", "quote_col", "quote_val"]

Func = Literal["mean", "median", "sum", "count", "min", "max", "std", "var", "nunique", "pct_true"]
# built-in tasks; task plugins (auto_analyst.llm.offline.tasks) add their own names
Task = str
Chart = Literal["histogram", "bar", "scatter", "line", "box", "pie"]
Grain = Literal["day", "week", "month", "quarter", "year"]

FUNC_WORDS = {"mean": "mean", "median": "median", "sum": "total", "count": "count", "min": "minimum",
              "max": "maximum", "std": "standard deviation", "var": "variance", "nunique": "number of distinct",
              "pct_true": "percent"}


def quote_col(name: str) -> str:
    return f"`{name}`"


def quote_val(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    return "'" + str(value).replace("'", "’") + "'"


class Filter(BaseModel):
    """Keep rows where ``column op value``; op 'year'/'month' compare a date's year or month number."""

    column: str
    op: Literal["==", "!=", ">", ">=", "<", "<=", "between", "year", "month", "years"]
    value: Any
    value2: Any = None

    def to_text(self) -> str:
        c = quote_col(self.column)
        if self.op == "between":
            return f"{c} between {quote_val(self.value)} and {quote_val(self.value2)}"
        if self.op in ("year", "month"):
            return f"{c} in {self.op} {self.value}"
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
    options: dict[str, Any] = Field(default_factory=dict, description="Parameters of a plugin task (target, method, k...).")
    assumptions: list[str] = Field(default_factory=list)
    problems: list[str] = Field(default_factory=list)

    @property
    def answerable(self) -> bool:
        return self.task != "decline" and not self.problems

    def to_text(self) -> str:  # noqa: C901 - one branch per task, kept flat on purpose
        """Canonical English the parser reads back (columns in backticks, values quoted)."""
        t = self.task
        from auto_analyst.llm.offline.tasks import PLUGINS

        if t in PLUGINS:
            return PLUGINS[t].to_text(self) + self._suffix()
        grain = f" by {self.time_grain} of {quote_col(self.time_column)}" if self.time_grain and self.time_column else ""
        group = "".join(f" by {quote_col(g)}" for g in self.group_by)
        measures = " and ".join(m.to_text() for m in self.measures)
        if t == "aggregate":
            body = f"{measures}{group}{grain}"
        elif t == "rank":
            word = "lowest" if self.ascending else "highest"
            if self.group_by:
                body = f"which {quote_col(self.group_by[0])} has the {word} {measures}{grain}"
            else:
                body = f"which {self.time_grain} of {quote_col(self.time_column)} has the {word} {measures}"
        elif t == "top_n":
            word = "bottom" if self.ascending else "top"
            if self.group_by:
                body = f"{word} {self.n} {quote_col(self.group_by[0])} by {measures}"
            elif self.measures[0].func == "sum":
                body = f"total of the {word} {self.n} {quote_col(self.measures[0].column)}"
            else:
                body = f"{word} {self.n} rows by {quote_col(self.measures[0].column)}"
        elif t == "describe":
            body = "summary statistics of " + (" and ".join(map(quote_col, self.columns)) if self.columns else "all columns")
        elif t == "missing":
            body = "missing values of " + (" and ".join(map(quote_col, self.columns)) if self.columns else "all columns")
        elif t == "value_counts":
            body = f"value counts of {quote_col(self.columns[0])}"
        elif t == "correlation":
            body = f"correlation between {quote_col(self.x)} and {quote_col(self.y)}"
        elif t == "corr_matrix":
            body = "correlation matrix" + (" of " + " and ".join(map(quote_col, self.columns)) if self.columns else "")
        elif t == "chart":
            if self.chart == "histogram":
                body = f"histogram of {quote_col(self.x)}"
            elif self.chart == "scatter":
                body = f"scatter plot of {quote_col(self.x)} against {quote_col(self.y)}"
            elif self.chart == "box":
                body = f"box plot of {quote_col(self.y)} by {quote_col(self.x)}"
            else:
                body = f"{self.chart} chart of {measures}{group}{grain}"
        elif t == "shape":
            body = "number of rows and columns"
        elif t == "columns":
            body = "list of columns"
        else:
            return ""
        return body + self._suffix()

    def _suffix(self) -> str:
        body = ""
        if self.filters:
            said, done = [], set()
            for f in self.filters:
                same = [g for g in self.filters if g.column == f.column and g.op == f.op and g.op in ("==", "year", "month")]
                if len(same) > 1:
                    if (f.column, f.op) not in done:
                        done.add((f.column, f.op))
                        # several values of one column keep the rows of any of them
                        said.append(f.to_text() + "".join(f" or {quote_val(g.value) if f.op == '==' else g.value}"
                                                          for g in same[1:]))
                    continue
                said.append(f.to_text())
            body += " where " + " and ".join(said)
        if self.rounding is not None:
            body += f", rounded to {self.rounding} decimals"
        if self.percent:
            body += ", as a percentage"
        return body
