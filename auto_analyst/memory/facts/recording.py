"""What memory keeps after a question: the turn in the history, the entities it touched, and its facts."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from auto_analyst.memory.facts.entities import extract_entities
from auto_analyst.memory.facts.extract import extract_facts
from auto_analyst.memory.facts.recall import seen_tables
from auto_analyst.memory.scope import Scope
from auto_analyst.results import Result

if TYPE_CHECKING:
    from auto_analyst.memory.stores import MemoryStores  # the upper layer: a type only

__all__ = ["record", "record_facts"]

log = logging.getLogger(__name__)


def record(stores: MemoryStores, scope: Scope, question: str, result: Result, state: dict | str | None = None) -> bool:
    """Store the turn (its whole Result as JSON) in the user's history, with the session's ``state`` when given (in
    the turn's own write), the entities it used and its facts. False when nothing was stored: the account it was
    asked for is gone (storage.owners)."""
    stored = stores.history.record_turn(
        scope.user, scope.session_id, result.turn, question, intent=result.trace.intent,
        plan_json=[s.model_dump() for s in result.plan], code=result.code,
        result_summary=(result.trace.standalone_question or "")[:500], answer=result.answer,
        model=stores.settings.model, timings_json=result.timings, usage_json=result.usage.model_dump(),
        result_json=result.model_dump(mode="json"), owner=scope.owner, state_json=state)
    if not stored:
        return False  # the account it was asked for is gone (storage.owners): nothing of the turn is kept
    ents = extract_entities(question, result.code, scope.columns, list(scope.frames))
    if ents:
        stores.entities.record(scope.user, scope.session_id, ents)
    try:
        record_facts(stores, scope, result)
    except Exception:  # noqa: BLE001 - the answer and its history stand even if the facts cannot be written
        log.exception("The facts of turn %s could not be stored", result.turn)
    return True


def record_facts(stores: MemoryStores, scope: Scope, result: Result) -> int:
    """Extract the Result's facts (see :func:`extract_facts`) into the user's graph, with the tables they came
    from (so later questions can tell a current fact from a stale one). Returns the facts added."""
    facts = extract_facts(result, scope)
    if not facts:
        return 0
    stores.graph.record_tables(scope.user, seen_tables(scope, facts[0].at))
    return stores.graph.add_facts(facts)
