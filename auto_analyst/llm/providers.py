"""Building the language model from settings: one model string, any provider LiteLLM knows, or offline."""

from __future__ import annotations

import os

from auto_analyst.config import Settings
from auto_analyst.errors import ModelConfigError

__all__ = ["build_lm", "check_model"]


def check_model(settings: Settings) -> None:
    """Fail early, in one sentence, when a hosted model has no key in the provider's usual variable.

    Raises:
        ModelConfigError: the provider needs a key that is neither in settings nor in its environment variable.
    """
    if settings.is_offline:
        return
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    import litellm

    litellm.suppress_debug_info = True  # its "Provider List: ..." banner on stdout is not for our users
    try:
        # validate_environment accepts any prefix; the provider lookup is what a call would fail on
        litellm.get_llm_provider(settings.model, api_base=settings.api_base or None)
    except Exception as exc:  # noqa: BLE001 - litellm raises BadRequestError for an unknown provider
        first = str(exc).strip().splitlines()[0][:200] if str(exc).strip() else type(exc).__name__
        raise ModelConfigError(f"Unknown model provider in {settings.model!r} ({first}). Use a LiteLLM model string "
                               "such as openai/gpt-4o-mini, anthropic/claude-3-5-haiku-latest or ollama/llama3.") from None
    if settings.api_key:
        return
    try:
        env = litellm.validate_environment(model=settings.model)
    except Exception as exc:  # noqa: BLE001 - litellm raises plain exceptions for unknown providers
        raise ModelConfigError(f"Unknown model {settings.model!r} ({exc}). Use a LiteLLM model string such as "
                         "openai/gpt-4o-mini, anthropic/claude-3-5-haiku-latest or ollama/llama3.") from None
    missing = env.get("missing_keys") or []
    if missing:
        raise ModelConfigError(f"Model {settings.model!r} needs {', '.join(missing)} in the environment "
                         f"(or AUTO_ANALYST_API_KEY); set it, or drop --model to use the embedded offline model.")


def build_lm(settings: Settings, api_key: str | None = None, registry=None):
    """A ``dspy.LM`` for ``settings.model``; the offline model when none is configured.

    Args:
        settings: model string, api_base, lm_timeout.
        api_key: a key for this session only (never stored); overrides settings.api_key.
        registry: the Signatures the offline model answers (``agents.registry.Registry``; default the built-in ones).
    """
    if settings.is_offline:
        from auto_analyst.offline.engine import offline_lm

        return offline_lm(registry)  # it says what it can do itself (its ``capabilities``)
    import dspy

    kwargs = {"timeout": settings.lm_timeout, "num_retries": 1, "cache": False}
    key = api_key or settings.api_key
    if key:
        kwargs["api_key"] = key
    if settings.api_base:
        kwargs["api_base"] = settings.api_base
    return dspy.LM(settings.model, **kwargs)
