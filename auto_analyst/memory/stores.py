"""The stores of one Analyst under ``AUTO_ANALYST_HOME``: history, entities, profiles, error-fix memory.

Each is opened on first use (chromadb behind the error-fix memory loads only then). This is the
seam a storage backend replaces: everything above reaches the stores through :class:`MemoryStores`.
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING

from auto_analyst.config import Settings

if TYPE_CHECKING:
    from auto_analyst.memory.entities import EntityMemory
    from auto_analyst.memory.error_memory import ErrorMemory
    from auto_analyst.memory.history import History
    from auto_analyst.memory.profile import ProfileStore

__all__ = ["MemoryStores"]


class MemoryStores:
    """The stores for every session of an Analyst, opened lazily; :meth:`close` releases the error-fix memory."""

    def __init__(self, settings: Settings):
        self.settings = settings
        self._lock = threading.Lock()
        self._history = self._entities = self._profiles = self._errors = None

    @property
    def history(self) -> History:
        if self._history is None:
            from auto_analyst.memory.history import History

            self._history = History(self.settings)
        return self._history

    @property
    def entities(self) -> EntityMemory:
        if self._entities is None:
            from auto_analyst.memory.entities import EntityMemory

            self._entities = EntityMemory(self.settings)
        return self._entities

    @property
    def profiles(self) -> ProfileStore:
        if self._profiles is None:
            from auto_analyst.memory.profile import ProfileStore

            self._profiles = ProfileStore(self.settings)
        return self._profiles

    @property
    def errors(self) -> ErrorMemory:
        with self._lock:
            if self._errors is None:
                from auto_analyst.memory.error_memory import ErrorMemory

                self._errors = ErrorMemory(self.settings)
            return self._errors

    def close(self) -> None:
        if self._errors is not None:
            self._errors.close()
