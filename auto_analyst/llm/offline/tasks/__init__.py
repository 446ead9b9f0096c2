"""Task plugins of the offline model: statistics tests, models and other tasks beyond aggregates and charts.

A plugin is a module object with:

- ``KEYWORDS``: a compiled regex over normalised question text; the words it matches are the plugin's
  (the parser consumes them and calls the plugin).
- ``recognize(pieces, spec, table) -> bool``: fill ``spec`` (``task`` = the plugin's name, columns,
  ``options``) from the parser's pieces; False when the words were found but the question does not fit
  (add a sentence to ``spec.problems`` to decline with a reason).
- ``to_text(spec) -> str``: the canonical text that ``recognize`` reads back to the same spec.
- ``code(spec, i) -> dict[role, code]``: the code of each analyst role for part ``i``; read ``data_{i}``
  (made by preprocessing, or ``spec.table`` itself) and call ``show(value, name=...)`` for each result.

Plugins are listed in :data:`PLUGINS` by name; order matters when two plugins' words are found.
"""

from __future__ import annotations

import importlib
from typing import Any

__all__ = ["PLUGINS"]

_MODULES: list[str] = ["derive", "regression", "tests", "outliers", "ml"]


class _Registry(dict):
    """Loads plugin modules on first use (keeps ``import auto_analyst`` cheap)."""

    def _load(self) -> None:
        if not self and _MODULES:
            for mod in _MODULES:
                m = importlib.import_module(f"auto_analyst.llm.offline.tasks.{mod}")
                for name in getattr(m, "NAMES", [mod]):
                    dict.__setitem__(self, name, m)

    def __getitem__(self, k: str) -> Any:
        self._load()
        return dict.__getitem__(self, k)

    def __contains__(self, k: object) -> bool:
        self._load()
        return dict.__contains__(self, k)

    def get(self, k: str, default: Any = None) -> Any:
        self._load()
        return dict.get(self, k, default)

    def items(self):
        self._load()
        return dict.items(self)


PLUGINS: _Registry = _Registry()
