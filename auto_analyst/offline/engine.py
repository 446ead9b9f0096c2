"""The embedded offline model: a DSPy LM engine that answers our Signatures deterministically.

It plugs in where a hosted model would: ``dspy.LM("local/offline", engine=OfflineEngine())``. It
reads the same prompt (DSPy's adapter format) and answers in the same format. What it does not
understand it declines, in words, instead of guessing.
"""

from __future__ import annotations

from auto_analyst.errors import UnknownSignature
from auto_analyst.offline.protocol import read_prompt, write_completion
from auto_analyst.offline.handlers import respond

__all__ = ["OfflineEngine", "offline_lm"]


class OfflineEngine:
    """DSPy 3.4 engine contract: ``complete(request) -> dspy.lm15.Response`` and ``close()``.

    Args:
        registry: the Signatures it answers (an Analyst's, with its own agents); default the built-in ones.
    """

    def __init__(self, registry=None):
        from auto_analyst.agents.registry import default_registry

        self.registry = registry or default_registry()

    def complete(self, request):
        from dspy import lm15

        system = request.system if isinstance(request.system, str) else "".join(getattr(p, "text", "") for p in (request.system or ()))
        user = next((m.text for m in reversed(request.messages) if m.role == "user"), "")
        prompt = read_prompt(system, user)
        try:
            values = respond(prompt, self.registry)
        except UnknownSignature:  # a task it was not built for: empty fields, which DSPy reports as a failed call
            values = {k: "" for k in prompt.outputs}
        text = write_completion(prompt, values)
        usage = lm15.Usage(input_tokens=_tokens(system) + _tokens(user), output_tokens=_tokens(text))
        return lm15.Response(id=None, model=request.model, message=lm15.Message.assistant(text), finish_reason="stop",
                             usage=usage)

    def close(self) -> None:
        return None


def _tokens(text: str) -> int:
    # a cheap estimate (≈4 characters a token, OpenAI's rule of thumb); exact counts come from litellm elsewhere
    return max(1, len(text) // 4)


def offline_lm(registry=None):
    """A ``dspy.LM`` backed by the offline engine, with DSPy's cache off (answers are cheap and deterministic)."""
    import dspy

    return dspy.LM("local/offline", engine=OfflineEngine(registry), cache=False, num_retries=0)
