"""Per-user limits checked before a question reaches the model, and the usage recorded after it.

An account's daily cost cap (USD, UTC day) refuses a question with kind ``budget`` (HTTP 402) once the
day's recorded cost has reached it, before any model call; its questions-per-minute rate answers
429 with ``Retry-After``. Users without an account row (the loopback-token owner) have no limits.
"""

from __future__ import annotations

import math
from typing import Any

from auto_analyst.web.accounts import AccountStore
from auto_analyst.web.errors import ApiError

__all__ = ["check_question", "record_usage"]


def check_question(store: AccountStore, limiter: Any, user: str) -> None:
    """Refuse ``user``'s next question when over the daily cap or the rate.

    Args:
        store: the accounts and usage tables.
        limiter: an :class:`~auto_analyst.web.auth.AuthState` (its ``hit``).

    Raises:
        ApiError: 402 ``budget`` over the daily cost cap; 429 ``rate_limit`` (with ``Retry-After``) over the rate.
    """
    account = store.get(user)
    if account is None:
        return
    if account.daily_cost_usd is not None:
        spent = store.spent_today(user)
        if spent >= account.daily_cost_usd:
            raise ApiError(402, "budget", f"You have used ${spent:.4f} of your ${account.daily_cost_usd:.4f} daily "
                                          "budget; ask again tomorrow (UTC) or ask an admin to raise it.")
    if account.rate_per_minute is not None:
        wait = limiter.hit(f"{account.rate_per_minute}/minute", "questions", user)
        if wait:
            seconds = math.ceil(wait)
            raise ApiError(429, "rate_limit", f"You asked {account.rate_per_minute} question(s) in the last minute, "
                                              f"your limit; ask again in {seconds} s.",
                           headers={"Retry-After": str(seconds)})


def record_usage(store: AccountStore, user: str, usage: Any) -> None:
    """Add one answered question's usage (``Result.usage``) to ``user``'s row of today."""
    store.record(user, usage)
