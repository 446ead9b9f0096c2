"""Whether a script replaced a library function that later runs of its session would call.

A session's runs share one state (the variables a script creates are kept for the next run), so a
script that rebinds ``pd.Series.mean`` or ``builtins.sum`` would change every later answer of the
conversation. :func:`snapshot` holds, before a run, the entries of the analysis libraries' own
namespaces (module dictionaries and the dictionaries of their classes); :func:`changed` names those a
run replaced or deleted. Such a run still reports its own output, but its state is not kept (the
session goes on from the state before it: ``run.py``). Additions are not counted: libraries add
attributes lazily (``numpy`` submodules), and a new name cannot change an existing call.
"""

from __future__ import annotations

import sys
from typing import Any

__all__ = ["WATCHED_MODULES", "snapshot", "changed"]

WATCHED_MODULES = ("builtins", "math", "statistics", "numpy", "pandas", "pandas.core.groupby", "pandas.core.nanops",
                   "pandas.core.frame", "pandas.core.series", "pandas.core.generic", "scipy.stats", "statsmodels.api",
                   "sklearn.metrics")
_LIBRARIES = ("pandas", "numpy", "scipy", "statsmodels", "sklearn")
_MISSING = object()

Entry = tuple[str, Any, dict]


def snapshot() -> list[Entry]:
    """(label, namespace, a copy of it) for each watched module (those imported) and each of its libraries' classes."""
    out: list[Entry] = []
    seen: set[int] = set()
    for name in WATCHED_MODULES:
        module = sys.modules.get(name)
        if module is None:
            continue
        space = vars(module)
        out.append((name, space, dict(space)))
        for key, value in list(space.items()):
            if isinstance(value, type) and id(value) not in seen \
                    and str(getattr(value, "__module__", "")).split(".")[0] in _LIBRARIES:
                seen.add(id(value))
                out.append((f"{name}.{key}", value.__dict__, dict(value.__dict__)))
    return out


def changed(before: list[Entry], most: int = 5) -> list[str]:
    """The names (at most ``most``) of entries of ``before`` that are now another object or gone."""
    out = []
    for label, space, copy in before:
        for key, value in copy.items():
            if space.get(key, _MISSING) is not value:
                out.append(f"{label}.{key}")
                if len(out) >= most:
                    return out
    return out
