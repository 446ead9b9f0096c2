"""Auto-Analyst: ask a table questions in plain language; get answers from code that really ran.

Importing this package does no I/O and imports no heavy dependency: names are resolved lazily.

Example:
    >>> from auto_analyst import Analyst
    >>> session = Analyst().session()            # offline model unless a model is configured
    >>> session.load("datasets/iris.csv")
    >>> print(session.ask("What is the mean petal_length by species?").answer)
"""

from __future__ import annotations

__all__ = ["Analyst", "Session", "Settings", "Result", "load", "load_all", "AutoAnalystError"]
__version__ = "0.1.0"

_LAZY = {
    "Analyst": "auto_analyst.api",
    "Session": "auto_analyst.api",
    "Settings": "auto_analyst.config",
    "Result": "auto_analyst.results",
    "load": "auto_analyst.data.load",
    "load_all": "auto_analyst.data.load",
    "AutoAnalystError": "auto_analyst.errors",
}


def __getattr__(name: str):
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'auto_analyst' has no attribute {name!r}")
