"""Accounts, API tokens and per-user usage of the team server, on the storage engine (SQLite or PostgreSQL).

Four tables, created by the named migrations of namespace ``accounts``:

* ``accounts``: name, argon2id password hash (argon2-cffi's defaults, RFC 9106's second recommended
  parameter set), role (``admin`` or ``member``), daily cost cap (USD, NULL = none), questions per
  minute (NULL = no limit), ``epoch`` (raised by a password change), and ``id``: a random id made when
  the account is created. The server's memory (open conversations, a chosen model and its key) is keyed
  by it, so an account removed and added again under the same name (another person) finds nothing of
  the old one's.
* ``api_tokens`` (methods in ``token_rows.py``): a token is ``aa_<id>_<secret>``; only its SHA-256 is stored (the
  secret is 32 random bytes, so a fast hash is enough: a slow hash protects guessable passwords).
* ``usage_daily``: LM calls, tokens and estimated cost per user and UTC day. Removing an account moves its
  rows (and its running questions' budget holds) to the label ``NAME~ID`` (:func:`removed_label`; ``~`` is
  not allowed in names), so the usage report keeps what the removed account spent, and an account added
  again as NAME starts its day at zero instead of inheriting that spend against its own cap.
* ``web_sessions``: one row per browser login (the SHA-256 of the random id its signed cookie carries,
  user, expiry). Logout deletes the row, so a copy of the cookie stops working; a password change and
  removing the account delete all the account's rows (and its API tokens), so a cookie or token from
  before never works again, even for a new account of the same name.

Example:
    >>> store = AccountStore("sqlite://")                     # doctest: +SKIP
    >>> store.add("alice", "correct horse", role="admin")     # doctest: +SKIP
    >>> store.verify("alice", "correct horse").role           # doctest: +SKIP
    'admin'
"""

from __future__ import annotations

import re
import secrets
from dataclasses import dataclass
from datetime import date
from typing import Any


from auto_analyst.errors import BadInputError, NotFoundError
from auto_analyst.storage import (Migrations, owner_present, read, real, store_engine, to_iso, transaction,
                                  utc_now)
from auto_analyst.storage import cached_text as text  # one clause per SQL text (see cached_text)
from auto_analyst.web.login_rows import LoginRows, sign_out_everywhere
from auto_analyst.web.token_rows import ApiToken, TokenRows

__all__ = ["ROLES", "Account", "AccountStore", "ApiToken", "DayUsage", "removed_label", "valid_name"]

ROLES = ("admin", "member")
MIN_PASSWORD_CHARS = 8
"""Shortest password ``users add`` accepts (NIST SP 800-63B §5.1.1.2: at least 8 characters)."""
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._@+-]{0,63}$")

migrations = Migrations("accounts")


@migrations
def m001_accounts(conn) -> None:
    conn.exec_driver_sql(f"""CREATE TABLE accounts (
        name TEXT PRIMARY KEY, password_hash TEXT, role TEXT NOT NULL, daily_cost_usd {real(conn)},
        rate_per_minute INTEGER, epoch INTEGER NOT NULL DEFAULT 0, created_at TEXT NOT NULL)""")
    conn.exec_driver_sql("""CREATE TABLE api_tokens (
        id TEXT PRIMARY KEY, "user" TEXT NOT NULL, token_hash TEXT NOT NULL, label TEXT NOT NULL,
        created_at TEXT NOT NULL, last_used_at TEXT)""")
    conn.exec_driver_sql('CREATE INDEX api_tokens_user ON api_tokens ("user")')
    conn.exec_driver_sql(f"""CREATE TABLE usage_daily (
        "user" TEXT NOT NULL, day TEXT NOT NULL, questions INTEGER NOT NULL DEFAULT 0,
        lm_calls INTEGER NOT NULL DEFAULT 0, prompt_tokens INTEGER NOT NULL DEFAULT 0,
        completion_tokens INTEGER NOT NULL DEFAULT 0, cost_usd {real(conn)} NOT NULL DEFAULT 0,
        PRIMARY KEY ("user", day))""")


@migrations
def m002_web_sessions(conn) -> None:
    conn.exec_driver_sql("""CREATE TABLE web_sessions (
        id TEXT PRIMARY KEY, "user" TEXT NOT NULL, created_at TEXT NOT NULL, expires_at TEXT NOT NULL)""")
    conn.exec_driver_sql('CREATE INDEX web_sessions_user ON web_sessions ("user")')


@migrations
def m003_account_ids(conn) -> None:
    conn.exec_driver_sql("ALTER TABLE accounts ADD COLUMN id TEXT")
    for (name,) in conn.exec_driver_sql("SELECT name FROM accounts").all():
        conn.execute(text("UPDATE accounts SET id = :i WHERE name = :n"), {"i": _new_id(), "n": name})
    conn.exec_driver_sql("CREATE UNIQUE INDEX accounts_id ON accounts (id)")


