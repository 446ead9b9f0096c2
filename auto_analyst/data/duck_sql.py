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
from collections.abc import Mapping, Sequence
from typing import Any

__all__ = ["FUNCS", "GRAINS", "DIALECTS", "quote", "literal", "aggregate_sql", "rows_sql", "grouped_aggregate_sql"]

FUNCS = {"mean": "avg({})", "average": "avg({})", "avg": "avg({})", "median": "median({})", "sum": "sum({})",
         "total": "sum({})", "count": "count({})", "min": "min({})", "max": "max({})", "std": "stddev_samp({})",
         "var": "var_samp({})", "nunique": "count(DISTINCT {})", "pct_true": "100 * avg(CAST({} AS DOUBLE))",
         "std_sample": "stddev_samp({})", "std_pop": "stddev_pop({})", "range": "max({0}) - min({0})"}
"""Aggregate name (the offline model's, plus the plain-word aliases) → DuckDB expression."""

GRAINS = {
    "day": "strftime({}, '%Y-%m-%d')",
    "week": "strftime(date_trunc('week', {0}), '%Y-%m-%d') || '/' || strftime(date_trunc('week', {0}) + INTERVAL 6 DAY, '%Y-%m-%d')",
    "month": "strftime({}, '%Y-%m')",
    "quarter": "CAST(year({0}) AS VARCHAR) || 'Q' || CAST(quarter({0}) AS VARCHAR)",
    "year": "year({})",
    "month_of_year": "month({})",
}
"""Time grain → the group key DuckDB computes, written as pandas writes it (see the module docstring)."""

_PCT = "100.0 * avg(CASE WHEN {0} THEN 1.0 WHEN NOT {0} THEN 0.0 END)"
_DIALECT_FUNCS = {
    "postgres": {"median": "percentile_cont(0.5) WITHIN GROUP (ORDER BY {})", "pct_true": _PCT},
    "sqlite": {"median": None, "std": None, "var": None, "std_sample": None, "std_pop": None, "pct_true": _PCT},
}
"""Per dialect: aggregates written otherwise than DuckDB's (None: the database has no such aggregate)."""
_DIALECT_GRAINS = {
    "postgres": {
        "day": "to_char({}, 'YYYY-MM-DD')",
        "week": "to_char(date_trunc('week', {0}), 'YYYY-MM-DD') || '/' || to_char(date_trunc('week', {0}) + INTERVAL '6 days', 'YYYY-MM-DD')",
        "month": "to_char({}, 'YYYY-MM')",
        "quarter": "to_char({0}, 'YYYY') || 'Q' || to_char({0}, 'Q')",
        "year": "CAST(extract(year FROM {}) AS INTEGER)",
        "month_of_year": "CAST(extract(month FROM {}) AS INTEGER)",
    },
    "sqlite": {  # dates are ISO text in SQLite; 'weekday 0' moves to the week's Sunday, six days back is its Monday
        "day": "strftime('%Y-%m-%d', {})",
        "week": "date({0}, 'weekday 0', '-6 days') || '/' || date({0}, 'weekday 0')",
        "month": "strftime('%Y-%m', {})",
        "quarter": "strftime('%Y', {0}) || 'Q' || ((CAST(strftime('%m', {0}) AS INTEGER) + 2) / 3)",
        "year": "CAST(strftime('%Y', {}) AS INTEGER)",
        "month_of_year": "CAST(strftime('%m', {}) AS INTEGER)",
    },
}
_DIALECT_PARTS = {"duckdb": {"year": "year({})", "month": "month({})", "quarter": "quarter({})",
                             "next_day": "({} + INTERVAL 1 DAY)"},
                  "postgres": {"year": "extract(year FROM {})", "month": "extract(month FROM {})",
                               "quarter": "extract(quarter FROM {})", "next_day": "({} + INTERVAL '1 day')"},
                  "sqlite": {"year": "CAST(strftime('%Y', {}) AS INTEGER)", "month": "CAST(strftime('%m', {}) AS INTEGER)",
                             "quarter": "((CAST(strftime('%m', {}) AS INTEGER) + 2) / 3)",
                             "next_day": "date({}, '+1 day')"}}
DIALECTS = ("duckdb", "postgres", "sqlite")
"""The dialects :func:`aggregate_sql` writes (sqlglot's names; SQLAlchemy's ``postgresql`` is ``postgres``)."""

