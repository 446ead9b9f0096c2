"""What differs per database driver when a SQL source queries: DuckDB's own catalog, interrupting a running query,
the driver's error text, and numeric values that arrive as ``Decimal`` (PostgreSQL ``numeric``)."""

from __future__ import annotations

from typing import Any

import pandas as pd

__all__ = ["duckdb_catalog", "interrupt", "first_line", "numbers_typed", "sqlite_numbers_only", "NUMBER_CLASSES",
           "sqlite_numbers"]


def duckdb_catalog(conn: Any, name: str) -> tuple[list[dict[str, Any]], list[str], list[dict[str, Any]], str]:
    """(columns, primary key, foreign keys, table comment) of a DuckDB table or view from DuckDB's own catalog."""
    from sqlalchemy import text

    cols = [{"name": r[0], "type": r[1], "comment": r[2]} for r in conn.execute(text(
        "SELECT column_name, data_type, comment FROM duckdb_columns() WHERE table_name = :t ORDER BY column_index"),
        {"t": name}).fetchall()]
    pk: list[str] = []
    fks: list[dict[str, Any]] = []
    for kind, columns, ref_table, ref_columns in conn.execute(text(
            "SELECT constraint_type, constraint_column_names, referenced_table, referenced_column_names "
            "FROM duckdb_constraints() WHERE table_name = :t"), {"t": name}).fetchall():
        if kind == "PRIMARY KEY":
            pk = list(columns)
        elif kind == "FOREIGN KEY":
            fks.append({"constrained_columns": list(columns), "referred_table": ref_table,
                        "referred_columns": list(ref_columns or [])})
    row = conn.execute(text("SELECT comment FROM duckdb_tables() WHERE table_name = :t UNION ALL "
                            "SELECT comment FROM duckdb_views() WHERE view_name = :t"), {"t": name}).fetchone()
    return cols, pk, fks, (row[0] or "") if row else ""


def interrupt(raw: Any) -> None:
    """Stop the query running on a raw DB-API connection (DuckDB's ``interrupt``, psycopg's ``cancel``)."""
    for name in ("interrupt", "cancel"):
        fn = getattr(raw, name, None)
        if fn is not None:
            try:
                fn()
            except Exception:  # noqa: BLE001 - the query may have just finished
                pass
            return


def first_line(e: Exception) -> str:
    """The first line of a database error (the driver's own exception when SQLAlchemy wraps one), at most 300 characters."""
    orig = getattr(e, "orig", None) or e
    return str(orig).strip().splitlines()[0][:300] if str(orig).strip() else type(orig).__name__


def numbers_typed(frame: pd.DataFrame) -> pd.DataFrame:
    """Decimal columns (PostgreSQL numeric) as floats, so pandas and the description treat them as numbers."""
    import decimal

    for c in frame.columns:
        s = frame[c]
        if s.dtype == object and len(s.dropna()) and all(isinstance(v, decimal.Decimal) for v in s.dropna().head(50)):
            frame[c] = pd.to_numeric(s.map(lambda v: float(v) if v is not None else None), errors="coerce")
    return frame


NUMBER_CLASSES = "('integer', 'real')"
"""SQLite's storage classes of a number (``typeof()``)."""


def sqlite_numbers_only(declared: str) -> bool:
    """Whether a SQLite column declared ``declared`` is meant to hold only numbers: INTEGER or REAL affinity, or
    NUMERIC/DECIMAL (the rules of https://www.sqlite.org/datatype3.html section 3.1; DATE, DATETIME and BOOLEAN have
    NUMERIC affinity too but hold ISO text or flags, so they are left out).

    SQLite keeps a value of such a column that does not read as a number as it was given ('N/A' stays TEXT): every
    TEXT or BLOB value there is one ``pandas.to_numeric(errors="coerce")`` makes missing, as a file's reader does.
    """
    t = str(declared or "").upper()
    if "INT" in t:
        return True
    if not t or any(x in t for x in ("CHAR", "CLOB", "TEXT", "BLOB")):
        return False
    return any(x in t for x in ("REAL", "FLOA", "DOUB", "NUM", "DEC"))


def sqlite_numbers(frame: pd.DataFrame, declared: dict[str, str],
                   problems: dict[str, str] | None = None) -> tuple[pd.DataFrame, list[str]]:
    """``frame`` (rows of a SQLite table) with the values of its number columns that are not numbers made missing,
    as a file's reader makes them; and a note per column that had some (what a description says).

    Args:
        declared: column → its declared type (the catalog's).
        problems: column → why its text values are not what a file's reader makes missing
            (``sqlite_text.TextReading.problem``): the note says that instead.
    """
    problems = problems or {}
    notes = []
    for c in frame.columns:
        s = frame[c]
        if s.dtype != object or not sqlite_numbers_only(declared.get(c, "")):
            continue
        numbers = pd.to_numeric(s, errors="coerce")
        bad = s[s.notna() & numbers.isna()]
        frame[c] = numbers
        if len(bad):
            shown = ", ".join(repr(str(v)) for v in pd.unique(bad.astype(str))[:3])
            if c in problems:
                notes.append(f"{c}: {len(bad)} of these rows hold text ({shown}) in a {declared[c]} column, described "
                             f"as missing here; {problems[c]}")
                continue
            notes.append(f"{c}: {len(bad)} of these rows hold text that is not a number ({shown}) in a {declared[c]} "
                         f"column; read as missing, as a file's reader reads them (in SQL keep the numbers with "
                         f"typeof({c}) IN {NUMBER_CLASSES})")
    return frame, notes