def _new_id() -> str:
    return secrets.token_hex(8)


_COLUMNS = "name, role, daily_cost_usd, rate_per_minute, epoch, created_at, id"


@dataclass(frozen=True)
class Account:
    """One account. ``daily_cost_usd`` None = no cap; ``rate_per_minute`` None = no limit."""

    name: str
    role: str = "member"
    daily_cost_usd: float | None = None
    rate_per_minute: int | None = None
    epoch: int = 0
    created_at: str = ""
    id: str = ""
    """Random, made at creation, never reused: what the server's memory of the account is keyed by."""

    @property
    def is_admin(self) -> bool:
        return self.role == "admin"


@dataclass(frozen=True)
class DayUsage:
    """One user's usage on one UTC day (``day`` is ``YYYY-MM-DD``; cost in USD, estimated)."""

    user: str
    day: str
    questions: int = 0
    lm_calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost_usd: float = 0.0


def removed_label(name: str, account_id: str) -> str:
    """What the usage and budget holds of the removed account ``name`` (id ``account_id``) are kept under:
    never an account's name (``~`` is not allowed in one), so nobody's cap counts them, and the admin's usage
    report still shows them, told apart from a later account of the same name."""
    return f"{name}~{account_id or 'removed'}"


def _relabel_usage(conn: Any, name: str, label: str) -> None:
    """Move ``name``'s usage rows and budget holds to ``label`` (inside the caller's transaction)."""
    from sqlalchemy import inspect

    conn.execute(text('UPDATE usage_daily SET "user" = :l WHERE "user" = :n'), {"l": label, "n": name})
    if inspect(conn).has_table("budget_holds"):
        conn.execute(text('UPDATE budget_holds SET "user" = :l WHERE "user" = :n'), {"l": label, "n": name})


def valid_name(name: str) -> str:
    """``name`` stripped, when it is a usable account name.

    Raises:
        BadInputError: empty, over 64 characters, or characters other than letters, digits and ``. _ @ + -``.
    """
    name = (name or "").strip()
    if not _NAME.match(name):
        raise BadInputError(f"{name!r} is not a usable account name: use 1-64 letters, digits or . _ @ + - "
                            "(starting with a letter or digit).")
    return name


def _hasher():
    from argon2 import PasswordHasher

    return PasswordHasher()


def today() -> str:
    """The current UTC day as ``YYYY-MM-DD`` (the day budgets and usage are counted by)."""
    return utc_now().date().isoformat()


