"""The description of a DuckDB table, in the same :class:`TableDescription` shape the pandas path builds.

Computed by DuckDB over the whole table, so nothing but the first :data:`SAMPLE_ROWS`
rows (for the examples) comes into pandas. The rules are those of
:func:`auto_analyst.data.description.describe_column`, so a small file gives the same description either
way (``tests/scale/test_duck.py`` checks it): kind, missing count, distinct count, min/max/mean of numbers
and dates (mean over the finite values, six decimals), the twelve most frequent values of categorical and
boolean columns, the first three distinct values as examples.

Why not ``SUMMARIZE`` alone: it also computes quartiles and the standard deviation, which the description
does not show; measured on 10M rows here it took 9.7 s against 1.5 s for one pass of exactly these
aggregates, and its ``null_percentage`` is rounded to 0.01 % (a thousand rows off on 10M). Its
``approx_unique`` (HyperLogLog) is used as it does: distinct counts are exact (``count(DISTINCT)``) up to
:data:`EXACT_DISTINCT_MAX`, and approximate (said in the column's note) above it, where an exact count
would hold every value in memory.
"""

from __future__ import annotations

import datetime as _dt
import decimal
import json
import re
from typing import Any

from auto_analyst.data.description import EXAMPLES, TOP_VALUES, WIDE_TABLE_COLUMNS, ColumnInfo, TableDescription, clip
from auto_analyst.data.description import _jsonable
from auto_analyst.data.duck_sql import quote

__all__ = ["EXACT_DISTINCT_MAX", "SAMPLE_ROWS", "describe_database", "column_kind"]

SAMPLE_ROWS = 1000
"""First rows read into pandas for examples, previews and the memory's vocabulary of a DuckDB table."""

EXACT_DISTINCT_MAX = 1_000_000
"""Above this many (approximately) distinct values a column's distinct count stays approximate."""
APPROX_NOTE = "distinct count approximate (DuckDB approx_count_distinct)"
_NUMERIC = re.compile(r"^(TINYINT|SMALLINT|INTEGER|BIGINT|HUGEINT|UTINYINT|USMALLINT|UINTEGER|UBIGINT|UHUGEINT|FLOAT|"
                      r"DOUBLE|REAL|DECIMAL.*)$", re.I)
_FLOATING = re.compile(r"^(FLOAT|DOUBLE|REAL)$", re.I)
_TEMPORAL = re.compile(r"^(DATE|TIMESTAMP.*|TIME.*)$", re.I)


def column_kind(dtype: str, n: int, non_null: int, distinct: int, exact: bool, avg_len: float | None,
                spaced: float | None) -> str:
    """The description's kind of a DuckDB column, by the rules of ``description._kind``.

    Every value different (a key or free text: identifier, or text when long or mostly with spaces) needs
    more than 20 values and more than 95 % of the rows distinct; with an approximate count, 97 % of the
    non-missing values (HyperLogLog is within about 2 %).
    """
    t = dtype.upper()
    if t == "BOOLEAN":
        return "boolean"
    if _NUMERIC.match(t):
        return "numeric"
    if _TEMPORAL.match(t) and not t.startswith("TIME ") and t != "TIME":
        return "datetime"
    if t.endswith("[]") or t.startswith(("STRUCT", "MAP", "LIST", "UNION")):
        return "nested"
    all_distinct = (distinct == non_null) if exact else distinct >= 0.97 * non_null
    if non_null and all_distinct and non_null > 20 and distinct > 0.95 * n:
        return "text" if (avg_len or 0) > 40 or (spaced or 0) > 0.5 else "identifier"
    return "categorical"


def _plain(v: Any) -> Any:
    """A value as the pandas path writes it in a description (see ``description._jsonable``)."""
    import pandas as pd

    if isinstance(v, decimal.Decimal):
        v = float(v)
    if isinstance(v, (_dt.datetime, _dt.date)) and not isinstance(v, pd.Timestamp):
        v = pd.Timestamp(v)
    return _jsonable(v)


