"""The contract of the entity memory (the memory stream and the entity knowledge store of each user).

The facts themselves are kept by a :class:`~auto_analyst.memory.facts.graph.base.GraphStore` (a Protocol too, next
to its engines, which subclass it to share the walk). Implemented by :class:`~auto_analyst.memory.facts.entities.EntityMemory` over
every graph engine; ``tests/memory/test_contracts.py`` runs one suite against each.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import datetime
from typing import Protocol, runtime_checkable

from auto_analyst.memory.facts.entities import EntityScore, StreamRow

__all__ = ["EntityPort"]


@runtime_checkable
class EntityPort(Protocol):
    """Mentions of entities (columns, values, methods, tables) per user, ranked by count and recency."""

    def record(self, user: str, session: str, entities: Iterable[tuple[str, str]], at: datetime | None = None) -> int:
        """Add one mention of each (name, kind); returns the mentions added (ValueError on an unknown kind)."""

    def top(self, user: str, n: int = 10, now: datetime | None = None,
            kinds: Sequence[str] | None = None) -> list[EntityScore]:
        """The ``n`` highest-scoring entities (recency-weighted count), best first."""

    def stream(self, user: str, limit: int = 50) -> list[StreamRow]:
        """The most recent ``limit`` mentions, newest first."""

    def forget_session(self, user: str, session: str) -> int:
        """Delete a session's mentions and recount."""

    def forget_user(self, user: str) -> int:
        """Delete the user's stream and knowledge store."""
