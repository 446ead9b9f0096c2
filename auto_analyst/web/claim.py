"""The first login from a browser takes over what that browser made before logins existed.

Before accounts, a browser's data (conversations, uploads' records, profile, remembered facts) was
stored under a random user id kept in its signed cookie. On the first login from that browser,
every row of that id, in every table with a ``"user"`` column, moves to the account. A row the
account already has an equivalent of (e.g. its own profile) is left where it was, so nothing is
overwritten. The error-fix memory's entries are scoped in its own index and are not moved.
"""

from __future__ import annotations

import logging
from typing import Any

from sqlalchemy import inspect, text

from auto_analyst.storage import transaction

__all__ = ["claim_user_rows"]

log = logging.getLogger(__name__)
_NOT_MOVED = {"accounts", "api_tokens", "usage_daily", "_migrations"}


def claim_user_rows(engine: Any, old: str, new: str) -> int:
    """Move every row of user ``old`` to user ``new``; returns the number of rows moved.

    Each table moves in its own savepoint: a table where the account already holds the same key
    (a unique constraint) keeps the old rows as they were instead of failing the login.
    """
    if not old or old == new:
        return 0
    tables = [t for t in inspect(engine).get_table_names()
              if t not in _NOT_MOVED and any(c["name"] == "user" for c in inspect(engine).get_columns(t))]
    moved = 0
    with transaction(engine) as conn:
        for table in tables:
            try:
                with conn.begin_nested():
                    moved += conn.execute(text(f'UPDATE "{table}" SET "user" = :new WHERE "user" = :old'),
                                          {"new": new, "old": old}).rowcount or 0
            except Exception as exc:  # noqa: BLE001 - an IntegrityError: the account has its own row there
                log.info("claim %s -> %s: rows of %s stay (%s)", old, new, table, type(exc).__name__)
    return moved