def _stats_sql(table: str, columns: list[tuple[str, str]]) -> str:
    parts = ["count(*)"]
    for name, dtype in columns:
        c = quote(name)
        parts += [f"count({c})", f"approx_count_distinct({c})"]
        if _NUMERIC.match(dtype):
            finite = f" FILTER (WHERE isfinite({c}))" if _FLOATING.match(dtype) else ""
            parts += [f"min({c})", f"max({c})", f"avg({c}){finite}"]
        elif _TEMPORAL.match(dtype):
            parts += [f"min({c})", f"max({c})", "NULL"]
        else:
            parts += ["NULL", "NULL", "NULL"]
        if dtype.upper() == "VARCHAR":
            parts += [f"avg(length({c}))", f"avg(CASE WHEN contains({c}, ' ') THEN 1.0 ELSE 0.0 END)"]
        else:
            parts += ["NULL", "NULL"]
    return f"SELECT {', '.join(parts)} FROM {quote(table)}"


def _as_json(v: Any) -> str:
    if hasattr(v, "tolist"):
        v = v.tolist()
    return json.dumps(v, ensure_ascii=False, sort_keys=True, default=str)


def _examples(sample: Any, name: str, kind: str) -> list[str]:
    values = sample[name].dropna()
    if kind == "nested":  # lists and structs by their JSON text, as the pandas path shows them
        return [clip(v) for v in values.map(_as_json).drop_duplicates().head(EXAMPLES)]
    return [clip(str(_plain(v))) for v in values.drop_duplicates().head(EXAMPLES)]


def describe_database(con: Any, table: str, name: str, load_notes: list[str] | None = None) -> TableDescription:
    """Describe ``table`` of an open DuckDB connection as the table ``name``.

    Args:
        con: a DuckDB connection (read-only is enough).
        table: the table (or view) in it.
        name: the name the description gives the table.
        load_notes: the description's ``load_notes``.

    Returns:
        The description; tables wider than ``WIDE_TABLE_COLUMNS`` are described by column patterns
        (:func:`auto_analyst.data.wide.wide_layout` on the first rows), the other columns counted.
    """
    columns = [(str(r[0]), str(r[1])) for r in con.execute(f"DESCRIBE {quote(table)}").fetchall()]
    sample = con.sql(f"SELECT * FROM {quote(table)} LIMIT {SAMPLE_ROWS}").df()
    desc = TableDescription(name=name, n_rows=0, n_columns=len(columns), load_notes=list(load_notes or []))
    chosen = columns
    if len(columns) > WIDE_TABLE_COLUMNS:
        from auto_analyst.data.wide import wide_layout

        layout = wide_layout(sample, None)
        desc.column_patterns, desc.reshape_hint = layout.patterns, layout.reshape_hint
        desc.matched_columns, desc.all_columns = layout.matched, layout.all_columns
        wanted = set(layout.columns)
        chosen = [c for c in columns if c[0] in wanted]
    row = con.execute(_stats_sql(table, chosen)).fetchall()[0]
    n = desc.n_rows = int(row[0])
    stats = [row[1 + 7 * i: 8 + 7 * i] for i in range(len(chosen))]
    exact_wanted = [c for (c, _), s in zip(chosen, stats) if int(s[1] or 0) <= EXACT_DISTINCT_MAX]
    exact: dict[str, int] = {}
    if exact_wanted:
        got = con.execute("SELECT " + ", ".join(f"count(DISTINCT {quote(c)})" for c in exact_wanted)
                          + f" FROM {quote(table)}").fetchall()[0]
        exact = dict(zip(exact_wanted, (int(v) for v in got)))
    for (cname, dtype), (non_null, approx, lo, hi, mean, avg_len, spaced) in zip(chosen, stats):
        non_null = int(non_null)
        distinct = exact.get(cname, int(approx or 0))
        kind = column_kind(dtype, n, non_null, distinct, cname in exact, avg_len, spaced)
        info = ColumnInfo(name=cname, dtype=dtype, kind=kind, missing=n - non_null, distinct=distinct,
                          note="" if cname in exact else APPROX_NOTE)
        if kind in ("numeric", "datetime") and non_null:
            info.min, info.max = _plain(lo), _plain(hi)
            info.mean = _plain(float(mean)) if kind == "numeric" and mean is not None else None
        if kind in ("categorical", "boolean") and non_null:
            top = con.execute(f"SELECT {quote(cname)}, count(*) AS n FROM {quote(table)} WHERE {quote(cname)} IS NOT NULL "
                              f"GROUP BY 1 ORDER BY n DESC, 1 LIMIT {TOP_VALUES}").fetchall()
            info.top_values = [(clip(v) if isinstance(v := _plain(k), str) else v, int(c)) for k, c in top]
        if kind == "nested":
            info.top_values = []
        info.examples = _examples(sample, cname, kind)
        desc.columns.append(info)
    return desc