class AccountStore(LoginRows, TokenRows):
    """The accounts, tokens and usage tables of one database.

    Args:
        target: an Engine or database URL; None = the database of ``settings`` (``store_engine``).
        settings: used when ``target`` is None.
    """

    _account_columns, _account = _COLUMNS, Account  # what LoginRows reads an account row with, in its login check

    def __init__(self, target: Any = None, settings: Any = None) -> None:
        self.engine = store_engine(settings, url=target) if target is not None else store_engine(settings)
        migrations.ensure(self.engine)
        # A wrong name is checked against this hash, so it takes as long as a wrong password (no user probing).
        self._dummy = _hasher().hash(secrets.token_hex(8))

    # ----------------------------------------------------------------- accounts
    def resolve(self, name: str) -> str:
        """The stored spelling of the account ``name`` (names are matched without regard to case: ``Bob`` is
        ``bob``; new names are stored casefolded), or ``name`` itself when no account matches."""
        name = (name or "").strip()
        with read(self.engine) as conn:
            if conn.execute(text("SELECT 1 FROM accounts WHERE name = :n"), {"n": name}).first():
                return name
            # names are ASCII (valid_name), so SQL lower() is casefold on both SQLite and PostgreSQL
            rows = conn.execute(text("SELECT name FROM accounts WHERE lower(name) = :l"), {"l": name.casefold()}).all()
        return rows[0][0] if len(rows) == 1 else name

    def add(self, name: str, password: str, role: str = "member") -> Account:
        """Create an account (its name stored casefolded).

        Raises:
            BadInputError: bad name, unknown role, a password under 8 characters, or the name is taken (in any case).
        """
        name = valid_name(name).casefold()
        if role not in ROLES:
            raise BadInputError(f"Unknown role {role!r}; use one of {', '.join(ROLES)}.")
        _check_password(password)
        with transaction(self.engine) as conn:
            taken = conn.execute(text("SELECT name FROM accounts WHERE lower(name) = :n"), {"n": name}).first()
            if taken:
                raise BadInputError(f"The account {taken[0]!r} exists (names differing only by case are the same "
                                    f"account); use `users passwd {taken[0]}` to change its password.")
            conn.execute(text("INSERT INTO accounts (name, password_hash, role, created_at, id) "
                              "VALUES (:n, :h, :r, :t, :i)"),
                         {"n": name, "h": _hasher().hash(password), "r": role, "t": to_iso(None), "i": _new_id()})
            _relabel_usage(conn, name, removed_label(name, ""))  # left by an account removed before labels existed
        return self.get(name)

    def ensure(self, name: str, role: str = "member") -> Account:
        """The account ``name``, created without a password (it cannot log in by password) if missing.

        Used for users a trusted proxy vouches for, so roles, caps and usage apply to them too. ``ZED`` is the
        account ``zed`` (or an older ``Zed``): names are matched without regard to case, new ones stored casefolded.
        """
        existing = self.get(valid_name(name))
        if existing is not None:
            return existing
        name = valid_name(name).casefold()
        with transaction(self.engine) as conn:
            made = conn.execute(text("INSERT INTO accounts (name, password_hash, role, created_at, id) "
                                     "VALUES (:n, NULL, :r, :t, :i) ON CONFLICT (name) DO NOTHING"),
                                {"n": name, "r": role, "t": to_iso(None), "i": _new_id()}).rowcount
            if made:
                _relabel_usage(conn, name, removed_label(name, ""))
        return self.get(name)

    def get(self, name: str) -> Account | None:
        """The account ``name`` (matched without regard to case), or None."""
        name = self.resolve(name)
        with read(self.engine) as conn:
            row = conn.execute(text(f"SELECT {_COLUMNS} FROM accounts WHERE name = :n"), {"n": name}).first()
        return Account(*row) if row else None

    def list(self) -> list[Account]:
        with read(self.engine) as conn:
            rows = conn.execute(text(f"SELECT {_COLUMNS} FROM accounts ORDER BY name")).all()
        return [Account(*r) for r in rows]

    def ids(self) -> set[str]:
        """The ids of every account (one query; the web server compares its memory against it)."""
        with read(self.engine) as conn:
            return {r[0] for r in conn.execute(text("SELECT id FROM accounts")).all()}

    def count(self, with_password: bool = True) -> int:
        """Accounts (by default only those that can log in with a password)."""
        where = " WHERE password_hash IS NOT NULL" if with_password else ""
        with read(self.engine) as conn:
            return int(conn.execute(text(f"SELECT COUNT(*) FROM accounts{where}")).scalar() or 0)

    def remove(self, name: str) -> None:
        """Delete the account, its API tokens and its browser logins (its conversations and facts stay in the
        database under the name: an account added again with that name sees them); its usage and budget holds
        move to :func:`removed_label`.

        Raises:
            NotFoundError: no such account.
        """
        name = self.resolve(name)
        with transaction(self.engine) as conn:
            row = conn.execute(text("DELETE FROM accounts WHERE name = :n RETURNING id"), {"n": name}).first()
            if row is None:
                raise NotFoundError(f"No account {name!r}; `auto-analyst users list` shows the accounts.")
            sign_out_everywhere(conn, name)
            _relabel_usage(conn, name, removed_label(name, row[0]))

    def set_password(self, name: str, password: str) -> None:
        """Change the password; browser logins from before end and the account's API tokens are revoked
        (whoever had the old password may have made one).

        Raises:
            NotFoundError: no such account. BadInputError: password under 8 characters.
        """
        _check_password(password)
        name = self.resolve(name)
        with transaction(self.engine) as conn:
            n = conn.execute(text("UPDATE accounts SET password_hash = :h, epoch = epoch + 1 WHERE name = :n"),
                             {"h": _hasher().hash(password), "n": name}).rowcount
            if n:
                sign_out_everywhere(conn, name)
        if not n:
            raise NotFoundError(f"No account {name!r}; `auto-analyst users list` shows the accounts.")

    def update(self, name: str, **changes: Any) -> Account:
        """Set ``role``, ``daily_cost_usd`` (None = no cap) and/or ``rate_per_minute`` (None = no limit).

        Raises:
            NotFoundError: no such account. BadInputError: unknown role, a negative cap or rate.
        """
        allowed = {"role", "daily_cost_usd", "rate_per_minute"}
        unknown = set(changes) - allowed
        if unknown:
            raise BadInputError(f"Unknown account field(s) {', '.join(sorted(unknown))}; use {', '.join(sorted(allowed))}.")
        if "role" in changes and changes["role"] not in ROLES:
            raise BadInputError(f"Unknown role {changes['role']!r}; use one of {', '.join(ROLES)}.")
        for key in ("daily_cost_usd", "rate_per_minute"):
            if changes.get(key) is not None and float(changes[key]) < 0:
                raise BadInputError(f"{key} cannot be negative; leave it empty for no limit.")
        if not changes:
            return self._existing(name)
        sets, name = ", ".join(f"{k} = :{k}" for k in changes), self.resolve(name)
        with transaction(self.engine) as conn:
            n = conn.execute(text(f"UPDATE accounts SET {sets} WHERE name = :name"), {**changes, "name": name}).rowcount
        if not n:
            raise NotFoundError(f"No account {name!r}; `auto-analyst users list` shows the accounts.")
        return self._existing(name)

    def verify(self, name: str, password: str) -> Account | None:
        """The account when ``password`` is right, else None (same cost for an unknown name)."""
        from argon2.exceptions import InvalidHashError, VerificationError

        name = self.resolve(name)
        with read(self.engine) as conn:
            row = conn.execute(text("SELECT password_hash FROM accounts WHERE name = :n"), {"n": name}).first()
        stored = row[0] if row and row[0] else None
        hasher = _hasher()
        try:
            hasher.verify(stored or self._dummy, password or "")
        except (VerificationError, InvalidHashError):
            return None
        if stored is None:
            return None
        if hasher.check_needs_rehash(stored):
            with transaction(self.engine) as conn:
                conn.execute(text("UPDATE accounts SET password_hash = :h WHERE name = :n"),
                             {"h": hasher.hash(password), "n": name})
        return self.get(name)

    def _existing(self, name: str) -> Account:
        account = self.get(name)
        if account is None:
            raise NotFoundError(f"No account {name!r}; `auto-analyst users list` shows the accounts.")
        return account

    # -------------------------------------------------------------------- usage
    def record(self, user: str, usage: Any, questions: int = 1, day: str | None = None, conn: Any = None,
               owner: str | None = None) -> None:
        """Add one question's usage (an object with ``lm_calls``, ``prompt_tokens``, ``completion_tokens``,
        ``cost_usd``; a None cost counts as 0) to ``user``'s row of ``day`` (default today, UTC), inside
        ``conn``'s transaction when given. With ``owner`` (the account id the question was asked by) and the
        account ``user`` gone or another one meanwhile, the usage goes to :func:`removed_label` instead."""
        if conn is None:
            with transaction(self.engine) as conn:
                return self.record(user, usage, questions, day, conn, owner)
        if not owner_present(conn, user, owner):
            user = removed_label(user, owner or "")
        values = {"u": user, "d": day or today(), "q": questions, "c": int(getattr(usage, "lm_calls", 0) or 0),
                  "p": int(getattr(usage, "prompt_tokens", 0) or 0),
                  "o": int(getattr(usage, "completion_tokens", 0) or 0),
                  "x": float(getattr(usage, "cost_usd", 0) or 0.0)}
        conn.execute(text(
            'INSERT INTO usage_daily ("user", day, questions, lm_calls, prompt_tokens, completion_tokens, cost_usd) '
            "VALUES (:u, :d, :q, :c, :p, :o, :x) ON CONFLICT (\"user\", day) DO UPDATE SET "
            "questions = usage_daily.questions + :q, lm_calls = usage_daily.lm_calls + :c, "
            "prompt_tokens = usage_daily.prompt_tokens + :p, "
            "completion_tokens = usage_daily.completion_tokens + :o, cost_usd = usage_daily.cost_usd + :x"),
            values)

    def usage(self, user: str | None = None, since: str | None = None) -> list[DayUsage]:
        """Usage rows, newest day first (``user`` None = everyone, ``BOB`` = bob's; ``since`` a day YYYY-MM-DD)."""
        where, params = [], {}
        if user:
            where.append('"user" = :u')
            params["u"] = self.resolve(user)
        if since:
            where.append("day >= :s")
            params["s"] = since
        sql = ('SELECT "user", day, questions, lm_calls, prompt_tokens, completion_tokens, cost_usd FROM usage_daily'
               + (" WHERE " + " AND ".join(where) if where else "") + ' ORDER BY day DESC, "user"')
        with read(self.engine) as conn:
            return [DayUsage(*r) for r in conn.execute(text(sql), params).all()]

    def spent_today(self, user: str) -> float:
        """USD ``user`` has spent today (UTC)."""
        rows = self.usage(user, since=today())
        return sum(r.cost_usd for r in rows if r.day == today())


def _check_password(password: str) -> None:
    if len(password or "") < MIN_PASSWORD_CHARS:
        raise BadInputError(f"The password is too short; use at least {MIN_PASSWORD_CHARS} characters.")


def parse_day(value: str) -> str:
    """``value`` as a ``YYYY-MM-DD`` day. Raises BadInputError otherwise."""
    try:
        return date.fromisoformat(value).isoformat()
    except ValueError:
        raise BadInputError(f"{value!r} is not a day; write it as YYYY-MM-DD.") from None
