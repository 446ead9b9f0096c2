"""What memory keeps after a question: the turn in the history, and the entities it touched."""

from __future__ import annotations

from auto_analyst.memory.entities import extract_entities
from auto_analyst.memory.scope import Scope
from auto_analyst.memory.stores import MemoryStores
from auto_analyst.results import Result

__all__ = ["record"]


def record(stores: MemoryStores, scope: Scope, question: str, result: Result) -> None:
    """Store the turn (its whole Result as JSON) in the user's history, and the entities it used."""
    stores.history.record_turn(
        scope.user, scope.session_id, result.turn, question, intent=result.trace.intent,
        plan_json=[s.model_dump() for s in result.plan], code=result.code,
        result_summary=(result.trace.standalone_question or "")[:500], answer=result.answer,
        model=stores.settings.model, timings_json=result.timings, usage_json=result.usage.model_dump(),
        result_json=result.model_dump(mode="json"))
    ents = extract_entities(question, result.code, scope.columns, list(scope.frames))
    if ents:
        stores.entities.record(scope.user, scope.session_id, ents)
