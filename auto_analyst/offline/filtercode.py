"""The filters of a spec as pandas lines and as words: shared by the pandas code (codegen) and the SQL code (sqlcode).

:func:`filter_lines` writes one line per condition keeping the rows of ``var`` (a value named is looked up in the
whole table ``source``); :func:`where_said` says the filters in the names of results and charts.
"""

from __future__ import annotations

import re

from auto_analyst.offline.pycode import FUNC_CALL
from auto_analyst.offline.spec import Filter, QuerySpec

__all__ = ["ISO_DAY", "column_literal", "filter_lines", "where_said"]


def column_literal(name: str) -> str:
    """A column name as a Python string literal in generated code (``df['a b']``)."""
    return repr(name)


_c = column_literal


def where_said(spec: QuerySpec) -> str:
    """' (city = Montréal, order_date in 2023)': the filters, said in the names of results and charts."""
    if not spec.filters:
        return ""
    said: list[str] = []
    for f in spec.filters:
        prev = next((k for k, g in enumerate(spec.filters) if g is not f and g.column == f.column and g.op == f.op
                     and f.op in ("==", "year", "month") and spec.filters.index(g) < spec.filters.index(f)), None)
        if prev is not None:
            said[-1] += f" or {f.value}"  # several values of one column: any of them
            continue
        if f.op in ("year", "month", "quarter"):
            said.append(f"{f.column} in {f.op} {f.value}")
        elif f.op == "months":
            said.append(f"{f.column} months {f.value}–{f.value2}")
        elif f.op == "in_top":
            said.append(f"{f.column} in the {'bottom' if f.ascending else 'top'} {f.value}")
        elif f.op == "years":
            said.append(f"{f.column} years {f.value if f.value is not None else '…'}–{f.value2 if f.value2 is not None else '…'}")
        elif f.op == "between":
            said.append(f"{f.column} between {f.value} and {f.value2}")
        else:
            said.append(f"{f.column} {'=' if f.op == '==' else f.op} {f.value}")
    return " (" + ", ".join(said) + ")"


ISO_DAY = re.compile(r"\d{4}-\d\d-\d\d")


def _filter_line(f: Filter, var: str, source: str) -> str:
    col = f"{var}[{_c(f.column)}]"
    # a named value is looked up in the whole table (``source``), never in rows an earlier condition kept: 'Chile'
    # with 'births below 200' is no row, not "no value 'Chile'"
    whole = f"{source}[{_c(f.column)}]"
    if f.op in ("year", "month", "quarter"):
        return f"{var} = {var}[pd.to_datetime({col}).dt.{f.op} == {f.value!r}]"
    if f.op == "months":
        lo, hi = f.value, f.value2
        cond = f"months.between({lo!r}, {hi!r})" if lo <= hi else f"months.ge({lo!r}) | months.le({hi!r})"
        cond = cond.replace("months", f"{var}_months")
        return f"{var}_months = pd.to_datetime({col}).dt.month\n{var} = {var}[{cond}]"
    if f.op == "in_top":
        m = f.by
        agg = f"{var}.groupby({_c(f.column)}).size()" if m.column is None else \
            f"{var}.groupby({_c(f.column)})[{_c(m.column)}]{FUNC_CALL.get(m.func, '.sum()')}"
        pick = "nsmallest" if f.ascending else "nlargest"
        return (f"{var}_chosen = {agg}.{pick}({f.value!r}).index\n"
                f"print('kept the {'bottom' if f.ascending else 'top'} {f.value} {f.column} by {m.label()}:', list({var}_chosen))\n"
                f"{var} = {var}[{col}.isin({var}_chosen)]")
    if f.op == "years":
        # a datetime column compares its year; a column of year numbers compares itself
        year = f"({col}.dt.year if pd.api.types.is_datetime64_any_dtype({col}) else {col})"
        lo = f"({year} >= {f.value!r})" if f.value is not None else None
        hi = f"({year} <= {f.value2!r})" if f.value2 is not None else None
        return f"{var} = {var}[{' & '.join(x for x in (lo, hi) if x)}]"
    if f.op == "between" and isinstance(f.value, str) and ISO_DAY.fullmatch(f.value) and ISO_DAY.fullmatch(str(f.value2)):
        # a range of days: the last day is kept whole (a timestamp at 15:00 on it is inside)
        return (f"{var} = {var}[pd.to_datetime({col}).between(pd.Timestamp({f.value!r}), "
                f"pd.Timestamp({f.value2!r}) + pd.Timedelta(days=1) - pd.Timedelta(1, 'ns'))]")
    if f.op == "between":
        return f"{var} = {var}[{col}.between({f.value!r}, {f.value2!r})]"
    if f.op in ("==", "!=") and isinstance(f.value, str):
        return f"{var} = {var}[{col} {f.op} pick_value({whole}, {f.value!r})]"
    return f"{var} = {var}[{col} {f.op} {f.value!r}]"


def filter_lines(filters: list[Filter], var: str, source: str) -> list[str]:
    """One line per condition; several values of one column ("North and South") keep rows of any of them."""
    out, done = [], set()
    for f in filters:
        same = [g for g in filters if g.column == f.column and g.op == f.op and g.op in ("==", "year", "month")]
        if len(same) > 1:
            if f.column in done:
                continue
            done.add(f.column)
            col, whole = f"{var}[{_c(f.column)}]", f"{source}[{_c(f.column)}]"
            if f.op == "==":
                picks = ", ".join(f"pick_value({whole}, {g.value!r})" if isinstance(g.value, str) else repr(g.value)
                                  for g in same)
                out.append(f"{var} = {var}[{col}.isin([{picks}])]")
            else:
                out.append(f"{var} = {var}[pd.to_datetime({col}).dt.{f.op}.isin({[g.value for g in same]!r})]")
            continue
        out.append(_filter_line(f, var, source))
    return out
