"""Per-user limits checked before a question reaches the model, and the usage recorded after it.

An account's daily cost cap (USD, UTC day) refuses a question with kind ``budget`` (HTTP 402) once the
day's recorded cost has reached it, before any model call; its questions-per-minute rate answers
429 with ``Retry-After``. Users without an account row (the loopback-token owner) have no limits.
"""

from __future__ import annotations

import logging
import math
import threading
import weakref
from typing import Any

from auto_analyst.web.accounts import AccountStore
from auto_analyst.web.errors import ApiError

__all__ = ["check_question", "UsageMeter"]

log = logging.getLogger(__name__)


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


class UsageMeter:
    """Records each session's usage once, whole: the answer's LM calls and the summaries written after it.

    ``Session.usage`` grows when a question's after-answer work (summaries, error-fix memory) ends, after
    the answer is shown; so the meter waits for that in a background thread (``Session.settle``) and
    records what the session used since the last recording.
    """

    def __init__(self, store: AccountStore) -> None:
        self.store = store
        self._seen: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
        self._lock = threading.Lock()

    def before(self, session: Any) -> None:
        """Note the session's usage before its first question here (a reopened session's old usage is not new)."""
        with self._lock:
            self._seen.setdefault(session, _counts(session.usage))

    def after(self, user: str, session: Any) -> threading.Thread:
        """Record ``user``'s new usage once the session's after-answer work is done (returns the thread)."""
        thread = threading.Thread(target=self._record, args=(user, session), daemon=True, name="aa-usage")
        thread.start()
        return thread

    def _record(self, user: str, session: Any) -> None:
        try:
            session.settle()
            with self._lock:
                now = _counts(session.usage)
                before = self._seen.get(session, (0, 0, 0, 0.0))
                self._seen[session] = now
            delta = [a - b for a, b in zip(now, before)]
            self.store.record(user, _Delta(*delta))
        except Exception:  # noqa: BLE001 - the answer stands; the operator sees why usage was not recorded
            log.exception("usage of %s could not be recorded", user)


class _Delta:
    def __init__(self, lm_calls, prompt_tokens, completion_tokens, cost_usd):
        self.lm_calls, self.prompt_tokens = lm_calls, prompt_tokens
        self.completion_tokens, self.cost_usd = completion_tokens, cost_usd


def _counts(usage: Any) -> tuple[int, int, int, float]:
    return (int(usage.lm_calls or 0), int(usage.prompt_tokens or 0), int(usage.completion_tokens or 0),
            float(usage.cost_usd or 0.0))
