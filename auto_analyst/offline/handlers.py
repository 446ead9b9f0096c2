"""Which offline handler answers a request: the registry of Signatures tells the Signature, this maps it to code.

Only a request of no registered Signature is refused (:class:`~auto_analyst.errors.UnknownSignature`);
any other failure is a bug and propagates, so it is never mistaken for a decline.
"""

from __future__ import annotations

from typing import Any

from auto_analyst.agents.registry import Entry, Registry, default_registry
from auto_analyst.offline.coding import analyst, combiner, fixer
from auto_analyst.offline.conversation import memory_answer
from auto_analyst.offline.planning import planner
from auto_analyst.offline.request import Request
from auto_analyst.offline.writing import answer, error_summary, interaction_summary

__all__ = ["respond", "HANDLERS"]

HANDLERS = {
    "planner": planner,
    "combiner": combiner,
    "fixer": fixer,
    "answer": answer,
    "summary": interaction_summary,
    "error_summary": error_summary,
    "memory_answer": memory_answer,
}
"""Registry kind → handler (analysts are answered by :func:`~auto_analyst.offline.coding.analyst`, by name)."""


def respond(p: Request, registry: Registry | None = None) -> dict[str, Any]:
    """The output field values for request ``p`` (plain Python values: str, list, dict).

    Raises:
        UnknownSignature: ``p`` belongs to no Signature of ``registry`` (default: the built-in ones).
    """
    entry: Entry = (registry or default_registry()).identify(p.outputs, p.instructions)
    if entry.kind == "analyst":
        return analyst(p, entry.name)
    return HANDLERS[entry.kind](p)
