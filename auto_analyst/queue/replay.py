"""The replay log: every call that changed a session's sandbox state, so another worker can rebuild it.

Kept in the storage's database (table ``sandbox_ops``) by the caller after the call succeeded: a
``load`` (table name -> Parquet path, active table), an ``active`` (table name) or a ``run`` (a script
that ran without error: a failed run leaves the state untouched, so it is never replayed). Closing a
session's sandbox clears its log, as closing an embedded sandbox drops its variables.
"""

from __future__ import annotations

import json
from typing import Any

from sqlalchemy import text

from auto_analyst.storage import Migrations, autoid, engine_for, read, to_iso, transaction

__all__ = ["ReplayLog", "migrations"]

migrations = Migrations("replay")


@migrations
def m001_sandbox_ops(conn) -> None:
    conn.exec_driver_sql(f"""CREATE TABLE sandbox_ops ({autoid(conn)}, key TEXT NOT NULL, op TEXT NOT NULL,
        payload TEXT NOT NULL, at TEXT NOT NULL)""")
    conn.exec_driver_sql("CREATE INDEX sandbox_ops_key ON sandbox_ops (key, id)")


class ReplayLog:
    """The state-changing calls of each session's sandbox, by session key.

    Args:
        target: the database (URL, SQLite Path or Engine).
    """

    def __init__(self, target: Any):
        self.engine = engine_for(target)
        migrations.ensure(self.engine)

    def append(self, key: str, op: str, payload: dict[str, Any]) -> None:
        with transaction(self.engine) as conn:
            conn.execute(text("INSERT INTO sandbox_ops (key, op, payload, at) VALUES (:k, :op, :p, :at)"),
                         {"k": key, "op": op, "p": json.dumps(payload), "at": to_iso(None)})

    def ops(self, key: str) -> list[tuple[str, dict[str, Any]]]:
        """(op, payload) of the session, oldest first."""
        with read(self.engine) as conn:
            rows = conn.execute(text("SELECT op, payload FROM sandbox_ops WHERE key = :k ORDER BY id"), {"k": key})
            return [(r[0], json.loads(r[1])) for r in rows]

    def clear(self, key: str) -> None:
        with transaction(self.engine) as conn:
            conn.execute(text("DELETE FROM sandbox_ops WHERE key = :k"), {"k": key})
