"""Task plugins of the offline model: statistical tests, regression, models, outliers, new columns, changes between
two periods.

A plugin is a module with:

- ``NAMES``: the task names it fills (``spec.task``); ``TITLE``: what it does, in a few words;
- ``KEYWORDS``: a compiled regex over normalised question text: the words the plugin reads;
- ``claim(pieces, table) -> int``: how strongly the part is the plugin's: 0 not at all, 1 weakly
  (a word other tasks use too), 2 a task word ('outliers', 'predict'), 3 a method named ('t-test',
  'k-means', 'OLS'). The reader picks the strongest claim; a tie declines, and so does a losing
  claim of 2 or more (two tasks asked in one part). A plugin never names another plugin;
- ``recognize(pieces, spec, table) -> bool``: fill ``spec`` (``task``, columns, ``options``); False when
  the part does not fit after all; a sentence in ``spec.problems`` declines with a reason;
- ``TEMPLATES`` (canonical wordings, :class:`~auto_analyst.offline.canonical.Template`),
  ``to_text(spec) -> str`` and ``parse(text, table) -> QuerySpec | None``: the canonical text and its
  strict reading;
- ``code(spec, i) -> dict[role, code]``: the code of each analyst role for part ``i``; it reads
  ``data_{i}`` and calls ``show(value, name=...)`` for each result; ``labels(spec)`` (optional) the
  names of the single values it shows;
- ``RESERVED`` (optional): a regex of spans read before any column (a new column's name).
"""

from __future__ import annotations

import importlib
from types import ModuleType
from typing import Any

__all__ = ["PLUGINS", "claims", "reserved_spans"]

_MODULES: list[str] = ["new_columns", "ols_regression", "hypothesis_tests", "outliers", "models", "changes"]


class _Registry(dict):
    """Task name → plugin module, loaded on first use (keeps ``import auto_analyst`` cheap)."""

    def _load(self) -> None:
        if not self and _MODULES:
            for mod in _MODULES:
                m = importlib.import_module(f"auto_analyst.offline.tasks.{mod}")
                for name in m.NAMES:
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

    def names(self) -> list[str]:
        self._load()
        return list(self)

    def modules(self) -> list[ModuleType]:
        self._load()
        return list(dict.fromkeys(self.values()))


PLUGINS: _Registry = _Registry()


def claims(pieces, table) -> list[tuple[str, int]]:
    """(task name, strength) of every plugin claiming the part, strongest first."""
    out = []
    for name, plugin in PLUGINS.items():
        if name not in pieces.keywords:
            continue
        strength = int(plugin.claim(pieces, table))
        if strength > 0:
            out.append((name, strength))
    return sorted(out, key=lambda ns: -ns[1])


def reserved_spans(text: str) -> list[tuple[str, int, int]]:
    """(task name, start, end) of the spans of ``text`` a plugin reads before any column (a new column's name)."""
    spans = []
    for plugin in PLUGINS.modules():
        if hasattr(plugin, "active") and not plugin.active(text):
            continue
        pattern = getattr(plugin, "RESERVED", None)
        if pattern is not None:
            spans += [(plugin.NAMES[0], *m.span()) for m in pattern.finditer(text)]
    return spans
