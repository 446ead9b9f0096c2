"""One request to the embedded model: the Signature's output fields and instructions, and its inputs as Python objects.

The offline adapter (``adapter.py``) builds it from what DSPy hands an adapter (the Signature class and the
input values), so nothing rendered is read back. Inputs the Signatures declare as JSON text (``str``
fields holding the pipeline's JSON) are decoded by :meth:`Request.json_input`; an input already given as a
list, dict or pydantic model is taken as it is.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

__all__ = ["Request"]


def _plain(value: Any) -> Any:
    """Pydantic models (and lists/dicts of them) as plain dicts and lists, the shape JSON inputs decode to."""
    if hasattr(value, "model_dump"):
        return value.model_dump(mode="json")
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return value


@dataclass
class Request:
    """What one call asks for.

    Attributes:
        outputs: the Signature's output field names, in order.
        instructions: the Signature's instructions (its docstring).
        inputs: input field name -> value as the caller gave it (``str`` for every built-in Signature).
    """

    outputs: list[str] = field(default_factory=list)
    instructions: str = ""
    inputs: dict[str, Any] = field(default_factory=dict)

    def text(self, name: str) -> str:
        """An input as text ('' when absent)."""
        value = self.inputs.get(name, "")
        return value if isinstance(value, str) else json.dumps(_plain(value), ensure_ascii=False, default=str)

    def json_input(self, name: str, default: Any = None) -> Any:
        """An input holding JSON, decoded (a value given as objects is returned as plain dicts and lists)."""
        raw = self.inputs.get(name, "")
        if not isinstance(raw, str):
            return _plain(raw) if raw is not None else default
        try:
            return json.loads(raw) if raw.strip() else default
        except ValueError:
            return default
