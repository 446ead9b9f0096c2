"""The embedded model as a DSPy adapter: DSPy hands it the Signature class and the inputs, it returns the outputs.

A chat model needs an adapter to render a prompt and parse the reply; the embedded model needs neither.
:class:`OfflineAdapter` takes the place of that round trip: which Signature is asked is told by the
registry from the class (its output fields and instructions, ``Registry.identify``), the handler gets
the input values as given (:class:`~auto_analyst.offline.request.Request`), and its values are
converted to the output fields' types the way DSPy's own adapters do (``dspy.adapters.utils.parse_value``).
No rendered text is produced or read back.

The pipeline uses the adapter an LM carries (``own_adapter``, see ``llm.adapter.adapter_for``); ``engine.offline_lm``
builds such an LM.
"""

from __future__ import annotations

import enum
from functools import lru_cache
from typing import Any, Literal, get_origin

import dspy
from dspy.adapters.utils import parse_value
from pydantic import TypeAdapter

from auto_analyst.offline.request import Request

__all__ = ["OfflineAdapter"]


@lru_cache(maxsize=256)
def _adapter(annotation: Any) -> TypeAdapter:
    return TypeAdapter(annotation)


def _typed(value: Any, annotation: Any) -> Any:
    """``value`` as ``annotation`` (str, list[str], Literal, pydantic models); an empty value stays empty."""
    if annotation is str:
        return value if isinstance(value, str) else ("" if value is None else str(value))
    if value in ("", None):
        for empty in ([], {}, ""):
            try:
                return parse_value(empty, annotation)
            except Exception:  # noqa: BLE001 - try the next empty shape (a list type refuses {}, a Literal refuses all)
                continue
        return None
    if not isinstance(value, str) and not isinstance(annotation, enum.EnumMeta) and get_origin(annotation) is not Literal:
        # what parse_value does with a value that is not text, with the field type's adapter built once, not per call
        try:
            return _adapter(annotation).validate_python(value)
        except TypeError:  # an annotation that cannot be a cache key
            pass
    return parse_value(value, annotation)


def _tokens(*texts: Any) -> int:
    # ≈4 characters a token (OpenAI's rule of thumb); the budget counts calls, these only feed its usage line
    return max(1, sum(len(t if isinstance(t, str) else str(t)) for t in texts) // 4)


class OfflineAdapter(dspy.Adapter):
    """Answers each call of a registered Signature through the offline engine (``handlers.respond``), typed outputs.

    Args:
        engine: the :class:`~auto_analyst.offline.engine.OfflineEngine` that answers each typed request.

    A Signature of no registered entry gets empty outputs (DSPy then sees an empty answer, as with a model
    that has nothing to say); any other failure is a bug and propagates.
    """

    def __init__(self, engine: Any):
        super().__init__()
        self.engine = engine

    def __call__(self, lm: Any, lm_kwargs: dict[str, Any], signature: type[dspy.Signature], demos: list[dict[str, Any]],
                 inputs: dict[str, Any]) -> list[dict[str, Any]]:
        fields, given = signature.output_fields, signature.input_fields  # each access rebuilds the dict: read once
        request = Request(outputs=list(fields), instructions=signature.instructions,
                          inputs={k: v for k, v in inputs.items() if k in given})
        values = self.engine.complete(request)
        out = {name: _typed(values.get(name, ""), f.annotation) for name, f in fields.items()}
        tracker = dspy.settings.usage_tracker
        if tracker is not None:
            tracker.add_usage(getattr(lm, "model", "local/offline"), {
                "prompt_tokens": _tokens(signature.instructions, *request.inputs.values()),
                "completion_tokens": _tokens(*values.values())})
        return [out]

    async def acall(self, lm: Any, lm_kwargs: dict[str, Any], signature: type[dspy.Signature],
                    demos: list[dict[str, Any]], inputs: dict[str, Any]) -> list[dict[str, Any]]:
        return self(lm, lm_kwargs, signature, demos, inputs)

