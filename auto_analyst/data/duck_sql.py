"""SQL for code generators that target a DuckDB table: grouped aggregates, filters, time grains, ranking.

The embedded offline model writes pandas for pandas tables; for a table whose description carries the
load note ``engine=duckdb`` it must write SQL instead and run it on the script's ``con``
(``show(con.sql(sql).df(), name=...)``). :func:`aggregate_sql` writes that SQL for its aggregate, rank,
top-n and grouped-chart question kinds, with the same semantics as its pandas code: pandas' ``std``/``var``
are the sample statistics (``stddev_samp``/``var_samp``), ``count`` of a column counts non-missing values,
``nunique`` ignores missing values, and the time grains read like pandas' (``'%Y-%m'`` months, ``2023Q1``
quarters, Monday-to-Sunday weeks ``2023-01-02/2023-01-08``). Identifiers are double-quoted and values
written as SQL literals, so a column or value from the data cannot change the query.

Example:
    >>> aggregate_sql("sales", [("sum", "amount")], by=["region"], where=[("year", "==", 2023)])
    'SELECT "region", sum("amount") AS "sum_amount" FROM "sales" WHERE "year" = 2023 GROUP BY "region" ORDER BY "region"'
"""

from __future__ import annotations

import datetime as _dt
from collections.abc import Sequence
from typing import Any

__all__ = ["FUNCS", "GRAINS", "quote", "literal", "aggregate_sql", "grouped_aggregate_sql", "sql_decline"]

FUNCS = {"mean": "avg({})", "average": "avg({})", "avg": "avg({})", "median": "median({})", "sum": "sum({})",
         "total": "sum({})", "count": "count({})", "min": "min({})", "max": "max({})", "std": "stddev_samp({})",
         "var": "var_samp({})", "nunique": "count(DISTINCT {})", "pct_true": "100 * avg(CAST({} AS DOUBLE))"}
"""Aggregate name (the offline model's, plus the plain-word aliases) → DuckDB expression."""

GRAINS = {
    "day": "strftime({}, '%Y-%m-%d')",
    "week": "strftime(date_trunc('week', {0}), '%Y-%m-%d') || '/' || strftime(date_trunc('week', {0}) + INTERVAL 6 DAY, '%Y-%m-%d')",
    "month": "strftime({}, '%Y-%m')",
    "quarter": "CAST(year({0}) AS VARCHAR) || 'Q' || CAST(quarter({0}) AS VARCHAR)",
    "year": "year({})",
}
"""Time grain → the group key DuckDB computes, written as pandas writes it (see the module docstring)."""

_OPS = {"==": "=", "!=": "<>", ">": ">", ">=": ">=", "<": "<", "<=": "<="}


def quote(name: str) -> str:
    """A SQL identifier for ``name`` (double quotes, doubled inside)."""
    return '"' + str(name).replace('"', '""') + '"'


def literal(value: Any) -> str:
    """A SQL literal: NULL, TRUE/FALSE, a number, a DATE/TIMESTAMP, or a quoted string.

    Raises:
        ValueError: a float that is not finite (no SQL literal compares equal to it).
    """
    if value is None:
        return "NULL"
    if isinstance(value, bool):
        return "TRUE" if value else "FALSE"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if value != value or value in (float("inf"), float("-inf")):
            raise ValueError(f"{value!r} cannot be compared in SQL; filter with IS NULL or isfinite() instead.")
        return repr(value)
    if isinstance(value, _dt.datetime):
        return f"TIMESTAMP '{value.isoformat(sep=' ')}'"
    if isinstance(value, _dt.date):
        return f"DATE '{value.isoformat()}'"
    return "'" + str(value).replace("'", "''") + "'"


def _condition(cond: Sequence[Any]) -> str:
    """One filter ``(column, op, value[, value2])``: ops ==, !=, <, <=, >, >=, between, in, year, month, years."""
    column, op, value = cond[0], cond[1], cond[2]
    value2 = cond[3] if len(cond) > 3 else None
    c = quote(column)
    if op in _OPS:
        return f"{c} IS NULL" if value is None and op == "==" else f"{c} {_OPS[op]} {literal(value)}"
    if op == "between":
        return f"{c} BETWEEN {literal(value)} AND {literal(value2)}"
    if op == "in":
        return f"{c} IN ({', '.join(literal(v) for v in value)})"
    if op in ("year", "month"):
        return f"{op}({c}) = {literal(value)}"
    if op == "years":  # a range of years of a date column, open at either end (a column of year numbers: >=, <=)
        parts = ([f"year({c}) >= {literal(value)}"] if value is not None else []) + \
                ([f"year({c}) <= {literal(value2)}"] if value2 is not None else [])
        return " AND ".join(parts) or "TRUE"
    raise ValueError(f"Unknown filter operator {op!r}; use one of {', '.join([*_OPS, 'between', 'in', 'year', 'month', 'years'])}.")


