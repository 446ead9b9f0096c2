"""What memory gives a question before it is answered: the rendered context, past turns, remembered fixes.

Every function takes the user id (in a :class:`~auto_analyst.memory.scope.Scope` or alone), and
nothing of one user reaches another's prompt.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from auto_analyst.memory.context.builder import ContextBuilder
from auto_analyst.memory.context.short_term import ShortTermMemory
from auto_analyst.memory.context.tokens import count_tokens
from auto_analyst.memory.facts import recall as fact_recall
from auto_analyst.memory.facts.model import render_fact
from auto_analyst.memory.scope import Scope
from auto_analyst.memory.users.profile import render
from auto_analyst.question_text import QUOTE, conditions_in, split_format
from auto_analyst.results import ContextPart, MemoryHit
from auto_analyst.storage.times import to_iso

if TYPE_CHECKING:
    from auto_analyst.memory.stores import MemoryStores  # the upper layer: a type only

__all__ = ["Prepared", "prepare", "history_for", "fixes_for_error", "KNOWN_FIX_MIN_SCORE", "FACTS_HEADING"]

FACTS_HEADING = "Findings of this user's earlier analyses (with when they were found; the data may have changed since):"
"""The line before the remembered facts in the planner's user_context."""

KNOWN_FIX_MIN_SCORE = 0.35
"""Cosine similarity above which a remembered fix is shown to the analysts before they write code
(measured on the hashing embedding: unrelated errors score below 0.2, the same error kind above 0.5)."""


@dataclass
class Prepared:
    """The rendered context of one question and what memory it used.

    ``previous_result`` is JSON of the last turn's question and key result (for the answer writer), or ''.
    """

    short_term_memory: str
    user_context: str
    style: str
    known_fixes: str
    previous_result: str = ""
    sizes: list[ContextPart] = field(default_factory=list)
    facts: str = ""
    """The remembered facts kept under the memory budget, one per line (also at the end of user_context, after
    FACTS_HEADING; a planner Signature with its own facts input would take this instead)."""
    hits: list[MemoryHit] = field(default_factory=list)


def prepare(stores: MemoryStores, scope: Scope, question: str, dataset_description: str,
            short_term: ShortTermMemory) -> Prepared:
    """Build the memory parts of the prompt within the budgets (settings.memory_budget_tokens)."""
    settings, user = stores.settings, scope.user
    quote = None
    m = QUOTE.search(split_format(question)[0])  # a requested answer format is not a quote
    if m and " " in m.group(1):
        found = stores.history.find_quote(user, m.group(1), session=scope.session_id)
        quote = found if found is not None and found.exact else None
    profile = stores.profiles.get(user)
    top = stores.entities.top(user, n=8)
    fixes = _known_fixes(stores, user, question)
    facts = _facts_for(stores, scope, question)
    built = ContextBuilder(settings).build(
        dataset_description=dataset_description, question=question, short_term=short_term,
        quoted_turns=quote, profile=profile, entities=top, error_fixes=[(e.id, e.document) for e in fixes],
        facts=facts)
    kept_turns = {h.id for h in built.memory_hits if h.kind == "short_term"}
    turns = [_turn(i) for i in short_term.items if str(i.turn) in kept_turns]
    if quote is not None and any(h.kind == "history" for h in built.memory_hits):
        t = quote.turn
        turns.append({"turn": t.turn, "question": t.question, "standalone_question": _standalone(t),
                      "answer": t.answer[:500], "quoted": True})
    # which table is active now, beside the table of each earlier turn: a new question is planned against the
    # active table, and only a follow-up of an earlier turn against that turn's table
    active = scope.description.active if scope.description is not None else ""
    memory = _fit_json({"summary": short_term.running_summary, "active_table": active, "turns": turns},
                       settings.memory_budget_tokens)
    previous = short_term.last()
    previous_result = json.dumps({"question": previous.standalone_question or previous.question,
                                  "key_result": previous.key_result}, ensure_ascii=False) \
        if previous is not None and previous.key_result else ""
    focus = ", ".join(e.entity for e in top)
    facts_text = built.parts.get("facts", "")
    user_context = "\n".join(x for x in [render(profile), f"This user often works with: {focus}." if focus else "",
                                         f"{FACTS_HEADING}\n{facts_text}" if facts_text else ""] if x)
    used = [h.id for h in built.memory_hits if h.kind == "fact"]
    if used:
        _safely(stores.graph.mark_used, user, used, to_iso(None))
    hits = [h for h in built.memory_hits if h.kind != "error_fix"]
    hits += [MemoryHit(kind="error_fix", id=e.id, detail=e.error_type) for e in fixes]
    # the prompt gets the memory as JSON: report the size of what is really sent
    sizes = [s if s.part != "short_term" else s.model_copy(update={"tokens": count_tokens(memory)})
             for s in built.sizes]
    return Prepared(short_term_memory=memory, user_context=user_context, style=render(profile),
                    known_fixes="\n\n".join(e.document for e in fixes), previous_result=previous_result,
                    sizes=sizes, hits=hits, facts=facts_text)


