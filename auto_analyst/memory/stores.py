"""The stores of one Analyst under ``AUTO_ANALYST_HOME``: history, the graph (memory stream, entity store and
facts), entities (a view of the graph), profiles, error-fix memory.

Each is opened on first use (chromadb behind the error-fix memory loads only then). This is the
seam a storage backend replaces: everything above reaches the stores through the attributes
of :class:`MemoryStores` (see docs/architecture.md, "How to add a storage backend").
"""

from __future__ import annotations

import importlib
import threading
from typing import TYPE_CHECKING, Any

from auto_analyst.config import Settings

if TYPE_CHECKING:
    from auto_analyst.memory.entities import EntityMemory
    from auto_analyst.memory.error_memory import ErrorMemory
    from auto_analyst.memory.graph.base import GraphStore
    from auto_analyst.memory.history import History
    from auto_analyst.memory.profile import ProfileStore

__all__ = ["MemoryStores", "STORES"]

STORES = {
    "history": "auto_analyst.memory.history:History",
    "graph": "auto_analyst.memory.graph:open_graph",
    "entities": "auto_analyst.memory.entities:EntityMemory",
    "profiles": "auto_analyst.memory.profile:ProfileStore",
    "errors": "auto_analyst.memory.error_memory:ErrorMemory",
}
"""Attribute → the store class (``module:Class``, built with the settings) behind it."""


class MemoryStores:
    """The stores for every session of an Analyst, each opened once, on first use (under a lock);
    :meth:`close` releases the error-fix memory."""

    history: History
    graph: GraphStore
    entities: EntityMemory
    profiles: ProfileStore
    errors: ErrorMemory

    def __init__(self, settings: Settings):
        self.settings = settings
        self._lock = threading.Lock()

    def __getattr__(self, name: str) -> Any:  # only called for a store not opened yet
        if name not in STORES:
            raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")
        with self._lock:
            if name not in self.__dict__:
                module, cls = STORES[name].split(":")
                self.__dict__[name] = getattr(importlib.import_module(module), cls)(self.settings)
        return self.__dict__[name]

    def close(self) -> None:
        if "errors" in self.__dict__:  # opened
            self.errors.close()
