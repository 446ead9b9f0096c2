"""What the offline model answers for each of our Signatures (recognised by the registry of Signatures)."""

from __future__ import annotations

import re
from typing import Any

from auto_analyst.agents.registry import Entry, Registry, default_registry
from auto_analyst.data.description import DatasetDescription
from auto_analyst.llm.offline.answer import format_lines, write_answer
from auto_analyst.llm.offline.answer_format import match_names, split_format
from auto_analyst.llm.offline.codegen import scalar_labels
from auto_analyst.llm.offline.codegen import ROLES, code_for
from auto_analyst.llm.offline.fixes import fix_script
from auto_analyst.llm.offline.protocol import Prompt
from auto_analyst.llm.offline.questions import understand
from auto_analyst.llm.offline.router import route
from auto_analyst.question_text import QUOTE  # one definition of what a quote of an earlier answer is

__all__ = ["respond"]

CANNOT = ("The embedded offline model can't answer this kind of question. Rephrase it with column names and a "
          "statistic or chart (for example 'mean of price by category'), or use a language model: "
          "--model openai/gpt-4o-mini (key in OPENAI_API_KEY) or any model LiteLLM supports.")


def _desc(p: Prompt) -> DatasetDescription | None:
    try:
        return DatasetDescription.from_prompt(p.inputs.get("dataset_description", ""))
    except ValueError:
        return None


def _turns(p: Prompt) -> list:
    memory = p.json_input("short_term_memory", []) or []
    return memory.get("turns", []) if isinstance(memory, dict) else memory


def _previous(p: Prompt) -> str | None:
    memory = _turns(p)
    for item in reversed(memory):
        if isinstance(item, dict) and (item.get("standalone_question") or item.get("question")):
            return item.get("standalone_question") or item.get("question")
    return None


def planner(p: Prompt) -> dict[str, Any]:
    goal = p.inputs.get("goal", "")
    intent = route(goal)
    out = {"intent": intent, "standalone_question": goal, "plan": [], "assumptions": [], "decline_reason": ""}
    if intent != "analysis":
        return out
    desc = _desc(p)
    if desc is None or not desc.tables:
        out["decline_reason"] = "No table is loaded; load a CSV, Excel or Parquet file first."
        return out
    if any(isinstance(t, dict) and t.get("quoted") for t in _turns(p)):
        goal = QUOTE.sub(" ", goal)  # the quote points at an earlier turn (now the previous one); it is not a question
    goal, names, rounding = split_format(goal)
    specs = understand(goal, desc, _previous(p))
    if rounding is not None:
        for s in specs:
            s.rounding = s.rounding if s.rounding is not None else rounding
    good = [s for s in specs if s.answerable]
    if good and not _restates(good, desc):
        good = []
    bad = [s for s in specs if s not in good]
    reasons = [pr for s in bad for pr in s.problems] or ([CANNOT] if bad else [])
    if not good:
        out["decline_reason"] = " ".join(dict.fromkeys(reasons)) or CANNOT
        if not any(s.problems for s in bad):
            out["decline_reason"] = CANNOT
        return out
    if names and not any(s.group_by or s.time_grain for s in good):
        labels = [lab for s in good for lab in scalar_labels(s)]
        if labels and match_names(names, labels) is None:
            out["decline_reason"] = (f"I can't tell which of my results {', '.join(names)} refer to, so I don't answer "
                                     "in that format offline.")
            return out
    out["standalone_question"] = "; ".join(s.to_text() for s in good)
    out["assumptions"] = [a for s in good for a in s.assumptions]
    if bad:
        out["decline_reason"] = "Part of the question was not answered: " + " ".join(dict.fromkeys(reasons))
    steps = []
    for role in ROLES:
        code = code_for(role, good)
        if not code:
            continue
        uses = sorted({s.table for s in good}) if role == "preprocessing" else [f"data_{i}" for i in range(1, len(good) + 1)]
        creates = [f"data_{i}" for i in range(1, len(good) + 1)] if role == "preprocessing" else []
        steps.append({"agent": role, "instruction": _instruction(role, good), "uses": uses, "creates": creates})
    out["plan"] = steps
    return out


def _restates(specs: list, desc: DatasetDescription) -> bool:
    """The analysts re-read the canonical text: refuse a question whose text does not read back the same."""
    again = [s for s in understand("; ".join(s.to_text() for s in specs), desc) if s.answerable]
    keep = {"assumptions"}
    ok = [a.model_dump(exclude=keep) for a in again] == [s.model_dump(exclude=keep) for s in specs]
    if not ok:
        for spec in specs:
            spec.problems.append("I could not restate this question unambiguously, so I did not answer it.")
    return ok


def _instruction(role: str, specs) -> str:
    if role == "preprocessing":
        return "Select the rows each part needs: " + "; ".join(
            (" and ".join(f.to_text() for f in s.filters) or "all rows") for s in specs) + "."
    if role == "visualisation":
        return "Plot: " + "; ".join(s.to_text() for s in specs if s.task == "chart") + "."
    return "Compute: " + "; ".join(s.to_text() for s in specs) + "."


def analyst(p: Prompt, role: str) -> dict[str, Any]:
    desc = _desc(p)
    if desc is None:
        return {"code": "", "summary": "Nothing to do."}
    specs = [s for s in understand(p.inputs.get("goal", ""), desc) if s.answerable]
    if role not in ROLES:
        return custom_analyst(p, role, specs)
    code = code_for(role, specs)
    return {"code": code, "summary": f"{role.replace('_', ' ').capitalize()} code for: " + "; ".join(s.to_text() for s in specs)}


