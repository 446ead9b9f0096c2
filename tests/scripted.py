"""A scripted LM engine for tests: answers each of our Signatures with a function of its prompt.

It plugs into ``dspy.LM`` exactly like the offline engine, so tests can make the model's answer
depend on what the prompt contains (e.g. "fix it right only if the remembered fix is in the prompt").
"""

from __future__ import annotations

from typing import Any, Callable

import dspy

from auto_analyst.llm.offline.protocol import Prompt, read_prompt, write_completion

Handler = Callable[[Prompt], dict[str, Any]]

PLANNER = frozenset({"intent", "standalone_question", "plan", "assumptions", "decline_reason"})
ANALYST = frozenset({"code", "summary"})
FIXER = frozenset({"fixed_script", "explanation"})
ANSWER = frozenset({"answer"})
SUMMARY = frozenset({"summary"})
ERROR_SUMMARY = frozenset({"error_summary", "correction_summary"})


class ScriptedEngine:
    def __init__(self, handlers: dict[frozenset, Handler]):
        self.handlers = handlers
        self.prompts: list[Prompt] = []

    def complete(self, request):
        from dspy import lm15

        user = next((m.text for m in reversed(request.messages) if m.role == "user"), "")
        prompt = read_prompt(request.system if isinstance(request.system, str) else "", user)
        self.prompts.append(prompt)
        values = self.handlers[frozenset(prompt.outputs)](prompt)
        text = write_completion(prompt, values)
        return lm15.Response(id=None, model=request.model, message=lm15.Message.assistant(text), finish_reason="stop",
                             usage=lm15.Usage(input_tokens=len(user) // 4, output_tokens=len(text) // 4))

    def close(self):
        return None

    def calls(self, outputs: frozenset) -> list[Prompt]:
        return [p for p in self.prompts if frozenset(p.outputs) == outputs]


def scripted_lm(handlers: dict[frozenset, Handler]) -> tuple[Any, ScriptedEngine]:
    engine = ScriptedEngine(handlers)
    return dspy.LM("local/scripted", engine=engine, cache=False, num_retries=0), engine
