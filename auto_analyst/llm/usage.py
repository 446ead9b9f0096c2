"""What one question spends on its model: calls, tokens and estimated cost, and the caps that stop it.

Tokens come from each call's own usage (DSPy's ``track_usage``, so parallel calls are counted
apart). Cost is estimated with LiteLLM's price list, read from the copy LiteLLM ships
(``LITELLM_LOCAL_MODEL_COST_MAP=True``; nothing is fetched): ``litellm.cost_per_token`` for
``settings.cost_model`` or else ``settings.model``. The embedded offline model and other ``local/``
engines cost 0; a model LiteLLM has no price for has cost None ("unknown"), and then
``max_cost_usd`` cannot stop it (the prompt-token cap still can).
"""

from __future__ import annotations

import os
import threading
from functools import lru_cache
from typing import Any

from auto_analyst.config import Settings, is_offline_model
from auto_analyst.errors import BudgetError, ModelError
from auto_analyst.results import Usage

__all__ = ["LMBudget", "price_per_token", "call_usage"]


@lru_cache(maxsize=64)
def price_per_token(model: str) -> tuple[float, float] | None:
    """(USD per prompt token, USD per completion token) of ``model`` in LiteLLM's price list; None if absent.

    ``local/...`` models (the offline model, test engines) and ``offline`` cost (0, 0).
    """
    if is_offline_model(model) or model.startswith("local/"):
        return (0.0, 0.0)
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    import litellm

    litellm.suppress_debug_info = True  # else an unmapped model prints litellm's provider list to stdout
    try:
        p, c = litellm.cost_per_token(model=model, prompt_tokens=1_000_000, completion_tokens=1_000_000)
    except Exception:  # noqa: BLE001 - litellm raises its own classes (or plain ones) for unmapped models
        return None
    return (p / 1_000_000, c / 1_000_000)


def call_usage(prediction: Any) -> tuple[int, int, int]:
    """(prompt tokens, completion tokens, cached prompt tokens) of one module call, from
    ``Prediction.get_lm_usage()`` ((0, 0, 0) if none). Cached tokens are the part of the prompt the provider
    served from its prompt cache, as it reported them (``prompt_tokens_details.cached_tokens``: OpenAI, and
    Anthropic's cache reads through DSPy); 0 when it reports none."""
    get = getattr(prediction, "get_lm_usage", None)
    usage = get() if callable(get) else None
    p = c = cached = 0
    for entry in (usage or {}).values():
        if isinstance(entry, dict):
            p += int(entry.get("prompt_tokens") or 0)
            c += int(entry.get("completion_tokens") or 0)
            details = entry.get("prompt_tokens_details")
            if isinstance(details, dict):
                cached += int(details.get("cached_tokens") or 0)
    return p, c, cached


class LMBudget:
    """Counts one question's LM calls, tokens and cost; refuses a call past a cap.

    Args:
        settings: ``max_lm_calls``, ``max_cost_usd``, ``max_prompt_tokens``, ``cost_model`` / ``model``.
        model: the model string the LM was built from (for its price; default ``settings.model``).
    """

    def __init__(self, settings: Settings, model: str | None = None):
        self.cap = settings.max_lm_calls
        self.max_cost = settings.max_cost_usd
        self.max_prompt_tokens = settings.max_prompt_tokens
        self.price = price_per_token(settings.cost_model or model or settings.model)
        self.calls = self.prompt_tokens = self.completion_tokens = self.cached_prompt_tokens = 0
        self._lock = threading.Lock()

    @property
    def cost_usd(self) -> float | None:
        if self.price is None:
            return None
        return round(self.prompt_tokens * self.price[0] + self.completion_tokens * self.price[1], 8)

    def reserve(self) -> None:
        """Count one more call, or raise when a cap is reached.

        Raises:
            ModelError: ``max_lm_calls`` reached.
            BudgetError: the question's cost or prompt tokens so far reached ``max_cost_usd`` / ``max_prompt_tokens``.
        """
        with self._lock:
            if self.calls >= self.cap:
                raise ModelError(f"This question reached the cap of {self.cap} LM calls (setting max_lm_calls).")
            cost = self.cost_usd
            if self.max_cost and cost is not None and cost >= self.max_cost:
                raise BudgetError(f"This question reached its cost cap: ${cost:.4f} of max_cost_usd=${self.max_cost:g}; "
                                  "what ran so far is kept. Raise max_cost_usd (0 = no cap) to go further.")
            if self.max_prompt_tokens and self.prompt_tokens >= self.max_prompt_tokens:
                raise BudgetError(f"This question reached its prompt-token cap: {self.prompt_tokens} of "
                                  f"max_prompt_tokens={self.max_prompt_tokens}; what ran so far is kept. Raise "
                                  "max_prompt_tokens (0 = no cap) to go further.")
            self.calls += 1

    def add(self, prompt_tokens: int, completion_tokens: int, cached_prompt_tokens: int = 0) -> None:
        with self._lock:
            self.prompt_tokens += prompt_tokens
            self.completion_tokens += completion_tokens
            self.cached_prompt_tokens += cached_prompt_tokens

    def usage(self) -> Usage:
        with self._lock:
            return Usage(lm_calls=self.calls, prompt_tokens=self.prompt_tokens, completion_tokens=self.completion_tokens,
                         cached_prompt_tokens=self.cached_prompt_tokens, cost_usd=self.cost_usd)
