"""Reading DSPy's rendered prompt and writing a completion, as a chat model sees them: the text path.

DSPy's ChatAdapter sends input fields as ``[[ ## name ## ]]`` sections and asks for the output
fields in the same form; its JSONAdapter asks for one JSON object. The recorder and replay engine
(``llm/replay.py``) and the scripted test engines work on this text, as a hosted model would. The
embedded offline model does not: it is a DSPy adapter that gets the Signature and the inputs as
Python objects (``auto_analyst/offline/adapter.py``).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

__all__ = ["Prompt", "read_prompt", "write_completion"]

FIELD = re.compile(r"\[\[ ## (\w+) ## \]\]\n?")
OUTPUT_LIST = re.compile(r"Your output fields are:\n(.*?)(?:\n(?:All interactions|In adhering)|\Z)", re.S)
OUTPUT_NAME = re.compile(r"^\d+\. `(\w+)`", re.M)
OBJECTIVE = re.compile(r"your objective is:\s*(.*)\Z", re.S)
TRAILER = re.compile(r"\n\nRespond with .*\Z", re.S)


@dataclass
class Prompt:
    """One request: the output fields asked for, the task instruction, and the input values (as text)."""

    outputs: list[str]
    objective: str
    inputs: dict[str, str]
    json_mode: bool

    def json_input(self, name: str, default: Any = None) -> Any:
        """An input field parsed as JSON (DSPy serialises lists and models as JSON)."""
        raw = self.inputs.get(name, "")
        try:
            return json.loads(raw) if raw.strip() else default
        except ValueError:
            return default


def read_prompt(system: str, user_text: str) -> Prompt:
    """Split DSPy's system and last user message into fields."""
    m = OUTPUT_LIST.search(system or "")
    outputs = OUTPUT_NAME.findall(m.group(1)) if m else []
    objective = (OBJECTIVE.search(system or "") or [None, ""])[1].strip()
    inputs: dict[str, str] = {}
    pieces = FIELD.split(user_text or "")
    for name, value in zip(pieces[1::2], pieces[2::2]):
        inputs[name] = TRAILER.sub("", value).strip()
    json_mode = "[[ ## completed ## ]]" not in (system or "")
    return Prompt(outputs=outputs, objective=objective, inputs=inputs, json_mode=json_mode)


def write_completion(prompt: Prompt, values: dict[str, Any]) -> str:
    """Format output field values the way the adapter that sent ``prompt`` parses them."""
    def text(v: Any) -> str:
        if isinstance(v, str):
            return v
        return json.dumps(v, ensure_ascii=False, default=str)

    if prompt.json_mode:
        return json.dumps({k: values.get(k, "") for k in prompt.outputs}, ensure_ascii=False, default=str)
    parts = [f"[[ ## {k} ## ]]\n{text(values.get(k, ''))}" for k in prompt.outputs]
    return "\n\n".join(parts + ["[[ ## completed ## ]]"])