def aggregate_sql(table: str, measures: Sequence[tuple[str, str | None]], by: Sequence[str] = (),
                  where: Sequence[Sequence[Any]] = (), grain: tuple[str, str] | None = None,
                  order: str = "groups", limit: int | None = None, labels: Sequence[str] | None = None) -> str:
    """SQL for aggregates of ``table``, per group of ``by`` (and of a time grain), over the rows ``where`` keeps.

    Args:
        table: the table's name (its view in the script's ``con``).
        measures: ``(func, column)`` pairs; func one of :data:`FUNCS`; column None with ``count`` counts rows.
        by: group columns (may be empty: one row of totals).
        where: filters ``(column, op, value[, value2])``, all of which must hold; ``==`` with several values
            of one column is ``("col", "in", [v1, v2])``.
        grain: ``(unit, date column)``, unit one of :data:`GRAINS`; the group key is named like the unit.
        order: ``groups`` (by the group keys), ``desc`` or ``asc`` (by the first measure, ties by the keys).
        limit: keep this many rows (top/bottom n with ``order``).
        labels: the result's column name of each measure (default ``func_column``, ``count_rows``).

    Returns:
        One SELECT statement.

    Raises:
        ValueError: an unknown aggregate, grain, operator or order, or labels not matching the measures.
    """
    if not measures:
        raise ValueError("aggregate_sql needs at least one measure.")
    if labels is not None and len(labels) != len(measures):
        raise ValueError("labels must name every measure, in order.")
    select, keys = [], []
    for b in by:
        select.append(quote(b))
        keys.append(quote(b))
    if grain is not None:
        unit, column = grain
        if unit not in GRAINS:
            raise ValueError(f"Unknown time grain {unit!r}; use one of {', '.join(GRAINS)}.")
        select.append(f"{GRAINS[unit].format(quote(column))} AS {quote(unit)}")
        keys.append(quote(unit))
    for k, (func, column) in enumerate(measures):
        expr = FUNCS.get(str(func).lower())
        if expr is None:
            raise ValueError(f"Unknown aggregate {func!r}; use one of {', '.join(sorted(FUNCS))}.")
        arg = "*" if column is None else quote(column)
        if column is None and func != "count":
            raise ValueError(f"{func} needs a column; only count counts rows.")
        label = labels[k] if labels is not None else (f"{func}_{column}" if column is not None else "count_rows")
        select.append(f"{expr.format(arg)} AS {quote(label)}")
    sql = f"SELECT {', '.join(select)} FROM {quote(table)}"
    if where:
        sql += " WHERE " + " AND ".join(_condition(c) for c in where)
    if keys:
        sql += " GROUP BY " + ", ".join(keys)
    first = select[len(keys)].rsplit(" AS ", 1)[1]
    if order == "groups":
        sql += (" ORDER BY " + ", ".join(keys)) if keys else ""
    elif order in ("desc", "asc"):
        sql += f" ORDER BY {first} {order.upper()} NULLS LAST" + "".join(f", {k}" for k in keys)
    else:
        raise ValueError(f"Unknown order {order!r}; use groups, desc or asc.")
    if limit is not None:
        sql += f" LIMIT {int(limit)}"
    return sql


def grouped_aggregate_sql(table: str, by: list[str] | str, value: str, func: str = "mean") -> str:
    """SQL for ``func(value)`` per group of ``by`` on ``table``, ordered by the groups (column ``func_value``).

    Raises:
        ValueError: an unknown aggregate (see :data:`FUNCS`).
    """
    return aggregate_sql(table, [(func, value)], by=[by] if isinstance(by, str) else list(by))


OFFLINE_MODEL = "local/offline"
"""The model string of the embedded offline model (``offline/engine.py: offline_lm``)."""


def sql_decline(lm: Any, code: str, duckdb_tables: Sequence[str], active: str) -> str:
    """The sentence to decline with when ``lm`` wrote pandas code that reads a DuckDB table; else ''.

    That is the embedded offline model until its engine says it writes SQL for DuckDB tables (an attribute
    ``writes_duckdb_sql = True`` on the engine), on a script that names a DuckDB table (its variable,
    ``tables['name']``, or ``df`` when the active table is one). Its pandas code would fail on a relation,
    or run with other semantics; and loading the table into pandas is what DuckDB is there to avoid.

    Args:
        lm: the session's ``dspy.LM``.
        code: the script the model wrote.
        duckdb_tables: the session's DuckDB tables; ``active`` the table bound to ``df``.
    """
    if not duckdb_tables or getattr(lm, "model", "") != OFFLINE_MODEL:
        return ""
    if getattr(getattr(lm, "engine", None), "writes_duckdb_sql", False):
        return ""
    names = _names_read(code)
    read = [t for t in duckdb_tables if t in names] + ([active] if "df" in names and active in duckdb_tables else [])
    if not read:
        return ""
    return (f"The embedded offline model cannot answer this yet: {', '.join(dict.fromkeys(read))} is a DuckDB table "
            "(its file is at least duckdb_min_mb MiB, so it is not loaded into pandas) and the offline model writes "
            "only pandas code. Use a language model (--model openai/gpt-4o-mini, or any model LiteLLM supports), or "
            "set duckdb_min_mb higher (0 = off) to load the file with pandas.")


def _names_read(code: str) -> set[str]:
    """The names a script reads, and the keys of ``tables['...']``."""
    import ast

    try:
        tree = ast.parse(code or "")
    except SyntaxError:
        return set()
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            out.add(node.id)
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            out.add(node.value)  # tables['big'], tables.get('big')
    return out