_OPS = {"==": "=", "!=": "<>", ">": ">", ">=": ">=", "<": "<", "<=": "<="}


def quote(name: str, dialect: str = "duckdb") -> str:
    """A SQL identifier for ``name``, always quoted, written by sqlglot for ``dialect`` (``"order items"``,
    ``"order"``, ``"o""rders"``): a table or column name from the data cannot change the query."""
    from sqlglot import exp

    return exp.to_identifier(str(name), quoted=True).sql(dialect=dialect)


def literal(value: Any, dialect: str = "duckdb") -> str:
    """A SQL literal: NULL, TRUE/FALSE, a number, a DATE/TIMESTAMP (ISO text in SQLite), or a quoted string.

    Raises:
        ValueError: a float that is not finite (no SQL literal compares equal to it).
    """
    return _literal(value, dialect)


def _literal(value: Any, dialect: str) -> str:
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
        return f"'{value.isoformat(sep=' ')}'" if dialect == "sqlite" else f"TIMESTAMP '{value.isoformat(sep=' ')}'"
    if isinstance(value, _dt.date):
        return f"'{value.isoformat()}'" if dialect == "sqlite" else f"DATE '{value.isoformat()}'"
    return "'" + str(value).replace("'", "''") + "'"


def _condition(cond: Sequence[Any], dialect: str = "duckdb") -> str:
    """One filter ``(column, op, value[, value2])``: ops ==, !=, <, <=, >, >=, between, in, year, month, quarter,
    years, months (a range of months, wrapping past December when ``value`` > ``value2``), days (a range of whole
    days: the last day is kept whole), not_null. ``!=`` keeps missing values, as pandas' ``!=`` does."""
    column, op, value = cond[0], cond[1], cond[2]
    value2 = cond[3] if len(cond) > 3 else None
    c = _ref(column)
    parts = _DIALECT_PARTS[dialect]

    def literal(v: Any) -> str:
        return _literal(v, dialect)

    if op == "not_null":
        return f"{c} IS NOT NULL"
    if op == "!=" and value is not None:
        return f"({c} <> {literal(value)} OR {c} IS NULL)"
    if op in _OPS:
        return f"{c} IS NULL" if value is None and op == "==" else f"{c} {_OPS[op]} {literal(value)}"
    if op == "days":  # whole days: a timestamp at 15:00 on the last day is inside
        lo, hi = _dt.date.fromisoformat(str(value)[:10]), _dt.date.fromisoformat(str(value2)[:10])
        return f"{c} >= {literal(lo)} AND {c} < {parts['next_day'].format(literal(hi))}"
    if op == "quarter":
        return f"{parts['quarter'].format(c)} = {literal(value)}"
    if op == "months":
        month = parts["month"].format(c)
        if value <= value2:
            return f"{month} BETWEEN {literal(value)} AND {literal(value2)}"
        return f"({month} >= {literal(value)} OR {month} <= {literal(value2)})"
    if op == "between":
        return f"{c} BETWEEN {literal(value)} AND {literal(value2)}"
    if op == "in":
        return f"{c} IN ({', '.join(literal(v) for v in value)})"
    if op in ("year", "month"):
        return f"{parts[op].format(c)} = {literal(value)}"
    if op == "years":  # a range of years of a date column, open at either end (a column of year numbers: >=, <=)
        year = parts["year"].format(c)
        out = ([f"{year} >= {literal(value)}"] if value is not None else []) + \
              ([f"{year} <= {literal(value2)}"] if value2 is not None else [])
        return " AND ".join(out) or "1 = 1"
    raise ValueError(f"Unknown filter operator {op!r}; use one of "
                     f"{', '.join([*_OPS, 'between', 'in', 'year', 'month', 'quarter', 'years', 'months', 'days', 'not_null'])}.")