def _facts_for(stores: MemoryStores, scope: Scope, question: str) -> list[tuple[str, str]]:
    """The current (not stale) facts around the question's entities, best first, as (id, line) for the context."""
    try:
        found = fact_recall.retrieve(stores.graph, scope, question, k=stores.settings.facts_k, links=False)
    except Exception:  # noqa: BLE001 - the question is answered without remembered facts rather than not at all
        return []
    return [(h.fact.id, render_fact(h.fact)) for h in found.current]


def facts_for_memory(stores: MemoryStores, scope: Scope, question: str) -> tuple[list[dict], list[MemoryHit]]:
    """Rows of remembered facts (stale ones marked) for a question about earlier findings, and the hits."""
    try:
        found = fact_recall.retrieve(stores.graph, scope, question, k=stores.settings.facts_k, links=False)
    except Exception:  # noqa: BLE001
        return [], []
    rows = fact_recall.memory_rows(found, question, limit=stores.settings.facts_k)
    hits = [MemoryHit(kind="fact", id=h.fact.id, detail=render_fact(h.fact)[:120])
            for h in found.hits[:stores.settings.facts_k]]
    if hits:
        _safely(stores.graph.mark_used, scope.user, [h.id for h in hits], to_iso(None))
    return rows, hits


def _safely(fn, *args) -> None:
    try:
        fn(*args)
    except Exception:  # noqa: BLE001 - a use count is not worth failing a question for
        pass


def _known_fixes(stores: MemoryStores, user: str, question: str) -> list:
    try:
        return stores.errors.search(question, user=user, k=stores.settings.error_memory_k,
                                    min_score=KNOWN_FIX_MIN_SCORE)
    except Exception:  # noqa: BLE001 - a damaged store must not stop the question; reindex fixes it
        return []


CURRENT_TURNS = 20  # the current session's latest turns given to the memory answerer (a long chat keeps its recent part)


def history_for(stores: MemoryStores, user: str, question: str, k: int = 5,
                scope: Scope | None = None) -> tuple[str, list[MemoryHit]]:
    """The user's past turns most like ``question``, as JSON for the memory answerer.

    With ``scope``, the remembered facts around the question's entities come first (see
    :func:`fact_recall.memory_rows`: the facts of every session joined, then one row per turn), so an
    answer about earlier findings quotes the numbers and when they were found.
    """
    fact_rows, hits = facts_for_memory(stores, scope, question) if scope is not None else ([], [])
    # "what did you answer to my first question?" is about THIS conversation: its turns come first, in order
    # (marked "session": "current"), then the most similar turns of earlier sessions
    current = stores.history.turns(user, session=scope.session_id, limit=CURRENT_TURNS) if scope is not None else []
    seen = {t.id for t in current}
    turns = current + [t for t in stores.history.search(user, question, k=k) if t.id not in seen]
    rows = fact_rows + [{"id": t.id, "turn": t.turn, "question": t.question, "standalone_question": _standalone(t),
                         "answer": t.answer[:800], "values": _shown_values(t), "conditions": _conditions(t),
                         "when": t.created_at,
                         "session": "current" if scope is not None and t.session == scope.session_id else "earlier"}
                        for t in turns]
    return json.dumps(rows, ensure_ascii=False), hits + [MemoryHit(kind="history", id=str(t.id),
                                                                   detail=t.question[:80]) for t in turns]


