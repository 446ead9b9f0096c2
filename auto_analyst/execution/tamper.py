"""Whether a script replaced a library function that later runs of its session would call.

A session's runs share one state (the variables a script creates are kept for the next run), so a
script that rebinds ``pd.Series.mean`` or ``builtins.sum`` would change every later answer of the
conversation. :func:`snapshot` holds, before a run, the entries of the analysis libraries' own
namespaces (the module dictionaries of builtins, math, statistics, numpy and pandas, and the dictionaries
of pandas' frame, series, index and group-by classes); :func:`changed` names those a
run replaced or deleted. Such a run still reports its own output, but its state is not kept (the
session goes on from the state before it: ``run.py``). Additions are not counted: libraries add
attributes lazily (``numpy`` submodules), and a new name cannot change an existing call.
"""

from __future__ import annotations

import sys
from typing import Any

__all__ = ["WATCHED_MODULES", "WATCHED_CLASSES", "snapshot", "changed"]

WATCHED_MODULES = ("builtins", "math", "statistics", "numpy", "pandas")
# The classes whose methods answers are computed with. Every entry read in a run child writes its
# object's reference count, so each page touched is copied (copy-on-write): the lists are kept short
# (about 2,000 entries, a few ms a run) rather than every class of every library.
WATCHED_CLASSES = (("pandas", ("DataFrame", "Series", "Index")), ("pandas.core.generic", ("NDFrame",)),
                   ("pandas.core.groupby", ("DataFrameGroupBy", "SeriesGroupBy", "GroupBy")),
                   ("pandas.core.base", ("IndexOpsMixin",)))
_MISSING = object()

Entry = tuple[str, Any, dict]


def snapshot() -> list[Entry]:
    """(label, namespace, a copy of it) for each watched module and class (those imported)."""
    out: list[Entry] = []
    for name in WATCHED_MODULES:
        module = sys.modules.get(name)
        if module is not None:
            out.append((name, vars(module), dict(vars(module))))
    for module_name, classes in WATCHED_CLASSES:
        module = sys.modules.get(module_name)
        for cls_name in classes:
            cls = getattr(module, cls_name, None) if module is not None else None
            if isinstance(cls, type):
                out.append((f"{module_name}.{cls_name}", cls.__dict__, dict(cls.__dict__)))
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
