"""A scripted LM engine for tests: answers each of our Signatures with a function of its prompt.

It plugs into ``dspy.LM`` exactly like the offline engine, and finds which Signature a prompt belongs
to the same way (``Registry.identify``), so tests can make the model's answer depend on what the
prompt contains (e.g. "fix it right only if the remembered fix is in the prompt"). Handlers are keyed
by a registry entry's name (``"statistics"``, a custom agent's name) or its kind (``ANALYST`` answers
every analyst without a handler of its own).
"""

from __future__ import annotations

from typing import Any, Callable

import dspy

from auto_analyst.agents.registry import Registry, default_registry
from auto_analyst.errors import UnknownSignature
from auto_analyst.llm.prompt_text import Prompt, read_prompt, write_completion

Handler = Callable[[Prompt], dict[str, Any]]

# registry kinds (see auto_analyst.agents.registry.Entry.kind)
PLANNER = "planner"
ANALYST = "analyst"
FIXER = "fixer"
ANSWER = "answer"
SUMMARY = "summary"
ERROR_SUMMARY = "error_summary"


class ScriptedEngine:
    def __init__(self, handlers: dict[str, Handler], registry: Registry | None = None):
        self.handlers = handlers
        self.registry = registry or default_registry()
        self.prompts: list[tuple[str, str, Prompt]] = []  # (entry name, kind, prompt)

    def complete(self, request):
        from dspy import lm15

        user = next((m.text for m in reversed(request.messages) if m.role == "user"), "")
        prompt = read_prompt(request.system if isinstance(request.system, str) else "", user)
        entry = self.registry.identify(prompt.outputs, prompt.objective)
        self.prompts.append((entry.name, entry.kind, prompt))
        handler = self.handlers.get(entry.name) or self.handlers.get(entry.kind)
        if handler is None:
            raise UnknownSignature(f"the test scripted no answer for {entry.name!r} ({entry.kind})")
        text = write_completion(prompt, handler(prompt))
        return lm15.Response(id=None, model=request.model, message=lm15.Message.assistant(text), finish_reason="stop",
                             usage=lm15.Usage(input_tokens=len(user) // 4, output_tokens=len(text) // 4))

    def close(self):
        return None

    def calls(self, name_or_kind: str) -> list[Prompt]:
        """The prompts of one registry entry (by name) or of one kind, in call order."""
        return [p for name, kind, p in self.prompts if name_or_kind in (name, kind)]


def scripted_lm(handlers: dict[str, Handler], registry: Registry | None = None) -> tuple[Any, ScriptedEngine]:
    """A ``dspy.LM`` answering with ``handlers``; pass the Analyst's registry when it has custom agents."""
    engine = ScriptedEngine(handlers, registry)
    return dspy.LM("local/scripted", engine=engine, cache=False, num_retries=0), engine
