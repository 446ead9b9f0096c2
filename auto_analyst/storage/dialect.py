"""The few places where SQLite and PostgreSQL SQL differ, as small helpers the stores' SQL uses.

Everything else the stores write is SQL both accept: ``INSERT ... ON CONFLICT ... DO UPDATE``,
``RETURNING``, ``CASE``, and the column name ``"user"`` always double-quoted (a reserved word in
PostgreSQL, where an unquoted ``user`` means the current role).
"""

from __future__ import annotations

from typing import Any

__all__ = ["is_postgres", "autoid", "real", "greatest"]


def is_postgres(conn_or_engine: Any) -> bool:
    """True when the Connection or Engine talks to PostgreSQL."""
    return conn_or_engine.dialect.name == "postgresql"


def autoid(conn: Any) -> str:
    """Column definition of an auto-incrementing integer primary key named ``id``."""
    return "id BIGSERIAL PRIMARY KEY" if is_postgres(conn) else "id INTEGER PRIMARY KEY AUTOINCREMENT"


def real(conn: Any) -> str:
    """An 8-byte float type (PostgreSQL's REAL is 4 bytes: POSIX seconds would lose minutes)."""
    return "DOUBLE PRECISION" if is_postgres(conn) else "REAL"


def greatest(a: str, b: str) -> str:
    """SQL for the larger of two non-NULL expressions (SQLite's two-argument MAX is not PostgreSQL's)."""
    return f"(CASE WHEN {a} >= {b} THEN {a} ELSE {b} END)"
