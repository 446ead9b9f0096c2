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

from auto_analyst.data.duck_sql import quote

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


def script_environment(tables: Iterable[str], active: str, duckdb_tables: Iterable[str] = (),
                       sql_source: dict | None = None) -> str:
    """The ``environment`` input of the analysts, the combiner and the fixer, as JSON.

    Args:
        tables: the session's table names (each is a DataFrame variable of that name when it is an identifier).
        active: the table bound to ``df``.
        duckdb_tables: those of them that are DuckDB relations; then ``con`` (the DuckDB connection) is preloaded too.
        sql_source: the database the session reads (``DatasetDescription.source``): its tables are not variables;
            ``sql(query)`` is preloaded instead, in the database's dialect.

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
    duck = set(duckdb_tables)
    in_db = set((sql_source or {}).get("tables", []))
    for name in tables:
        if name in in_db:
            continue
        if name.isidentifier() and not keyword.iskeyword(name) and name not in PRELOADED:
            preloaded[name] = "DuckDB relation (a table too big for pandas)" if name in duck else "DataFrame (a table)"
    installed = dict(versions)
    if in_db:
        renamed = sql_source.get("names") or {}
        held = [f"{n} (named {quote(renamed[n], str(sql_source.get('dialect') or 'duckdb'))} in SQL)" if n in renamed
                else n for n in sorted(in_db)]
        preloaded["sql"] = (f"sql(query) -> DataFrame: runs one read-only SELECT in the {sql_source.get('dialect')} "
                            f"database holding the tables {', '.join(held)}, returns at most "
                            f"{int(sql_source.get('max_rows', 0)):,} rows")
        if sql_source.get("dialect") == "sqlite":  # it sums 'N/A' in a REAL column as 0; a file's reader: missing
            preloaded["sql"] += ("; SQLite keeps text such as 'N/A' in a number column as text (sum() adds it as 0, "
                                 "max() ranks it above every number): aggregate CASE WHEN typeof(col) IN ('integer', "
                                 "'real') THEN col END, the values a file's reader would read")
        if active in in_db:
            preloaded["df"] = f"not the active table: {active!r} is in the database, read it with sql()"
        preloaded["tables"] = "dict: table name -> DataFrame (the tables loaded from files; not the database's)"
    if duck:
        preloaded["con"] = "DuckDB connection (read-only) with a view of each DuckDB table under its name"
        if active in duck:
            preloaded["df"] = f"DuckDB relation: the active table {active!r}"
        try:
            installed["duckdb"] = metadata.version("duckdb")
        except metadata.PackageNotFoundError:
            installed["duckdb"] = "not installed"
    return json.dumps({"preloaded": preloaded, "installed": installed}, ensure_ascii=False)
