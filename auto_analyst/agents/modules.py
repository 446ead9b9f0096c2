"""DSPy Modules: each agent is a small Module around one Signature; ``forward`` is plain Python."""

from __future__ import annotations

import json
from collections.abc import Sequence

import dspy

from auto_analyst.agents import signatures as sig
from auto_analyst.agents.registry import Entry, Registry
from auto_analyst.results import PlanStep

__all__ = ["Planner", "AnalystAgent", "Combiner", "CodeFixer", "AnswerWriter", "InteractionSummarizer",
           "ErrorSummarizer", "MemoryAnswerer", "AGENT_VERSION", "step_contract", "strip_fences"]

AGENT_VERSION = "2"
"""Recorded with every error-fix memory entry; 2 = the prompt contract and the plan's typed variables (issue 13)."""


def strip_fences(code: str) -> str:
    """Remove markdown code fences a model may wrap code in (```python ... ```); keep the code."""
    text = (code or "").strip()
    if "```" not in text:
        return text
    blocks, inside, cur = [], False, []
    for line in text.splitlines():
        if line.strip().startswith("```"):
            if inside:
                blocks.append("\n".join(cur))
                cur = []
            inside = not inside
            continue
        if inside:
            cur.append(line)
    if inside and cur:
        blocks.append("\n".join(cur))
    return "\n\n".join(b for b in blocks if b.strip()).strip() or text.replace("```", "")


class Planner(dspy.Module):
    """Goal + dataset description + memory → intent, standalone question, typed plan, assumptions.

    The plan's agents are the registry's analysts (their names and descriptions, as registered now).

    Args:
        agents: the registry.
        with_code: the one-call planner (registry entry ``planner_code``), which also writes the code of a
            one-step plan (``code``; '' for other plans); it takes the code writer's inputs too.
    """

    def __init__(self, agents: Registry, with_code: bool = False):
        super().__init__()
        self.agent_names = tuple(e.name for e in agents.analysts())
        self.agent_descriptions = json.dumps(agents.agent_descriptions())
        self.with_code = with_code
        self.predict = dspy.Predict(agents.planner_signature("planner_code" if with_code else "planner"))

    def forward(self, goal: str, dataset_description: str, short_term_memory: str, user_context: str = "",
                environment: str = "", available_variables: str = "", known_fixes: str = ""):
        given = {"goal": goal, "dataset_description": dataset_description, "agent_descriptions": self.agent_descriptions,
                 "short_term_memory": short_term_memory, "user_context": user_context}
        if self.with_code:
            given.update(environment=environment, available_variables=available_variables, known_fixes=known_fixes)
        out = self.predict(**given)
        code = strip_fences(getattr(out, "code", "") or "") if self.with_code else ""
        return dspy.Prediction(intent=out.intent, standalone_question=out.standalone_question, plan=out.plan,
                               assumptions=out.assumptions, decline_reason=out.decline_reason, code=code)


def step_contract(step: PlanStep) -> dict[str, str]:
    """name → type of the variables a plan step creates (type '' when the plan gave none)."""
    return {name: step.types.get(name, "") for name in step.creates}


class AnalystAgent(dspy.Module):
    """One registered analyst (a built-in one or a user's own): step → code + summary.

    The Signature gets the inputs it declares, out of those the pipeline gives (``registry.ANALYST_INPUTS``).
    """

    def __init__(self, entry: Entry):
        super().__init__()
        self.role = entry.name
        self.predict = dspy.Predict(entry.signature)

    def forward(self, goal: str, dataset_description: str, step: PlanStep, short_term_memory: str,
                available_variables: str = "", known_fixes: str = "", environment: str = "",
                earlier_steps: Sequence[PlanStep] = ()):
        earlier = [{"agent": s.agent, "instruction": s.instruction, "creates": step_contract(s)} for s in earlier_steps]
        given = {"goal": goal, "dataset_description": dataset_description, "instruction": step.instruction,
                 "short_term_memory": short_term_memory, "available_variables": available_variables,
                 "known_fixes": known_fixes, "environment": environment, "earlier_steps": json.dumps(earlier),
                 "creates": json.dumps(step_contract(step))}
        out = self.predict(**{k: v for k, v in given.items() if k in self.predict.signature.input_fields})
        return dspy.Prediction(code=strip_fences(out.code), summary=getattr(out, "summary", "") or "")


class Combiner(dspy.Module):
    """The agents' code blocks (whose variables did not line up) → one script sharing variables."""

    def __init__(self):
        super().__init__()
        self.predict = dspy.Predict(sig.CombinerSignature)

    def forward(self, goal: str, environment: str, blocks: list[dict], missing_names: Sequence[str] = ()):
        out = self.predict(goal=goal, environment=environment, agent_code=json.dumps(blocks),
                           missing_names=", ".join(missing_names))
        return dspy.Prediction(script=strip_fences(out.script))


class CodeFixer(dspy.Module):
    """Failing script + error + remembered fixes → corrected script."""

    def __init__(self):
        super().__init__()
        self.predict = dspy.Predict(sig.CodeFixSignature)

    def forward(self, script: str, error: str, dataset_description: str, environment: str = "",
                remembered_fixes: str = "", goal: str = ""):
        out = self.predict(goal=goal, script=script, error=error, dataset_description=dataset_description,
                           environment=environment, remembered_fixes=remembered_fixes)
        return dspy.Prediction(fixed_script=strip_fences(out.fixed_script), explanation=out.explanation,
                               error_summary=(getattr(out, "error_summary", "") or "").strip(),
                               correction_summary=(getattr(out, "correction_summary", "") or "").strip())


class AnswerWriter(dspy.Module):
    """The run's output → the answer text."""

    def __init__(self):
        super().__init__()
        self.predict = dspy.Predict(sig.AnswerSignature)

    def forward(self, **inputs):
        return self.predict(**inputs)


class InteractionSummarizer(dspy.Module):
    def __init__(self):
        super().__init__()
        self.predict = dspy.Predict(sig.InteractionSummarySignature)

    def forward(self, user_goal: str, agent_response: str):
        return self.predict(user_goal=user_goal, agent_response=agent_response)


class ErrorSummarizer(dspy.Module):
    def __init__(self):
        super().__init__()
        self.predict = dspy.Predict(sig.ErrorSummarySignature)

    def forward(self, incorrect_code: str, error_metadata: str, correction: str):
        return self.predict(incorrect_code=incorrect_code, error_metadata=error_metadata, correction=correction)


class MemoryAnswerer(dspy.Module):
    def __init__(self):
        super().__init__()
        self.predict = dspy.Predict(sig.MemoryAnswerSignature)

    def forward(self, question: str, history: str):
        return self.predict(question=question, history=history)
