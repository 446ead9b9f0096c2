"""Optional dependencies: which extra of ``setup.cfg`` installs a module, and the one sentence said when it is missing.

A setting or command that needs an optional package imports it through :func:`require` at the moment it is
needed, so a missing package becomes a :class:`MissingExtraError` (a ``bad_input``: exit code 2, HTTP 400)
naming what needed it and the extra to install, instead of "No module named 'psycopg'". :func:`explain`
turns a ``ModuleNotFoundError`` raised anywhere else (a library importing its driver late) into the same
sentence; the CLI's failure path applies it to whatever a command raised.
"""

from __future__ import annotations

import importlib
from types import ModuleType

from auto_analyst.errors import BadInputError

__all__ = ["EXTRAS", "MissingExtraError", "require", "explain", "install_hint"]

EXTRAS: dict[str, tuple[str, str]] = {
    # import name: (extra of setup.cfg, what in Auto-Analyst uses it)
    "psycopg": ("scale", "a PostgreSQL database (database_url, or a postgresql:// source)"),
    "redis": ("scale", "queue_url (the Redis run queue)"),
    "rq": ("scale", "queue_url (the Redis run queue)"),
    "gunicorn": ("scale", "serve --processes above 1"),
    "duckdb": ("scale", "duckdb_min_mb (big files in DuckDB)"),
    "duckdb_engine": ("scale", "a DuckDB file as a source (duckdb:///file.duckdb)"),
    "kuzu": ("graph", "graph_url kuzu:PATH"),
    "neo4j": ("graph", "graph_url bolt:// or neo4j://"),
    "falkordb": ("graph", "graph_url falkor://"),
    "nbconvert": ("notebook", "running the notebooks"),
    "ipykernel": ("notebook", "running the notebooks"),
    "playwright": ("test", "the browser tests"),
}
"""Every module an extra of setup.cfg provides that the package or its tests import (tests/test_extras.py checks
that each extra's packages are here)."""


class MissingExtraError(BadInputError):
    """A setting or command needs a package of an extra that is not installed (exit code 2).

    Attributes:
        module: the import name that is missing; extra: the extra of setup.cfg that installs it.
    """

    def __init__(self, message: str, module: str, extra: str):
        super().__init__(message)
        self.module, self.extra = module, extra


def install_hint(extra: str) -> str:
    """``pip install 'auto-analyst[EXTRA]'`` (and the form for a checkout)."""
    return f"pip install 'auto-analyst[{extra}]' (in a checkout: pip install -e \".[{extra}]\")"


def _error(module: str, needed_for: str | None = None) -> MissingExtraError:
    extra, use = EXTRAS[module]
    return MissingExtraError(f"{needed_for or use} needs the {module} package of the [{extra}] extra, which is not "
                             f"installed: {install_hint(extra)}.", module, extra)


def require(module: str, needed_for: str | None = None) -> ModuleType:
    """Import ``module`` (a key of :data:`EXTRAS`, or a submodule of one) and return it.

    Args:
        module: e.g. ``"psycopg"`` or ``"gunicorn.app.base"``.
        needed_for: what needs it, said first in the sentence (default: the use listed in :data:`EXTRAS`).

    Raises:
        MissingExtraError: the package is not installed.
    """
    try:
        return importlib.import_module(module)
    except ModuleNotFoundError as exc:
        err = explain(exc, needed_for)
        if err is None:
            raise
        raise err from None


def explain(exc: BaseException, needed_for: str | None = None) -> MissingExtraError | None:
    """The :class:`MissingExtraError` for ``exc`` when it (or its cause) is a ``ModuleNotFoundError`` of a module
    of :data:`EXTRAS`; None otherwise."""
    seen = 0
    while exc is not None and seen < 5:
        if isinstance(exc, MissingExtraError):
            return exc
        if isinstance(exc, ModuleNotFoundError) and exc.name:
            root = exc.name.split(".")[0]
            if root in EXTRAS:
                return _error(root, needed_for)
        exc, seen = exc.__cause__ or exc.__context__, seen + 1
    return None
