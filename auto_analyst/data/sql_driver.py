"""What differs per database driver when a SQL source queries: DuckDB's own catalog, interrupting a running query,
the driver's error text, and numeric values that arrive as ``Decimal`` (PostgreSQL ``numeric``)."""

from __future__ import annotations

from typing import Any

import pandas as pd

__all__ = ["duckdb_catalog", "interrupt", "first_line", "numbers_typed"]


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
