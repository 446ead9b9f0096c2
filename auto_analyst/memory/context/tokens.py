"""Token counting for prompt budgets.

Counts are ``litellm.token_counter``'s. For the default tokenizer model the same count is taken
straight from tiktoken with the encoding files LiteLLM ships (its ``litellm_core_utils/tokenizers``
folder, so nothing is downloaded): importing LiteLLM costs 6-8 s here, which every first question
would pay. ``tests/memory/test_tokens.py`` checks both give the same numbers. Other models go
through ``litellm.token_counter`` itself. Every budget in the memory layer is
measured with :func:`count_tokens`, so sizes reported in a trace and the budgets that were enforced
are the same numbers.
"""

from __future__ import annotations

import os
from functools import lru_cache

__all__ = ["DEFAULT_TOKEN_MODEL", "count_tokens", "truncate_to_tokens", "ELLIPSIS"]

DEFAULT_TOKEN_MODEL = "gpt-4o-mini"
"""Tokenizer used when no model is given (and for model names LiteLLM does not know)."""

ELLIPSIS = " …"
"""Marker appended to text that :func:`truncate_to_tokens` cut."""

_CACHE_MAX_CHARS = 4000
"""Texts up to this many characters are cached (memoised); longer ones are counted every time."""


def count_tokens(text: str, model: str | None = None) -> int:
    """Number of tokens ``text`` takes for ``model``.

    Args:
        text: the text to count.
        model: a LiteLLM model string; ``None`` means :data:`DEFAULT_TOKEN_MODEL`.

    Returns:
        The token count (0 for empty text). If LiteLLM fails for any reason, a conservative
        estimate of one token per 3 characters is returned instead (English text averages
        about 4 characters per token for OpenAI tokenizers, so this overestimates).
    """
    if not text:
        return 0
    name = model or DEFAULT_TOKEN_MODEL
    if len(text) <= _CACHE_MAX_CHARS:
        return _count_cached(text, name)
    return _count(text, name)


@lru_cache(maxsize=8192)
def _count_cached(text: str, model: str) -> int:
    return _count(text, model)


def _count(text: str, model: str) -> int:
    try:
        if model == DEFAULT_TOKEN_MODEL and _bundled_encoding() is not None:
            return len(_bundled_encoding().encode(text, disallowed_special=()))
        return int(_litellm().token_counter(model=model, text=text))
    except Exception:  # noqa: BLE001 - any tokenizer failure falls back to an estimate
        return -(-len(text) // 3)


DEFAULT_ENCODING = "o200k_base"
"""The encoding litellm.token_counter uses for gpt-4o-mini (litellm_core_utils/token_counter.py)."""


@lru_cache(maxsize=1)
def _bundled_encoding():
    """tiktoken's o200k_base read from LiteLLM's bundled files, without importing LiteLLM; None if absent."""
    import importlib.util

    spec = importlib.util.find_spec("litellm")
    if spec is None or not spec.submodule_search_locations:
        return None
    folder = os.path.join(list(spec.submodule_search_locations)[0], "litellm_core_utils", "tokenizers")
    if not os.path.isdir(folder):
        return None
    os.environ.setdefault("TIKTOKEN_CACHE_DIR", folder)
    if os.environ["TIKTOKEN_CACHE_DIR"] != folder:
        return None  # the user points tiktoken elsewhere: let LiteLLM decide
    try:
        import tiktoken

        return tiktoken.get_encoding(DEFAULT_ENCODING)
    except Exception:  # noqa: BLE001 - missing file or no tiktoken: LiteLLM's own path
        return None


@lru_cache(maxsize=1)
def _litellm():
    """Import LiteLLM lazily (it is slow to import), using its bundled model cost map (no network)."""
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    import litellm

    return litellm


def truncate_to_tokens(text: str, max_tokens: int, model: str | None = None, marker: str = ELLIPSIS) -> str:
    """The longest prefix of ``text`` (plus ``marker``) that fits in ``max_tokens`` tokens.

    Cuts at a whitespace boundary when one is near (within the last 20% of the kept prefix), so
    words are not split. Deterministic: a binary search over the character length.

    Args:
        text: the text to shorten.
        max_tokens: the budget, in tokens; 0 or less gives ``""``.
        model: tokenizer model, as in :func:`count_tokens`.
        marker: appended when text was cut (counted within the budget).

    Returns:
        ``text`` unchanged if it fits, else a shortened text ending with ``marker``, or ``""``
        when not even the marker fits.
    """
    if max_tokens <= 0 or not text:
        return ""
    if count_tokens(text, model) <= max_tokens:
        return text
    if count_tokens(marker.strip(), model) > max_tokens:
        return ""
    lo, hi = 0, len(text)  # invariant: text[:lo] + marker fits; text[:hi] + marker may not
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if count_tokens(text[:mid].rstrip() + marker, model) <= max_tokens:
            lo = mid
        else:
            hi = mid - 1
    prefix = text[:lo].rstrip()
    cut = max(prefix.rfind(" "), prefix.rfind("\n"), prefix.rfind("\t"))
    if cut >= int(len(prefix) * 0.8) and count_tokens(prefix[:cut].rstrip() + marker, model) <= max_tokens:
        prefix = prefix[:cut].rstrip()
    return (prefix + marker) if prefix else marker.strip()
