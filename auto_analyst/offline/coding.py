"""What the offline analysts, combiner and fixer answer: code for the parts of the canonical question.

An analyst gets the planner's canonical text as its goal and reads it with the strict canonical
parser (never the natural-language reader), so it computes exactly what the planner understood.
"""

from __future__ import annotations

import re
from typing import Any

from auto_analyst.data.description import DatasetDescription
from auto_analyst.offline.canonical import parse_many, render
from auto_analyst.offline.codegen import ROLES, code_for
from auto_analyst.offline.fixes import fix_script
from auto_analyst.offline.joins import join_code, with_joins
from auto_analyst.offline.planning import MODEL_HINT, dataset
from auto_analyst.offline.request import Request
from auto_analyst.offline.reader import read_question
from auto_analyst.offline.sqlcode import database_tables, reads_sql, sql_writer

__all__ = ["analyst", "combiner", "fixer", "join_hoisting_imports"]


def _specs(goal: str, desc: DatasetDescription) -> list:
    desc = with_joins(desc)  # the planner may have read a question on two tables joined (joins.py)
    specs = parse_many(goal, desc) if goal.strip() else []
    if specs is None:  # a goal another planner wrote in its own words
        specs = read_question(goal, desc)
    return [s for s in specs if s.answerable]


def analyst(p: Request, role: str) -> dict[str, Any]:
    desc = dataset(p)
    if desc is None:
        return {"code": "", "summary": "Nothing to do."}
    specs = _specs(p.inputs.get("goal", ""), desc)
    if role not in ROLES:
        return custom_analyst(p, role, specs)
    sql = sql_writer(desc) if database_tables(desc) else None
    code = code_for(role, specs, sql)
    joined = list(dict.fromkeys(line for s in specs if not reads_sql(s, desc)
                                and (line := join_code(with_joins(desc), s.table))))
    if code and joined:
        code = "\n".join(joined) + "\n" + code
    return {"code": code, "summary": f"{role.replace('_', ' ').capitalize()} code for: " + "; ".join(render(s) for s in specs)}


def custom_analyst(p: Request, role: str, specs: list) -> dict[str, Any]:
    """An analyst a user registered: the offline model does not know its method, so it writes the whole script
    for a question it can answer with its own roles, and otherwise declines (empty code), saying so."""
    if not specs:
        return {"code": "", "summary": f"The {role} agent needs a language model: the embedded offline model does not "
                                       "know its method, and this is not a question it answers itself. " + MODEL_HINT}
    sql = sql_writer(dataset(p)) if database_tables(dataset(p) or DatasetDescription()) else None
    script = join_hoisting_imports([{"agent": r, "code": code_for(r, specs, sql)} for r in ROLES])
    return {"code": script, "summary": "Computed with the offline model's own methods: " + "; ".join(render(s) for s in specs)}


def combiner(p: Request) -> dict[str, Any]:
    return {"script": join_hoisting_imports(p.json_input("agent_code", []) or [])}


def join_hoisting_imports(blocks: list) -> str:
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


def fixer(p: Request) -> dict[str, Any]:
    desc = dataset(p) or DatasetDescription()
    fixed, why = fix_script(p.inputs.get("script", ""), p.inputs.get("error", ""), desc, p.inputs.get("remembered_fixes", ""))
    return {"fixed_script": fixed, "explanation": why}
