"""Tables past memory: a data file read by DuckDB (never into a pandas DataFrame), and its description.

A file of at least ``settings.duckdb_min_mb`` MiB is meant to stay on disk: DuckDB reads CSV and Parquet
by itself, streaming, and aggregates without materialising the table. This module gives the three
pieces the rest of the product needs:

* :func:`open_table` - a DuckDB connection with a view per table over the file (``read_csv_auto`` /
  ``read_parquet``), the relation generated code works on;
* :func:`describe_relation` - the same :class:`~auto_analyst.data.description.TableDescription` shape the
  pandas path builds, from DuckDB's ``SUMMARIZE`` plus a few sample rows (flagged ``engine="duckdb"`` in
  its load notes, so prompts and the offline model know to aggregate in SQL);
* :func:`grouped_aggregate_sql` - the SQL of a grouped aggregate (the offline model's commonest question
  kind), for code generators that target a DuckDB relation.

duckdb is imported only when a function runs (``pip install -e ".[scale]"``).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from auto_analyst.data.description import ColumnInfo, TableDescription
from auto_analyst.errors import DataLoadError

__all__ = ["DUCKDB_NOTE", "use_duckdb", "open_table", "describe_relation", "grouped_aggregate_sql", "quote"]

DUCKDB_NOTE = ("engine=duckdb: this table is a DuckDB relation, not a pandas DataFrame; aggregate in SQL "
               "(con.sql(...)) and bring back only the result (.df()).")
SAMPLE_ROWS = 3
_AGGREGATES = {"mean": "avg", "average": "avg", "avg": "avg", "sum": "sum", "total": "sum", "min": "min",
               "max": "max", "count": "count", "median": "median", "std": "stddev_samp"}
_NUMERIC = re.compile(r"^(TINYINT|SMALLINT|INTEGER|BIGINT|HUGEINT|UTINYINT|USMALLINT|UINTEGER|UBIGINT|FLOAT|"
                      r"DOUBLE|REAL|DECIMAL.*)$", re.I)


def use_duckdb(path: str | Path, settings: Any) -> bool:
    """True when ``path`` is at least ``settings.duckdb_min_mb`` MiB (0 turns DuckDB off) and a CSV/Parquet file."""
    limit = int(getattr(settings, "duckdb_min_mb", 0) or 0)
    p = Path(path)
    return limit > 0 and p.suffix.lower() in (".csv", ".tsv", ".parquet") and p.stat().st_size >= limit * 1024 * 1024


def quote(name: str) -> str:
    """A SQL identifier for ``name`` (double quotes, doubled inside)."""
    return '"' + str(name).replace('"', '""') + '"'


def open_table(path: str | Path, name: str, con: Any = None) -> Any:
    """A DuckDB connection (``con`` or a new in-memory one) with the view ``name`` over the file.

    Raises:
        DataLoadError: DuckDB cannot read the file (the message names it).
    """
    import duckdb

    p = Path(path)
    con = con or duckdb.connect()
    reader = "read_parquet" if p.suffix.lower() == ".parquet" else "read_csv_auto"
    try:
        literal = "'" + str(p.resolve()).replace("'", "''") + "'"  # a view's definition takes no parameters
        con.execute(f"CREATE OR REPLACE VIEW {quote(name)} AS SELECT * FROM {reader}({literal})")
        con.execute(f"SELECT * FROM {quote(name)} LIMIT 1").fetchall()
    except duckdb.Error as exc:
        raise DataLoadError(f"DuckDB cannot read {p.name} ({str(exc).splitlines()[0][:200]}); check the file, "
                            "or raise duckdb_min_mb to load it with pandas.") from None
    return con


def describe_relation(con: Any, name: str) -> TableDescription:
    """The description of the view/table ``name``: ``SUMMARIZE`` per column, plus sample rows as examples.

    ``SUMMARIZE`` gives min, max, approximate distinct count, mean (numbers) and null percentage; the
    counts it estimates (``approx_unique``) are marked approximate in each column's note.
    """
    n_rows = int(con.execute(f"SELECT count(*) FROM {quote(name)}").fetchone()[0])
    summary = con.execute(f"SUMMARIZE {quote(name)}").fetchall()
    cols = [d[0] for d in con.description]
    samples = con.execute(f"SELECT * FROM {quote(name)} USING SAMPLE {SAMPLE_ROWS} ROWS").fetchall()
    columns = []
    for i, row in enumerate(summary):
        r = dict(zip(cols, row))
        dtype = str(r["column_type"])
        numeric = bool(_NUMERIC.match(dtype))
        missing = round(float(r.get("null_percentage") or 0) / 100 * n_rows)
        kind = "numeric" if numeric else ("datetime" if "DATE" in dtype.upper() or "TIME" in dtype.upper()
                                          else "boolean" if dtype.upper() == "BOOLEAN" else "categorical")
        mean = float(r["avg"]) if numeric and r.get("avg") is not None else None
        columns.append(ColumnInfo(
            name=str(r["column_name"]), dtype=dtype, kind=kind, missing=int(missing),
            distinct=int(r.get("approx_unique") or 0), min=_plain(r.get("min")), max=_plain(r.get("max")),
            mean=mean, examples=[str(s[i]) for s in samples][:SAMPLE_ROWS],
            note="distinct count approximate (DuckDB SUMMARIZE)"))
    return TableDescription(name=name, n_rows=n_rows, n_columns=len(columns), columns=columns,
                            load_notes=[DUCKDB_NOTE])


def grouped_aggregate_sql(table: str, by: list[str] | str, value: str, func: str = "mean") -> str:
    """SQL for ``func(value)`` per group of ``by`` on ``table``, ordered by the groups.

    Raises:
        ValueError: an aggregate other than mean/average/sum/total/min/max/count/median/std.
    """
    agg = _AGGREGATES.get(func.lower())
    if agg is None:
        raise ValueError(f"Unknown aggregate {func!r}; use one of {', '.join(sorted(_AGGREGATES))}.")
    groups = [by] if isinstance(by, str) else list(by)
    g = ", ".join(quote(c) for c in groups)
    return (f"SELECT {g}, {agg}({quote(value)}) AS {quote(f'{func}_{value}')} FROM {quote(table)} "
            f"GROUP BY {g} ORDER BY {g}")


def _plain(v: Any) -> Any:
    if v is None:
        return None
    try:
        f = float(v)
        return int(f) if f.is_integer() and "." not in str(v) else f
    except (TypeError, ValueError):
        return str(v)
