"""Per-user limits checked before a question reaches the model, and the usage recorded after it.

An account's daily cost cap (USD, UTC day) refuses a question with kind ``budget`` (HTTP 402) before
any model call when the day's recorded cost plus what its running questions hold plus the question's
upper bound (:mod:`auto_analyst.llm.cost_bound`) passes it (:mod:`auto_analyst.web.quota_holds`: the
check and the reservation are one transaction, so questions asked at once cannot all pass). A question
the offline model answers costs nothing: it holds nothing and is never refused for cost. The
questions-per-minute rate answers 429 with ``Retry-After``. Users without an account row (the
loopback-token owner) have no limits.
"""

from __future__ import annotations

import logging
import math
import threading
import weakref
from typing import Any

from auto_analyst.api import QuestionCost
from auto_analyst.web.accounts import AccountStore
from auto_analyst.web.errors import ApiError
from auto_analyst.web.quota_holds import BudgetHolds, Hold, Refusal

__all__ = ["check_question", "cost_of", "holds_of", "UsageMeter"]

log = logging.getLogger(__name__)
_HOLDS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
_HOLDS_LOCK = threading.Lock()


def cost_of(session: Any) -> QuestionCost:
    """The bound of one question of ``session`` (``Session.question_cost``: the model's price x the question's
    bounded calls and tokens; free for the offline model).

    A model that cannot be built (e.g. no key) gives an unknown bound; the question then fails with that sentence.
    """
    try:
        return session.question_cost()
    except Exception:  # noqa: BLE001 - the question reports the model error itself; here it is only unpriced
        log.info("the model of a session could not be built to find its price", exc_info=True)
        return QuestionCost(None, model=session.settings.model, basis="the model could not be built")


def holds_of(store: AccountStore) -> BudgetHolds:
    """The budget holds next to ``store``'s tables (one per store)."""
    with _HOLDS_LOCK:
        holds = _HOLDS.get(store)
        if holds is None:
            holds = _HOLDS[store] = BudgetHolds(store)
        return holds


def check_question(store: AccountStore, limiter: Any, user: str, cost: QuestionCost, account: Any = None) -> Hold | None:
    """Reserve ``user``'s next question against the daily cap, then count it against the rate.

    Args:
        store: the accounts and usage tables.
        limiter: an :class:`~auto_analyst.web.auth.AuthState` (its ``hit``).
        cost: the question's bound (:func:`cost_of`; ``NO_MODEL_CALLS`` for an edited script). A free one
            holds nothing and is never refused for cost.
        account: ``user``'s account as this request's sign-in read it (read here when None or another's).

    Returns:
        the question's :class:`Hold` (None without a cap or when free): pass it to :meth:`UsageMeter.after`,
        or to ``holds_of(store).release`` when the question does not run.

    Raises:
        ApiError: 402 ``budget`` when the day's cost plus running questions' holds plus this question's bound
            passes the cap; 429 ``rate_limit`` (with ``Retry-After``) over the rate (the hold is released first).
    """
    if account is None or account.name != user:
        account = store.get(user)
    if account is None:
        return None
    hold = None
    if account.daily_cost_usd is not None and not cost.free:
        got = holds_of(store).reserve(user, cost.usd)
        if isinstance(got, Refusal):
            raise ApiError(402, "budget", _refusal_sentence(got, cost))
        hold = got
    if account.rate_per_minute is not None:
        wait = limiter.hit(f"{account.rate_per_minute}/minute", "questions", account.id or user)
        if wait:
            holds_of(store).release(hold)
            seconds = math.ceil(wait)
            raise ApiError(429, "rate_limit", f"You asked {account.rate_per_minute} question(s) in the last minute, "
                                              f"your limit; ask again in {seconds} s.",
                           headers={"Retry-After": str(seconds)})
    return hold


def _refusal_sentence(got: Refusal, cost: QuestionCost) -> str:
    used = f"You have used ${got.spent_usd:.4f} of your ${got.cap_usd:.4f} daily budget"
    if got.held_usd and got.fits_alone:
        # what blocks it is held by questions still running: it clears when they end, not tomorrow
        return (f"{used} and ${got.held_usd:.4f} is held by questions still running; ask again when they have "
                "answered, or ask an admin to raise it.")
    if got.spent_usd >= got.cap_usd:
        return f"{used}; ask again tomorrow (UTC) or ask an admin to raise it."
    left = got.cap_usd - got.spent_usd
    return (f"{used}; a question on {cost.model} may cost up to ${cost.usd:.4f} ({cost.basis}), more than the "
            f"${left:.4f} left. Ask an admin to raise your cap, or to set max_cost_usd (a question's own cost "
            "cap) so that a question's bound fits.")


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

    def after(self, user: str, session: Any, hold: Hold | None = None) -> threading.Thread:
        """:meth:`record` in a background thread (returns the thread)."""
        thread = threading.Thread(target=self.record, args=(user, session, hold), daemon=True, name="aa-usage")
        thread.start()
        return thread

    def record(self, user: str, session: Any, hold: Hold | None = None) -> None:
        """Record ``user``'s new usage once the session's after-answer work is done (waits for it), and drop the
        question's budget ``hold`` with it. Failures are logged, not raised (the hold is then released)."""
        holds = holds_of(self.store)
        try:
            session.settle()
            with self._lock:
                now = _counts(session.usage)
                before = self._seen.get(session, (0, 0, 0, 0.0))
                self._seen[session] = now
            delta = [a - b for a, b in zip(now, before)]
            holds.settle(user, _Delta(*delta), hold, owner=getattr(session, "owner", None))
        except Exception:  # noqa: BLE001 - the answer stands; the operator sees why usage was not recorded
            log.exception("usage of %s could not be recorded", user)
            try:
                holds.release(hold)  # else the hold blocks the user until it expires
            except Exception:  # noqa: BLE001
                log.exception("the budget hold of %s could not be released", user)


class _Delta:
    def __init__(self, lm_calls, prompt_tokens, completion_tokens, cost_usd):
        self.lm_calls, self.prompt_tokens = lm_calls, prompt_tokens
        self.completion_tokens, self.cost_usd = completion_tokens, cost_usd


def _counts(usage: Any) -> tuple[int, int, int, float]:
    return (int(usage.lm_calls or 0), int(usage.prompt_tokens or 0), int(usage.completion_tokens or 0),
            float(usage.cost_usd or 0.0))
