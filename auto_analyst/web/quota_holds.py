"""Budget holds: a question reserves part of its user's daily cap before it runs, atomically.

Checking "spent < cap" and then running lets several questions asked at once (tabs, scripts) all pass
while the recorded cost is still low, so the day ends above the cap by their combined cost. A hold
closes that race: :meth:`BudgetHolds.reserve` takes the account row's lock (``SELECT ... FOR UPDATE`` on
PostgreSQL; SQLite's ``BEGIN IMMEDIATE`` already serialises writers), adds the day's recorded cost
and the amounts held by questions still running, and inserts a hold only when the question's upper
bound (:func:`~auto_analyst.llm.cost_bound.question_cost`: the model's price x its bounded calls and
tokens) still fits under the cap. Since each hold is an upper bound, questions running at once cannot
spend past the cap together. A question whose bound is unknown (a model without a price) holds the
rest of the day's cap: one such question at a time. :meth:`BudgetHolds.settle` records the question's
real usage and deletes its hold in one transaction when the answer (and its after-answer summaries)
ends or fails.

A hold a crashed server never settled stops counting after ``HOLD_SECONDS``, so a crash cannot lock a
user out for the rest of the day.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass
from datetime import timedelta
from typing import Any


from auto_analyst.storage import Migrations, is_postgres, read, real, to_iso, transaction, utc_now
from auto_analyst.storage import cached_text as text  # one clause per SQL text (see cached_text)
from auto_analyst.web.accounts import AccountStore, today
from auto_analyst.web.accounts import migrations as account_migrations

__all__ = ["BudgetHolds", "Hold", "Refusal", "HOLD_SECONDS"]

HOLD_SECONDS = 3600
"""After this a hold no longer counts: four times the web server's default job timeout (900 s)."""

migrations = Migrations("budget_holds")


@migrations
def m001_budget_holds(conn) -> None:
    conn.exec_driver_sql(f"""CREATE TABLE budget_holds (
        id TEXT PRIMARY KEY, "user" TEXT NOT NULL, day TEXT NOT NULL, amount_usd {real(conn)} NOT NULL,
        created_at TEXT NOT NULL, expires_at TEXT NOT NULL)""")
    conn.exec_driver_sql('CREATE INDEX budget_holds_user_day ON budget_holds ("user", day)')


@dataclass(frozen=True)
class Hold:
    """A question's reservation: ``amount_usd`` of ``user``'s cap on ``day`` (UTC), until settled."""

    id: str
    user: str
    day: str
    amount_usd: float


@dataclass(frozen=True)
class Refusal:
    """Why :meth:`BudgetHolds.reserve` refused: the cap, the recorded cost, what running questions hold and
    the question's bound (USD; None = unknown)."""

    cap_usd: float
    spent_usd: float
    held_usd: float
    bound_usd: float | None = None

    @property
    def fits_alone(self) -> bool:
        """True when the question would fit without the running questions' holds (it clears when they end)."""
        left = self.cap_usd - self.spent_usd
        return left > 0 and (self.bound_usd is None or self.bound_usd <= left)


class BudgetHolds:
    """The ``budget_holds`` table next to the accounts and usage tables of ``store``."""

    def __init__(self, store: AccountStore) -> None:
        self.store, self.engine = store, store.engine
        account_migrations.ensure(self.engine)
        migrations.ensure(self.engine)

    def reserve(self, user: str, bound_usd: float | None, now: Any = None) -> Hold | Refusal | None:
        """Hold ``bound_usd``, the most one question can cost, against ``user``'s daily cap.

        Args:
            bound_usd: the question's upper bound (``QuestionCost.usd``); None = unknown: the rest of the
                day's cap is held (nothing else runs meanwhile).

        Returns:
            a :class:`Hold` when the day's recorded cost plus the live holds plus ``bound_usd`` is within the
            cap (for an unknown bound: under it); a :class:`Refusal` when not; None when the user has no
            account or no cap (nothing to hold).
        """
        now = now or utc_now()
        day, stamp = now.date().isoformat(), to_iso(now)
        with transaction(self.engine) as conn:
            lock = " FOR UPDATE" if is_postgres(conn) else ""
            row = conn.execute(text(f"SELECT daily_cost_usd FROM accounts WHERE name = :u{lock}"), {"u": user}).first()
            if row is None or row[0] is None:
                return None
            cap = float(row[0])
            spent = float(conn.execute(text('SELECT COALESCE(SUM(cost_usd), 0) FROM usage_daily '
                                            'WHERE "user" = :u AND day = :d'), {"u": user, "d": day}).scalar() or 0)
            held = float(conn.execute(text('SELECT COALESCE(SUM(amount_usd), 0) FROM budget_holds '
                                           'WHERE "user" = :u AND day = :d AND expires_at > :t'),
                                      {"u": user, "d": day, "t": stamp}).scalar() or 0)
            left = cap - spent - held
            if left <= 0 or (bound_usd is not None and bound_usd > left + 1e-12):
                return Refusal(cap, spent, held, bound_usd)
            amount = left if bound_usd is None else float(bound_usd)
            hold = Hold(secrets.token_hex(8), user, day, amount)
            conn.execute(text('INSERT INTO budget_holds (id, "user", day, amount_usd, created_at, expires_at) '
                              "VALUES (:i, :u, :d, :a, :t, :x)"),
                         {"i": hold.id, "u": user, "d": day, "a": amount, "t": stamp,
                          "x": to_iso(now + timedelta(seconds=HOLD_SECONDS))})
        return hold

    def release(self, hold: Hold | None) -> None:
        """Drop ``hold`` without recording usage (the question never reached the model)."""
        if hold is not None:
            with transaction(self.engine) as conn:
                conn.execute(text("DELETE FROM budget_holds WHERE id = :i"), {"i": hold.id})

    def settle(self, user: str, usage: Any, hold: Hold | None, questions: int = 1, owner: str | None = None) -> None:
        """Record ``usage`` (see :meth:`AccountStore.record`; ``owner``: the asking account's id, so a question that
        ends after its account was removed is not charged to a new account of the name) on today's row and drop
        ``hold``, in one transaction."""
        with transaction(self.engine) as conn:
            self.store.record(user, usage, questions=questions, day=today(), conn=conn, owner=owner)
            if hold is not None:
                conn.execute(text("DELETE FROM budget_holds WHERE id = :i"), {"i": hold.id})

    def held(self, user: str) -> float:
        """USD held today by ``user``'s running questions."""
        now = utc_now()
        with read(self.engine) as conn:
            return float(conn.execute(text('SELECT COALESCE(SUM(amount_usd), 0) FROM budget_holds '
                                           'WHERE "user" = :u AND day = :d AND expires_at > :t'),
                                      {"u": user, "d": now.date().isoformat(), "t": to_iso(now)}).scalar() or 0)
