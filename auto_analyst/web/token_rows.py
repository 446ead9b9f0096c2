"""API tokens of the team server's accounts: the ``api_tokens`` rows (docs/team.md).

A token is ``aa_<id>_<secret>``; only the SHA-256 of the whole token is stored (the secret is 32 random
bytes, so a fast hash is enough: a slow hash protects guessable passwords). Moved out of
``accounts.py`` unchanged (one job per module).
"""

from __future__ import annotations

import hashlib
import hmac
import re
import secrets
from dataclasses import dataclass
from typing import Any

from sqlalchemy import text

from auto_analyst.errors import NotFoundError
from auto_analyst.storage import read, to_iso, transaction

__all__ = ["ApiToken", "TOKEN_PREFIX", "TokenRows"]

TOKEN_PREFIX = "aa_"


def _token_hash(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


@dataclass(frozen=True)
class ApiToken:
    """A token's public part (the secret is shown once, at creation)."""

    id: str
    user: str
    label: str
    created_at: str
    last_used_at: str | None


class TokenRows:
    """The API-token part of :class:`~auto_analyst.web.accounts.AccountStore` (needs ``self.engine``,
    ``self._existing``, ``self.get`` and ``self.resolve``, the one reading of an account name a user typed)."""

    def create_token(self, user: str, label: str = "") -> tuple[ApiToken, str]:
        """A new API token for ``user``: (its public record, the token itself, shown only now).

        Raises:
            NotFoundError: no such account.
        """
        user = self._existing(user).name
        tid = secrets.token_hex(6)
        token = f"{TOKEN_PREFIX}{tid}_{secrets.token_urlsafe(32)}"
        now = to_iso(None)
        label = (label or "").strip()[:80] or "token"
        with transaction(self.engine) as conn:
            conn.execute(text('INSERT INTO api_tokens (id, "user", token_hash, label, created_at) '
                              "VALUES (:i, :u, :h, :l, :t)"),
                         {"i": tid, "u": user, "h": _token_hash(token), "l": label, "t": now})
        return ApiToken(tid, user, label, now, None), token

    def tokens(self, user: str | None = None) -> list[ApiToken]:
        """The tokens of ``user`` (every user's when None; ``BOB`` is the account ``bob``), oldest first."""
        sql = 'SELECT id, "user", label, created_at, last_used_at FROM api_tokens'
        user = self.resolve(user) if user else user
        with read(self.engine) as conn:
            rows = conn.execute(text(sql + (' WHERE "user" = :u' if user else "") + " ORDER BY created_at"),
                                {"u": user}).all()
        return [ApiToken(*r) for r in rows]

    def revoke_token(self, token_id: str, user: str | None = None) -> None:
        """Delete the token ``token_id`` (only if it is ``user``'s, when given).

        Raises:
            NotFoundError: no such token (of that user).
        """
        sql = "DELETE FROM api_tokens WHERE id = :i" + (' AND "user" = :u' if user else "")
        with transaction(self.engine) as conn:
            if not conn.execute(text(sql), {"i": token_id, "u": user}).rowcount:
                raise NotFoundError(f"No token {token_id!r}; `auto-analyst tokens list` shows the tokens.")

    def check_token(self, token: str) -> Any:
        """The :class:`~auto_analyst.web.accounts.Account` a presented token belongs to, or None (unknown, revoked, or malformed)."""
        m = re.match(rf"^{TOKEN_PREFIX}([0-9a-f]{{12}})_[A-Za-z0-9_-]{{20,}}$", token or "")
        if not m:
            return None
        with read(self.engine) as conn:
            row = conn.execute(text('SELECT "user", token_hash, last_used_at FROM api_tokens WHERE id = :i'),
                               {"i": m.group(1)}).first()
        if not row or not hmac.compare_digest(row[1], _token_hash(token)):
            return None
        now = to_iso(None)
        if not row[2] or row[2][:16] != now[:16]:  # at most one write a minute per token
            with transaction(self.engine) as conn:
                conn.execute(text("UPDATE api_tokens SET last_used_at = :t WHERE id = :i"), {"t": now, "i": m.group(1)})
        return self.get(row[0])