def aggregate_sql(table: str, measures: Sequence[tuple[str, str | None]], by: Sequence[str] = (),
                  where: Sequence[Sequence[Any]] = (), grain: tuple[str, str] | None = None,
                  order: str = "groups", limit: int | None = None, labels: Sequence[str] | None = None,
                  dialect: str = "duckdb", joins: Sequence[Any] = (), outer: bool = False,
                  unmatched: Mapping[Any, str] | None = None, group_labels: Sequence[str] | None = None,
                  drop_missing_groups: bool = False, relations: Mapping[str, str] | None = None) -> str:
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
        dialect: one of :data:`DIALECTS` (``data.sql_check.sqlglot_dialect`` maps a SQLAlchemy URL's); the
            semantics stay pandas' in each (``tests/data/test_sql_dialects.py`` checks them against pandas).
        joins: relationships (``JoinPath.steps``, ``data/relations.py``) leading from ``table`` to the tables other
            columns live in; each column may then be ``(table, column)``. A path that repeats ``table``'s rows
            (its far side not unique: one-to-many or many-to-many) is refused for every aggregate but min, max
            and nunique, which repetition does not change.
        outer: LEFT JOINs (every row of ``table`` is kept, as the offline model's pandas join keeps it).
        unmatched: group column ``(table, column)`` → the label its rows without a match get (``'(no match)'``):
            the column reads the label where that table's key is missing after the LEFT JOIN.
        group_labels: the result's column name of each ``by`` column (default its column name).
        drop_missing_groups: leave out rows whose group key is missing, as pandas' ``groupby`` does.
        relations: table → what to read it from instead of the table itself (``(SELECT ...) AS "table"``: a subquery
            under the table's name, e.g. SQLite's text values of a number column made NULL).

    Returns:
        One SELECT statement, parsed back by sqlglot in that dialect.

    Raises:
        ValueError: an unknown aggregate, grain, operator, order or dialect, an aggregate the dialect does not have
            (SQLite has no median, std or var), or labels not matching the measures.
    """
    if dialect not in DIALECTS:
        raise ValueError(f"Unknown SQL dialect {dialect!r}; use one of {', '.join(DIALECTS)}.")
    source, key_of = _from_clause(table, joins, measures, outer, relations or {})
    funcs = {**FUNCS, **_DIALECT_FUNCS.get(dialect, {})}
    grains = {**GRAINS, **_DIALECT_GRAINS.get(dialect, {})}
    if not measures:
        raise ValueError("aggregate_sql needs at least one measure.")
    if labels is not None and len(labels) != len(measures):
        raise ValueError("labels must name every measure, in order.")
    if group_labels is not None and len(group_labels) != len(by):
        raise ValueError("group_labels must name every group column, in order.")
    select, keys, present = [], [], []
    for k, b in enumerate(by):
        expr = _ref(b)
        if unmatched and b in unmatched and isinstance(b, tuple) and b[0] in key_of:
            expr = f"CASE WHEN {key_of[b[0]]} IS NULL THEN {_literal(unmatched[b], dialect)} ELSE {expr} END"
        name = group_labels[k] if group_labels is not None else (b[1] if isinstance(b, tuple) else None)
        plain = not isinstance(b, tuple) and name == b  # a column under its own name needs no alias
        select.append(expr + (f" AS {quote(name)}" if name is not None and not plain else ""))
        keys.append(expr)
        present.append(f"{expr} IS NOT NULL")
    if grain is not None:
        unit, column = grain
        if unit not in grains:
            raise ValueError(f"Unknown time grain {unit!r}; use one of {', '.join(grains)}.")
        select.append(f"{grains[unit].format(_ref(column))} AS {quote(unit)}")
        keys.append(quote(unit))
        present.append(f"{_ref(column)} IS NOT NULL")
    for k, (func, column) in enumerate(measures):
        if funcs.get(str(func).lower(), "") is None:
            raise ValueError(f"{dialect} has no {func} aggregate; compute it in pandas on the rows the query brings back.")
        expr = funcs.get(str(func).lower())
        if expr is None:
            raise ValueError(f"Unknown aggregate {func!r}; use one of {', '.join(sorted(FUNCS))}.")
        arg = "*" if column is None else _ref(column)
        if column is None and func != "count":
            raise ValueError(f"{func} needs a column; only count counts rows.")
        name = column[1] if isinstance(column, tuple) else column
        label = labels[k] if labels is not None else (f"{func}_{name}" if column is not None else "count_rows")
        select.append(f"{expr.format(arg)} AS {quote(label)}")
    sql = f"SELECT {', '.join(select)} FROM {source}"
    conditions = [_condition(c, dialect) for c in where] + (present if drop_missing_groups else [])
    if conditions:
        sql += " WHERE " + " AND ".join(f"({c})" if " OR " in c else c for c in conditions)
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
    if dialect != "duckdb":
        import sqlglot

        sqlglot.parse_one(sql, read=dialect)  # a statement the dialect's parser cannot read is a bug here, not later
    return sql


def rows_sql(table: str, columns: Sequence[str] | None = None, where: Sequence[Sequence[Any]] = (),
             order_by: str | None = None, ascending: bool = False, limit: int | None = None,
             dialect: str = "duckdb", at_extreme: bool = False, relation: str | None = None) -> str:
    """SQL for rows of ``table``: ``columns`` (default all) of the rows ``where`` keeps, optionally ordered by one
    column (missing values left out, as pandas' ``nlargest``/``nsmallest`` leaves them), at most ``limit`` rows.

    ``relation`` is what to read instead of the table itself (as ``aggregate_sql``'s ``relations``).
    ``at_extreme`` keeps every row whose ``order_by`` value is the largest (``ascending``: smallest) among the
    rows ``where`` keeps: all the rows tied at the top, not one of them.

    Raises:
        ValueError: an unknown dialect or filter operator.
    """
    if dialect not in DIALECTS:
        raise ValueError(f"Unknown SQL dialect {dialect!r}; use one of {', '.join(DIALECTS)}.")
    cols = ", ".join(quote(c) for c in columns) if columns else "*"
    conditions = [_condition(c, dialect) for c in where]
    if order_by is not None:
        conditions.append(f"{quote(order_by)} IS NOT NULL")
        if at_extreme:
            inner = " AND ".join(f"({c})" if " OR " in c else c for c in conditions)
            conditions.append(f"{quote(order_by)} = (SELECT {'min' if ascending else 'max'}({quote(order_by)}) "
                              f"FROM {relation or quote(table)} WHERE {inner})")
    sql = f"SELECT {cols} FROM {relation or quote(table)}"
    if conditions:
        sql += " WHERE " + " AND ".join(f"({c})" if " OR " in c else c for c in conditions)
    if order_by is not None:
        sql += f" ORDER BY {quote(order_by)} {'ASC' if ascending else 'DESC'}"
    if limit is not None:
        sql += f" LIMIT {int(limit)}"
    if dialect != "duckdb":
        import sqlglot

        sqlglot.parse_one(sql, read=dialect)
    return sql


def _ref(column: Any) -> str:
    """A column reference: ``name`` or ``(table, name)`` (qualified, for joins)."""
    if isinstance(column, tuple):
        return f"{quote(column[0])}.{quote(column[1])}"
    return quote(column)


_UNCHANGED_BY_REPEATS = {"min", "max", "nunique"}


def _from_clause(table: str, joins: Sequence[Any], measures: Sequence[tuple[Any, Any]],
                 outer: bool = False, relations: Mapping[str, str] | None = None) -> tuple[str, dict[str, str]]:
    """``"table" JOIN "other" ON ...`` along the relationships, refusing a path that inflates the measures; and
    each joined table's key column (missing after a LEFT JOIN exactly on the rows without a match)."""
    relations = relations or {}
    out, here, key_of = relations.get(table, quote(table)), table, {}
    for step in joins:
        if step.duplicates(here):
            touched = [f for f, _ in measures if str(f).lower() not in _UNCHANGED_BY_REPEATS]
            if touched:
                raise ValueError(f"Joining {here} to {step.other(here)} ({step.kind_from(here)}) repeats rows of "
                                 f"{here}: a {touched[0]} over the join would count them more than once; aggregate "
                                 f"{step.other(here)} first, or answer without the join.")
        other = step.other(here)
        out += f" {'LEFT JOIN' if outer else 'JOIN'} {relations.get(other, quote(other))} ON {step.sql_on(quote=quote)}"
        key_of[other] = f"{quote(other)}.{quote(step.columns_of(other)[0])}"
        here = other
    return out, key_of


def grouped_aggregate_sql(table: str, by: list[str] | str, value: str, func: str = "mean") -> str:
    """SQL for ``func(value)`` per group of ``by`` on ``table``, ordered by the groups (column ``func_value``).

    Raises:
        ValueError: an unknown aggregate (see :data:`FUNCS`).
    """
    return aggregate_sql(table, [(func, value)], by=[by] if isinstance(by, str) else list(by))