def fixes_for_error(stores: MemoryStores, user: str, error_text: str) -> tuple[str, list[str]]:
    """The user's (and shared) remembered fixes most like ``error_text``, as text for the fixer, and their ids."""
    try:
        hits = stores.errors.search(error_text, user=user, k=stores.settings.error_memory_k)
    except Exception:  # noqa: BLE001
        return "", []
    if hits:
        stores.errors.mark_used([h.id for h in hits])
    return "\n\n".join(h.document for h in hits), [h.id for h in hits]


HISTORY_VALUE_ROWS = 20
"""Rows of each table a past turn showed that the memory answerer gets (enough for a grouped result)."""


def _shown_values(turn: Any) -> list[dict]:
    """The tables and values a past turn showed (name, columns, first rows), from its stored result."""
    try:
        tables = json.loads(turn.result_json or "{}").get("tables", [])
    except (ValueError, AttributeError):
        return []
    return [{"name": t.get("name", ""), "columns": t.get("columns", []), "rows": t.get("rows", [])[:HISTORY_VALUE_ROWS]}
            for t in tables if isinstance(t, dict)][:6]


def _conditions(turn: Any) -> list[dict]:
    """The row conditions the turn's answer was computed under ({"column", "op", "value"}), read from its resolved
    question, plan and shown tables' names (question_text.conditions_in): a follow-up quoting it must name them too."""
    try:
        result = json.loads(turn.result_json or "{}")
    except (ValueError, AttributeError):
        return []
    text = " ".join([str(result.get("trace", {}).get("standalone_question", ""))]
                    + [str(s.get("instruction", "")) for s in result.get("plan", []) if isinstance(s, dict)]
                    + [str(t.get("name", "")) for t in result.get("tables", []) if isinstance(t, dict)])
    return [{"column": c, "op": op, "value": v} for c, op, v in conditions_in(text)]


def _standalone(turn: Any) -> str:
    try:
        return json.loads(turn.result_json or "{}").get("trace", {}).get("standalone_question", "") or turn.question
    except (ValueError, AttributeError):
        return turn.question


def _fit_json(memory: dict, budget: int) -> str:
    """The memory as JSON, dropping the oldest turns (then the summary) until it fits the budget."""
    turns = list(memory["turns"])
    while True:
        text = json.dumps(memory | {"turns": turns}, ensure_ascii=False)
        if count_tokens(text) <= budget:
            return text
        if len(turns) > 1:
            turns.pop(0)
        elif memory["summary"]:
            memory = memory | {"summary": ""}
        elif turns:
            turns = []
        else:
            return text


def _turn(item) -> dict:
    """One turn for the prompt: what it did (its summary, or its answer when it has none: never both)."""
    label, text = item.outcome()
    return {"turn": item.turn, "question": item.question, "standalone_question": item.standalone_question,
            ("summary" if label == "Did" else "answer"): text[:500], "result_names": item.result_names,
            "tables": item.tables} | _shown(item.key_result) | ({} if item.answered else {"answered": False})


def _shown(key_result: str) -> dict:
    """{"shown": {"name", "value"}} when the turn's first result is one value ('General Motors' for "which firm had
    the highest value?"), else {}: what a follow-up saying "its", "from there" or "that year" points at, taken from
    the Result's table (typed), never from the answer's text."""
    try:
        first = json.loads(key_result) if key_result else {}
    except ValueError:
        return {}
    if not isinstance(first, dict) or first.get("columns") != ["value"]:
        return {}
    rows = first.get("rows")
    if isinstance(rows, list) and len(rows) == 1 and isinstance(rows[0], list) and len(rows[0]) == 1:
        return {"shown": {"name": str(first.get("name", "")), "value": rows[0][0]}}
    return {}
