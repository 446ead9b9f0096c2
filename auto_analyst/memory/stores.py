"""The stores of one Analyst under ``AUTO_ANALYST_HOME``: history, the graph (memory stream, entity store and
facts), entities (a view of the graph), profiles, error-fix memory.

Each is opened on first use (chromadb behind the error-fix memory loads only then). This is the
seam a storage backend replaces: everything above reaches the stores through the attributes
of :class:`MemoryStores`, each typed by its contract (``users/protocols.py``, ``facts/protocols.py``,
``facts/graph/base.py``, ``errorfix/protocols.py``; see docs/architecture.md, "How to add a storage backend").
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from auto_analyst.config import Settings

if TYPE_CHECKING:
    from auto_analyst.memory.errorfix.protocols import ErrorFixPort
    from auto_analyst.memory.facts.graph.base import GraphStore
    from auto_analyst.memory.facts.protocols import EntityPort
    from auto_analyst.memory.users.protocols import HistoryPort, ProfilePort

__all__ = ["MemoryStores", "STORES", "Opener"]

Opener = Callable[[Settings], Any]
"""Builds one store from the settings (each opener imports its backend only when called)."""


def _history(settings: Settings) -> HistoryPort:
    from auto_analyst.memory.users.history import History

    return History(settings)


def _graph(settings: Settings) -> GraphStore:
    from auto_analyst.memory.facts.graph import open_graph

    return open_graph(settings)


def _entities(settings: Settings) -> EntityPort:
    from auto_analyst.memory.facts.entities import EntityMemory

    return EntityMemory(settings)


def _profiles(settings: Settings) -> ProfilePort:
    from auto_analyst.memory.users.profile import ProfileStore

    return ProfileStore(settings)


def _errors(settings: Settings) -> ErrorFixPort:
    from auto_analyst.memory.errorfix.memory import ErrorMemory

    return ErrorMemory(settings)


STORES: Mapping[str, Opener] = {
    "history": _history,
    "graph": _graph,
    "entities": _entities,
    "profiles": _profiles,
    "errors": _errors,
}
"""Attribute → the opener of the store behind it (the backend follows the settings: ``database_url``,
``graph_url``, ``chroma_url``)."""


class MemoryStores:
    """The stores for every session of an Analyst, each opened once, on first use (under a lock);
    :meth:`close` releases the error-fix memory.

    Args:
        settings: what every opener is built with.
        openers: replace the opener of some stores (same keys as :data:`STORES`; tests, other backends).

    Raises:
        ValueError: ``openers`` names a store that does not exist.
    """

    history: HistoryPort
    graph: GraphStore
    entities: EntityPort
    profiles: ProfilePort
    errors: ErrorFixPort

    def __init__(self, settings: Settings, openers: Mapping[str, Opener] | None = None):
        unknown = sorted(set(openers or {}) - set(STORES))
        if unknown:
            raise ValueError(f"No store named {', '.join(unknown)}; the stores are {', '.join(STORES)}.")
        self.settings = settings
        self._openers: dict[str, Opener] = {**STORES, **(openers or {})}
        self._lock = threading.Lock()

    def __getattr__(self, name: str) -> Any:  # only called for a store not opened yet
        if name.startswith("_") or name not in STORES:
            raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")
        with self._lock:
            if name not in self.__dict__:
                self.__dict__[name] = self._openers[name](self.settings)
        return self.__dict__[name]

    def close(self) -> None:
        if "errors" in self.__dict__:  # opened
            self.errors.close()
