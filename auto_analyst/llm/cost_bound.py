"""The most one question can spend on its model, known before it runs (the team server's budget holds).

A question's LM calls are bounded (``max_lm_calls``; the after-answer summaries count against the same
budget, ``settle.py``), and so is each call: its prompt by the model's context window and its reply by the
LM's ``max_tokens`` or else the model's output limit, both from LiteLLM's model table (``litellm.get_model_info``,
read from the copy LiteLLM ships, as :func:`~auto_analyst.llm.usage.price_per_token` does). So::

    bound = prompt tokens x input price + calls x reply tokens x output price
    prompt tokens = calls x context window, or at most max_prompt_tokens + one context window when that cap is set
    (LMBudget lets a call start while the question's prompt tokens are under the cap)
    and when max_cost_usd is set: bound <= max_cost_usd + one call's bound (LMBudget stops a question there)

A model whose :class:`~auto_analyst.llm.capabilities.Capabilities` say ``offline`` (the embedded model) is
free: nothing is held and a cost cap never refuses it. A model LiteLLM has no price or token limits for has
an unknown bound (``usd`` None): the team server then holds the rest of the user's daily cap (docs/team.md).
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from auto_analyst.config import Settings
from auto_analyst.llm.capabilities import capabilities_of
from auto_analyst.llm.usage import price_per_token

__all__ = ["QuestionCost", "question_cost", "FREE", "NO_MODEL_CALLS"]


@dataclass(frozen=True)
class QuestionCost:
    """The upper bound of one question's model cost.

    Attributes:
        usd: the bound in USD; 0.0 when free; None when unknown (no price or no token limits in LiteLLM's table).
        free: it costs nothing (an offline model, or no model call at all): nothing to hold, never refused for cost.
        model: the model whose price was used ('' when free).
        basis: how the bound was found, one phrase for messages (e.g. ``24 LM calls x (128000 prompt + 16384
            reply tokens) at openai/gpt-4o-mini's LiteLLM price``).
    """

    usd: float | None
    free: bool = False
    model: str = ""
    basis: str = ""


FREE = QuestionCost(0.0, free=True, basis="the offline model, which costs nothing")
NO_MODEL_CALLS = QuestionCost(0.0, free=True, basis="no model call")


@lru_cache(maxsize=64)
def _token_limits(model: str) -> tuple[int, int] | None:
    """(context window, reply limit) in tokens of ``model`` in LiteLLM's model table; None if absent."""
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    import litellm

    try:
        info = litellm.get_model_info(model)
    except Exception:  # noqa: BLE001 - litellm raises its own classes for unmapped models
        return None
    context = info.get("max_input_tokens") or info.get("max_tokens")
    reply = info.get("max_output_tokens") or info.get("max_tokens")
    return (int(context), int(reply)) if context and reply else None


def question_cost(settings: Settings, lm: Any) -> QuestionCost:
    """The bound of one question asked with ``lm`` under ``settings`` (formula: module docstring).

    Args:
        settings: ``max_lm_calls``, ``max_prompt_tokens``, ``max_cost_usd``, ``cost_model`` / ``model``.
        lm: the session's LM (its capabilities and its ``max_tokens``, if set, are read; it is not called).
    """
    if capabilities_of(lm).offline:
        return FREE
    model = settings.cost_model or settings.model
    price, limits = price_per_token(model), _token_limits(model)
    if price is None or limits is None:
        return QuestionCost(None, model=model, basis=f"{model} has no price or token limits in LiteLLM's table")
    if price == (0.0, 0.0):
        return QuestionCost(0.0, free=True, model=model, basis=f"{model} is free in LiteLLM's table")
    context, reply = limits
    own = (getattr(lm, "kwargs", None) or {}).get("max_tokens")
    if own:
        reply = min(reply, int(own))
    calls = max(int(settings.max_lm_calls), 0)
    prompt = calls * context
    if settings.max_prompt_tokens:
        prompt = min(prompt, int(settings.max_prompt_tokens) + context)
    usd = prompt * price[0] + calls * reply * price[1]
    one_call = context * price[0] + reply * price[1]
    basis = f"{calls} LM calls x ({context} prompt + {reply} reply tokens) at {model}'s LiteLLM price"
    if settings.max_cost_usd and settings.max_cost_usd + one_call < usd:
        usd = settings.max_cost_usd + one_call
        basis = f"max_cost_usd ${settings.max_cost_usd:g} + one call of {model} ({context} prompt + {reply} reply tokens)"
    return QuestionCost(math.ceil(usd * 1e6) / 1e6, model=model, basis=basis)  # rounded up: still a bound
