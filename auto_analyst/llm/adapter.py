"""The DSPy adapter every pipeline call uses: DSPy's ChatAdapter, with what depends only on the Signature rendered once.

``ChatAdapter`` renders a Signature's system message (field descriptions, the field structure with a
JSON schema per typed field, the instructions) and its output reminder on every call: pydantic builds a
``TypeAdapter`` and a JSON schema for each field each time, about a third of the server's CPU per
offline question (measured in benchmarks/bench_web_throughput.py's profile, issue 12 item 6). Both
depend on the Signature alone, so :class:`CachedChatAdapter` keeps them per Signature class. Text
inputs, which ChatAdapter passes through pydantic's ``TypeAdapter(str)`` only to get the same text
back, are put in directly. The messages are byte for byte those of ``dspy.ChatAdapter``
(``tests/llm/test_adapter.py`` compares them for every registered Signature), so a model, the replay
engine and the offline model see the same prompt.
"""

from __future__ import annotations

import threading
import weakref
from typing import Any

import dspy
from dspy.adapters.utils import format_field_value

__all__ = ["CachedChatAdapter", "ADAPTER", "adapter_for"]


def _key(signature: Any) -> tuple:
    """What a cached rendering depends on besides the class: its instructions and its fields (name, info object)."""
    return (signature.instructions, tuple((n, id(f)) for n, f in signature.input_fields.items()),
            tuple((n, id(f)) for n, f in signature.output_fields.items()))


class CachedChatAdapter(dspy.ChatAdapter):
    """``dspy.ChatAdapter`` rendering each Signature's system message and output reminder once (thread-safe).

    The cache is keyed by the Signature class (weakly: a class that goes away takes its entry with it)
    and checked against its instructions and field objects, so a Signature rebuilt with other
    instructions or fields (``with_instructions``, an optimizer's candidate) is rendered anew.
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._system: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
        self._reminder: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
        self._lock = threading.Lock()

    def _cached(self, store: weakref.WeakKeyDictionary, signature: Any, render) -> str:
        key = _key(signature)
        with self._lock:
            hit = store.get(signature)
        if hit is not None and hit[0] == key:
            return hit[1]
        text = render(signature)
        try:
            with self._lock:
                store[signature] = (key, text)
        except TypeError:  # not weak-referenceable: render every time, as ChatAdapter does
            pass
        return text

    def format_system_message(self, signature: Any) -> str:
        return self._cached(self._system, signature, super().format_system_message)

    def user_message_output_requirements(self, signature: Any) -> str:
        return self._cached(self._reminder, signature, super().user_message_output_requirements)

    def format_user_message_content(self, signature: Any, inputs: dict[str, Any], prefix: str = "",
                                    suffix: str = "", main_request: bool = False) -> str:
        # ChatAdapter.format_user_message_content (dspy 3.4), with plain text put in as it is: for a str,
        # format_field_value returns the very same text after a round trip through pydantic.
        messages = [prefix]
        for k, v in signature.input_fields.items():
            if k in inputs:
                value = inputs.get(k)
                text = value if type(value) is str else format_field_value(field_info=v, value=value)
                messages.append(f"[[ ## {k} ## ]]\n{text}")
        if main_request:
            output_requirements = self.user_message_output_requirements(signature)
            if output_requirements is not None:
                messages.append(output_requirements)
        messages.append(suffix)
        return "\n\n".join(messages).strip()


ADAPTER = CachedChatAdapter()
"""The one adapter of this process (its cache is shared by every session and thread)."""


def adapter_for(lm: Any) -> dspy.Adapter:
    """The adapter for calls to ``lm``: the one it carries (``own_adapter``: the embedded offline model answers
    through its own, from the Signature and inputs as objects), else :data:`ADAPTER`."""
    own = getattr(lm, "own_adapter", None)
    return own if isinstance(own, dspy.Adapter) else ADAPTER
