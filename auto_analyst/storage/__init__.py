"""The database under every store: one SQLAlchemy Engine per process and URL, and named migrations.

Two backends, the same schema and the same migrations: SQLite (the default, a WAL file under
``AUTO_ANALYST_HOME``) and PostgreSQL (setting ``database_url``). See docs/scale.md.

Example:
    >>> from auto_analyst.storage import Migrations, engine_for, transaction
    >>> m = Migrations("demo")
    >>> @m
    ... def m001_items(conn): conn.exec_driver_sql("CREATE TABLE items (x INTEGER)")
    >>> engine = engine_for("sqlite://")          # doctest: +SKIP
    >>> m.apply(engine)                            # doctest: +SKIP
    ['demo:m001_items']
"""

from __future__ import annotations

from auto_analyst.storage.dialect import autoid, greatest, is_postgres, real
from auto_analyst.storage.engine import (BUSY_TIMEOUT_MS, DEFAULT_FILE, cached_text, database_url, dispose_all,
                                         engine_for, read, sqlite_file, store_engine, transaction)
from auto_analyst.storage.locks import named_lock
from auto_analyst.storage.migrations import Migrations
from auto_analyst.storage.owners import owner_present
from auto_analyst.storage.times import to_iso, utc_now

__all__ = [
    "BUSY_TIMEOUT_MS", "DEFAULT_FILE", "Migrations", "autoid", "cached_text", "database_url", "dispose_all",
    "engine_for",
    "greatest", "is_postgres", "named_lock", "owner_present", "read", "real", "sqlite_file", "store_engine", "to_iso", "transaction", "utc_now",
]