def custom_analyst(p: Prompt, role: str, specs: list) -> dict[str, Any]:
    """An analyst a user registered: the offline model does not know its method, so it writes the whole script
    for a question it can answer with its own roles, and otherwise declines (empty code), saying so."""
    if not specs:
        return {"code": "", "summary": f"The {role} agent needs a language model: the embedded offline model does not "
                                       "know its method, and this is not a question it answers itself. Use a model: "
                                       "--model openai/gpt-4o-mini (key in OPENAI_API_KEY) or any model LiteLLM supports."}
    script = merge_blocks([{"agent": r, "code": code_for(r, specs)} for r in ROLES])
    return {"code": script, "summary": "Computed with the offline model's own methods: " + "; ".join(s.to_text() for s in specs)}


def combiner(p: Prompt) -> dict[str, Any]:
    return {"script": merge_blocks(p.json_input("agent_code", []) or [])}


def merge_blocks(blocks: list) -> str:
    """The agents' code blocks as one script: their imports once, at the top, then the bodies in plan order."""
    imports: list[str] = []
    bodies: list[str] = []
    for b in blocks:
        if not isinstance(b, dict) or not b.get("code"):
            continue
        lines = b["code"].splitlines()
        imports += [ln for ln in lines if re.match(r"(import|from) \w", ln)]
        bodies.append("\n".join(ln for ln in lines if not re.match(r"(import|from) \w", ln)).strip())
    head = "\n".join(dict.fromkeys(imports))
    return (head + "\n\n" if head else "") + "\n\n".join(bodies)


def fixer(p: Prompt) -> dict[str, Any]:
    desc = _desc(p) or DatasetDescription()
    fixed, why = fix_script(p.inputs.get("script", ""), p.inputs.get("error", ""), desc, p.inputs.get("remembered_fixes", ""))
    return {"fixed_script": fixed, "explanation": why}


def answer(p: Prompt) -> dict[str, Any]:
    tables = p.json_input("tables", []) or []
    figures = p.json_input("figures", []) or []
    assumptions = p.json_input("assumptions", []) or []
    style = p.inputs.get("style", "").lower()
    _, names, digits = split_format(p.inputs.get("question", ""))
    formatted = format_lines(names, tables, digits)
    text = formatted + write_answer(tables, figures, assumptions, p.inputs.get("unanswered", ""), p.inputs.get("stdout", ""),
                        brief="keep answers short" in style, beginner="new to statistics" in style)
    return {"answer": text}


def interaction_summary(p: Prompt) -> dict[str, Any]:
    resp = p.json_input("agent_response", {}) or {}
    agents = [s.get("agent") for s in resp.get("plan", []) if isinstance(s, dict)]
    code = resp.get("code", "")
    packages = sorted(set(re.findall(r"^\s*(?:import|from)\s+(\w+)", code, re.M)))
    ans = " ".join(str(resp.get("answer", "")).split())[:300]
    text = (f"Goal: {p.inputs.get('user_goal', '')}. Agents: {', '.join(agents) or 'none'}. "
            f"Packages: {', '.join(packages) or 'pandas'}. Result: {ans}")
    return {"summary": text}


def error_summary(p: Prompt) -> dict[str, Any]:
    meta = p.json_input("error_metadata", {}) or {}
    before = p.inputs.get("incorrect_code", "").splitlines()
    after = p.inputs.get("correction", "").splitlines()
    removed = [ln.strip() for ln in before if ln not in after][:3]
    added = [ln.strip() for ln in after if ln not in before][:3]
    err = meta.get("error", "")
    return {"error_summary": f"{meta.get('error_type', 'Error')} in {meta.get('agent', 'generated')} code: {err}".strip(),
            "correction_summary": f"{meta.get('repair', 'Changed the code')}: replaced {removed or 'nothing'} with {added}."}


def memory_answer(p: Prompt) -> dict[str, Any]:
    history = p.json_input("history", []) or []
    q = set(re.findall(r"[a-z]{4,}", p.inputs.get("question", "").lower())) - {"what", "earlier", "did", "find", "about",
                                                                                "before", "said", "were", "which", "that"}
    best, score = None, 0
    for turn in history:
        words = set(re.findall(r"[a-z]{4,}", (str(turn.get("question", "")) + " " + str(turn.get("answer", ""))).lower()))
        s = len(q & words)
        if s > score:
            best, score = turn, s
    if best is None:
        return {"answer": "I don't find that in this conversation's history."}
    return {"answer": f"Earlier (turn {best.get('turn', '?')}) you asked: \"{best.get('question', '')}\". "
                      f"The answer was:\n\n{best.get('answer', '')}"}


HANDLERS = {
    "planner": planner,
    "combiner": combiner,
    "fixer": fixer,
    "answer": answer,
    "summary": interaction_summary,
    "error_summary": error_summary,
    "memory_answer": memory_answer,
}
"""Registry kind → handler (analysts are answered by :func:`analyst`, by name)."""


def respond(p: Prompt, registry: Registry | None = None) -> dict[str, Any]:
    """The output field values for prompt ``p``.

    Raises:
        UnknownSignature: ``p`` belongs to no Signature of ``registry`` (default: the built-in ones).
    """
    entry: Entry = (registry or default_registry()).identify(p.outputs, p.objective)
    if entry.kind == "analyst":
        return analyst(p, entry.name)
    return HANDLERS[entry.kind](p)
