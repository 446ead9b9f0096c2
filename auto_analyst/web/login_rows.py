"""Browser logins of the team server on the server side: the ``web_sessions`` rows (docs/team.md).

A login's signed cookie carries a random id; only its SHA-256 is stored, with the user and the expiry.
Logout deletes the row, a password change and removing the account delete all of the account's rows
(and its API tokens), so a copy of an old cookie never works again.
"""

from __future__ import annotations

import hashlib
import secrets
from datetime import timedelta
from functools import lru_cache

from sqlalchemy import text

from auto_analyst.storage import read, to_iso, transaction, utc_now

__all__ = ["LoginRows", "sign_out_everywhere"]


def _token_hash(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


@lru_cache(maxsize=4)
def _login_and_account(account_columns: str):
    """The statement of :meth:`LoginRows.session_account`, built once (SQLAlchemy then finds its compiled form)."""
    columns = ", ".join(f"a.{c.strip()}" for c in account_columns.split(","))
    return text(f'SELECT w."user", w.expires_at, {columns} FROM web_sessions w '
                'LEFT JOIN accounts a ON a.name = w."user" WHERE w.id = :i')


class LoginRows:
    """The browser-login part of :class:`~auto_analyst.web.accounts.AccountStore` (needs ``self.engine``,
    ``self._existing``, ``self.get``, and ``self._account_columns`` / ``self._account`` to read an account row)."""

    def open_session(self, name: str, lifetime_s: float) -> str:
        """A new browser login of ``name`` lasting ``lifetime_s`` seconds: the random id for its cookie
        (only its SHA-256 is stored). Expired rows are deleted on the way.

        Raises:
            NotFoundError: no such account.
        """
        self._existing(name)
        sid = secrets.token_urlsafe(24)
        now = utc_now()
        with transaction(self.engine) as conn:
            conn.execute(text("DELETE FROM web_sessions WHERE expires_at < :t"), {"t": to_iso(now)})
            conn.execute(text('INSERT INTO web_sessions (id, "user", created_at, expires_at) VALUES (:i, :u, :c, :e)'),
                         {"i": _token_hash(sid), "u": name, "c": to_iso(now),
                          "e": to_iso(now + timedelta(seconds=lifetime_s))})
        return sid

    def session_account(self, name: str, sid: str) -> Account | None:
        """The account of the browser login ``sid`` when it is ``name``'s, open and not expired; else None.

        Read on every request of a browser: the login row and the account it names come in one statement."""
        if not sid:
            return None
        with read(self.engine) as conn:
            row = conn.execute(_login_and_account(self._account_columns), {"i": _token_hash(sid)}).first()
        if not row or row[0] != name or row[1] < to_iso(None):
            return None
        if row[2] is not None:
            return self._account(*row[2:])
        return self.get(name)  # no account of exactly that spelling: matched without regard to case, as get() does

    def close_session(self, sid: str) -> None:
        """End the browser login ``sid`` (nothing happens when it is unknown)."""
        with transaction(self.engine) as conn:
            conn.execute(text("DELETE FROM web_sessions WHERE id = :i"), {"i": _token_hash(sid or "")})

    def sessions(self, name: str) -> int:
        """How many browser logins of ``name`` are open."""
        with read(self.engine) as conn:
            return int(conn.execute(text('SELECT COUNT(*) FROM web_sessions WHERE "user" = :u AND expires_at >= :t'),
                                    {"u": name, "t": to_iso(None)}).scalar() or 0)


def sign_out_everywhere(conn, name: str) -> None:
    """Delete every browser login and API token of ``name`` (inside the caller's transaction)."""
    conn.execute(text('DELETE FROM api_tokens WHERE "user" = :n'), {"n": name})
    conn.execute(text('DELETE FROM web_sessions WHERE "user" = :n'), {"n": name})
