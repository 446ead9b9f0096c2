"""What a generated script runs with, as data for the code-writing prompts (the ``environment`` input field).

The wording of the contract (what ``show()`` accepts, what is pre-imported, that warnings are not
results) is the field's description in :mod:`auto_analyst.agents.signatures`; this module only gives
the values: the names the sandbox binds before a script runs (``execution.capture.new_namespace``
plus one variable per table) and the versions of the analysis libraries, read from the installed
distributions at run time (the worker runs the same interpreter and site-packages).

Example:
    >>> env = json.loads(script_environment(["sales"], "sales"))
    >>> sorted(env["preloaded"])[:3]
    ['df', 'np', 'pd']
"""

from __future__ import annotations

import json
import keyword
from collections.abc import Iterable
from functools import lru_cache
from importlib import metadata

__all__ = ["LIBRARIES", "PRELOADED", "library_versions", "script_environment"]

LIBRARIES = ("pandas", "numpy", "scikit-learn", "statsmodels", "scipy", "plotly", "seaborn", "matplotlib")
"""The distributions whose versions every code-writing prompt states (the libraries the analysts use)."""

PRELOADED = ("pd", "np", "show", "df", "tables")
"""Names the sandbox binds in every script besides the tables (``execution.capture.new_namespace``)."""


@lru_cache(maxsize=1)
def library_versions() -> dict[str, str]:
    """Distribution name → installed version ('not installed' when missing), e.g. ``{"pandas": "3.1.1", ...}``."""
    out = {}
    for name in LIBRARIES:
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            out[name] = "not installed"
    return out


def script_environment(tables: Iterable[str], active: str) -> str:
    """The ``environment`` input of the analysts, the combiner and the fixer, as JSON.

    Args:
        tables: the session's table names (each is a DataFrame variable of that name when it is an identifier).
        active: the table bound to ``df``.

    Returns:
        ``{"preloaded": {name: what it is}, "installed": {distribution: version}}``.
    """
    versions = library_versions()
    preloaded = {
        "pd": f"pandas {versions['pandas']}",
        "np": f"numpy {versions['numpy']}",
        "show": "show(obj, name=None, title=None)",
        "df": f"DataFrame: the active table {active!r}" if active else "DataFrame: the active table",
        "tables": "dict: table name -> DataFrame",
    }
    for name in tables:
        if name.isidentifier() and not keyword.iskeyword(name) and name not in PRELOADED:
            preloaded[name] = "DataFrame (a table)"
    return json.dumps({"preloaded": preloaded, "installed": versions}, ensure_ascii=False)
