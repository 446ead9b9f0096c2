"""Is the account a write is made for still there? Checked inside the write's own transaction.

A team server's question runs for seconds to minutes; meanwhile ``auto-analyst users remove NAME`` (another
process) may delete the account and its data, and ``users add NAME`` may make a new account (another person)
under the same name. Stored data is kept under the name, so a turn written after the removal would land in the
new account's history. Every write made for an account therefore passes the account's id (``accounts.id``,
random, never reused) and is made only when the row ``(name, id)`` still exists, checked in the same
transaction: on SQLite the write transaction (``BEGIN IMMEDIATE``) excludes the removal's; on PostgreSQL
``FOR SHARE`` makes the removal's ``DELETE`` wait for the write to commit, so the removal's data sweep, which
runs after it, sees (and deletes) the write. Either way nothing written for a removed id survives under the name.
"""

from __future__ import annotations

from typing import Any

from auto_analyst.storage.dialect import is_postgres
from auto_analyst.storage.engine import cached_text as text

__all__ = ["owner_present"]


def owner_present(conn: Any, user: str, owner_id: str | None) -> bool:
    """True when ``owner_id`` is None (a write not made for an account: command line, a browser without
    accounts) or the account ``user`` exists with id ``owner_id``; one indexed lookup inside ``conn``'s transaction."""
    if owner_id is None:
        return True
    lock = " FOR SHARE" if is_postgres(conn) else ""
    row = conn.execute(text(f"SELECT 1 FROM accounts WHERE name = :u AND id = :i{lock}"),
                       {"u": user, "i": owner_id}).first()
    return row is not None
