"""What a failed model call means: DSPy's and LiteLLM's error classes mapped to our error kinds.

DSPy 3.4 projects provider failures onto ``dspy.utils.exceptions`` (``LMAuthError``,
``LMRateLimitError``, ``LMTimeoutError``, ...) and raises ``AdapterParseError`` (with the raw
reply in ``lm_response``) when a reply lacks the Signature's fields. LiteLLM's own classes may
still reach us from a provider wrapper, so they are mapped too. Each becomes a subclass of
:class:`~auto_analyst.errors.ModelError` whose kind the CLI and the web map to an exit code and a
status (``errors.ERROR_KINDS``).
"""

from __future__ import annotations

import sys

from auto_analyst.errors import (ModelConfigError, ModelError, ModelOutputError, ModelRateLimitError,
                                 ModelTimeoutError)

__all__ = ["model_error"]

_ADVICE = {
    ModelConfigError: "check the model string and its key (--model, the provider's key variable or AUTO_ANALYST_API_KEY)",
    ModelRateLimitError: "the provider limits calls or the quota is spent; wait and ask again, or use another model",
    ModelTimeoutError: "the model did not answer in time; ask again, or raise the lm_timeout setting",
    ModelOutputError: "the model's reply did not have the fields asked for (the raw reply is in the trace); "
                      "ask again, or use a stronger model",
    ModelError: "the model could not be reached or failed; check the network and the provider's status",
}


def _dspy_classes() -> list[tuple[type[BaseException], type[ModelError]]]:
    from dspy.utils import exceptions as e

    return [(e.AdapterParseError, ModelOutputError),
            (e.LMAuthError, ModelConfigError), (e.LMConfigurationError, ModelConfigError),
            (e.LMUnsupportedModelError, ModelConfigError),
            (e.LMRateLimitError, ModelRateLimitError), (e.LMBillingError, ModelRateLimitError),
            (e.LMTimeoutError, ModelTimeoutError)]


def _litellm_classes() -> list[tuple[type[BaseException], type[ModelError]]]:
    litellm = sys.modules.get("litellm")  # only if already loaded: mapping an error must not import a provider SDK
    if litellm is None:
        return []
    pairs = [("AuthenticationError", ModelConfigError), ("NotFoundError", ModelConfigError),
             ("RateLimitError", ModelRateLimitError), ("Timeout", ModelTimeoutError)]
    return [(getattr(litellm, name), ours) for name, ours in pairs if isinstance(getattr(litellm, name, None), type)]


def model_error(exc: BaseException) -> ModelError:
    """The :class:`~auto_analyst.errors.ModelError` (of the matching kind) for a failed model call.

    The message names the original class and its first line, and says what to do.
    """
    ours = next((o for cls, o in _dspy_classes() + _litellm_classes() if isinstance(exc, cls)), ModelError)
    first = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
    message = f"The model call failed ({type(exc).__name__}: {first[:300]}); {_ADVICE[ours]}."
    if ours is ModelOutputError:
        raw = getattr(exc, "lm_response", None)
        return ModelOutputError(message, raw=str(raw) if raw else "")
    if ours is ModelRateLimitError:
        return ModelRateLimitError(message, retry_after=getattr(exc, "retry_after", None))
    return ours(message)
