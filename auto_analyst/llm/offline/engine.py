"""Old import path of :mod:`auto_analyst.offline.engine` (the package moved; see ``auto_analyst/llm/offline/__init__.py``)."""

from auto_analyst.offline.engine import OfflineEngine, OfflineLM, offline_lm

__all__ = ["OfflineEngine", "OfflineLM", "offline_lm"]
