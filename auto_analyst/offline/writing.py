"""What the offline answer writer and the summarizers answer.

The answer is built from the values and tables the script showed (never a number of its own) and
follows the user's profile as the prompt's ``style`` field states it: short answers keep the headline
values, "one sentence" says them in one sentence, bullet points and step-by-step change the layout,
a formal or casual tone changes the opening, a beginner gets plain-words explanations of the
statistics, a detailed answer says how it was computed, and a persona other than the default is named.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from auto_analyst.offline.answer import fmt, format_lines, shown, write_answer
from auto_analyst.offline.reader.conditions import asked_rounding
from auto_analyst.offline.request import Request
from auto_analyst.question_text import split_format

__all__ = ["answer", "interaction_summary", "error_summary", "Style", "read_style"]

WHY = re.compile(r"\b(?:why|how come|how (?:was|is|were|did you get) (?:it|this|that|these|those)(?: computed| calculated| "
                 r"worked out| found| got)?|how (?:does|do) (?:it|this|that|these|those) compare|compared? (?:to|with) the "
                 r"(?:rest|others))\b", re.I)


@dataclass
class Style:
    """How to write one answer, from the profile text of the prompt's ``style`` field."""

    brief: bool = False
    one_sentence: bool = False
    bullets: bool = False
    steps: bool = False
    detailed: bool = False
    tone: str = "neutral"
    beginner: bool = False
    expert: bool = False
    persona: str = ""


def read_style(text: str) -> Style:
    """The :class:`Style` a rendered profile asks for (any model reads the same text)."""
    t = text.lower()
    s = Style()
    s.one_sentence = bool(re.search(r"\bone sentence|single sentence", t))
    s.brief = s.one_sentence or bool(re.search(r"keep answers short|\bconcise\b|\bbrief\b", t))
    s.bullets = "bullet" in t
    s.steps = "step by step" in t
    s.detailed = bool(re.search(r"detailed answers|\bdetailed\b", t)) and not s.brief
    tone = re.search(r"tone:\s*([a-z ]+)\.", t)
    s.tone = tone.group(1).strip() if tone else "neutral"
    s.beginner = bool(re.search(r"new to statistics|beginner|plain words", t))
    s.expert = "expert" in t and not s.beginner
    persona = re.search(r"persona:\s*([^.\n]+)\.", t)
    s.persona = persona.group(1).strip() if persona and persona.group(1).strip() != "data analyst" else ""
    return s


def _one_sentence(tables: list[dict], figures: list[dict], rounded: int | None = None) -> str:
    """The headline values in one sentence: 'Mean price by region: North 51.2, South 49.8.' (``rounded``: the
    decimals the question asked, see :func:`~auto_analyst.offline.answer.shown`)."""
    parts = []
    for t in tables:
        name, cols, rows = t.get("name", ""), t.get("columns", []), t.get("rows", [])
        if cols == ["value"] and rows:
            parts.append(f"{name} {shown(name, rows[0][0], rounded=rounded)}")
        elif rows and len(cols) >= 2 and len(rows) <= 6 and "(first rows)" not in name:
            parts.append(f"{name}: " + ", ".join(f"{fmt(r[0])} {shown(f'{cols[1]} {r[0]}', r[1], rounded=rounded)}"
                                         for r in rows))
        elif rows:
            parts.append(f"{name} in a table of {t.get('n_rows', len(rows))} rows")
        if len(parts) == 3:
            break
    if figures:
        parts.append(f"a chart ({figures[0].get('title') or 'figure'})")
    if not parts:
        return "The script ran but showed no result."
    text = "; ".join(parts)
    return text[:1].upper() + text[1:] + "."


def answer(p: Request) -> dict[str, Any]:
    tables = p.json_input("tables", []) or []
    figures = p.json_input("figures", []) or []
    assumptions = p.json_input("assumptions", []) or []
    question = p.inputs.get("question", "")
    style = read_style(p.inputs.get("style", ""))
    _, names, digits = split_format(question)
    formatted = format_lines(names, tables, digits, question)
    # the script rounded its values as the question (or a follow-up's resolved question) asked: a p-value shown 0
    # hides that much
    rounded = asked_rounding(f"{question}\n{p.inputs.get('resolved_question', '')}")
    unanswered = p.inputs.get("unanswered", "")
    if style.one_sentence or (style.brief and not any(t.get("columns") == ["value"] for t in tables)):
        # one sentence, or a short answer of tables: the headline in one line
        body = _one_sentence([t for t in tables if t.get("columns") == ["value"]] or tables, figures, rounded)
        if unanswered:
            body += " " + unanswered
        return {"answer": formatted + body}
    text = write_answer(tables, figures, [] if style.brief else assumptions, unanswered, p.inputs.get("stdout", ""),
                        brief=style.brief, beginner=style.beginner, rounded=rounded)
    paragraphs = [x for x in text.split("\n\n") if x.strip()]
    resolved = p.inputs.get("resolved_question", "")
    if (style.detailed or style.steps or WHY.search(question)) and resolved:
        paragraphs.insert(0, f"How it was computed: {resolved}.")
    if style.steps:
        paragraphs = [f"{k}. {x}" for k, x in enumerate(paragraphs, start=1)]
    elif style.bullets:
        paragraphs = [x if x.lstrip().startswith("- ") else "- " + x.replace("\n", "\n  ") for x in paragraphs]
    opening = {"formal": "The results are as follows.", "casual": "Here's what I found:"}.get(style.tone)
    if style.persona:
        opening = f"As your {style.persona}: " + (opening or "")
    if opening and not style.brief:
        paragraphs.insert(0, opening.strip())
    return {"answer": formatted + "\n\n".join(paragraphs)}


def interaction_summary(p: Request) -> dict[str, Any]:
    resp = p.json_input("agent_response", {}) or {}
    agents = [s.get("agent") for s in resp.get("plan", []) if isinstance(s, dict)]
    code = resp.get("code", "")
    packages = sorted(set(re.findall(r"^\s*(?:import|from)\s+(\w+)", code, re.M)))
    ans = " ".join(str(resp.get("answer", "")).split())[:300]
    text = (f"Goal: {p.inputs.get('user_goal', '')}. Agents: {', '.join(agents) or 'none'}. "
            f"Packages: {', '.join(packages) or 'pandas'}. Result: {ans}")
    return {"summary": text}


def error_summary(p: Request) -> dict[str, Any]:
    meta = p.json_input("error_metadata", {}) or {}
    before = p.inputs.get("incorrect_code", "").splitlines()
    after = p.inputs.get("correction", "").splitlines()
    removed = [ln.strip() for ln in before if ln not in after][:3]
    added = [ln.strip() for ln in after if ln not in before][:3]
    err = meta.get("error", "")
    return {"error_summary": f"{meta.get('error_type', 'Error')} in {meta.get('agent', 'generated')} code: {err}".strip(),
            "correction_summary": f"{meta.get('repair', 'Changed the code')}: replaced {removed or 'nothing'} with {added}."}
