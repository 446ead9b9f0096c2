"""Declining a script its model should not have written: pandas code on a table that is not in pandas.

The pipeline reads the LM's :class:`~auto_analyst.llm.capabilities.Capabilities` once per session and asks
:func:`sql_decline` before it runs a script. A model without ``writes_duckdb_sql`` (or ``writes_sql``) writes
pandas only; its pandas code would fail on a DuckDB relation or a database table, or run with other
semantics, and loading the table into pandas is what DuckDB and the SQL source are there to avoid.
"""

from __future__ import annotations

from collections.abc import Sequence

from auto_analyst.agents.merge import names_read
from auto_analyst.llm.capabilities import Capabilities

__all__ = ["sql_decline"]

_USE_A_MODEL = "Use a language model (--model openai/gpt-4o-mini, or any model LiteLLM supports)"


def sql_decline(caps: Capabilities, code: str, duckdb_tables: Sequence[str], active: str,
                database_tables: Sequence[str] = ()) -> str:
    """The sentence to decline with when a model that writes only pandas wrote a script reading a DuckDB or SQL
    database table (its variable, ``tables['name']``, or ``df`` when the active table is one); else ''.

    Args:
        caps: the session's LM's capabilities (``writes_sql``, ``writes_duckdb_sql``; only an ``offline`` model
            is declined: other models are told the contract in the prompt instead).
        code: the script the model wrote.
        duckdb_tables: the session's DuckDB tables; ``active`` the table bound to ``df``.
        database_tables: the session's tables in a SQL database (read with ``sql("SELECT ...")``).
    """
    if not caps.offline:
        return ""
    if database_tables and not caps.writes_sql:
        read = _tables_read(code, database_tables, active)
        if read:
            return (f"The embedded offline model cannot answer this yet: {read} is a table of a SQL database (read "
                    f"in the database, never loaded whole) and the offline model writes only pandas code. "
                    f"{_USE_A_MODEL}.")
    if not duckdb_tables or caps.writes_duckdb_sql:
        return ""
    read = _tables_read(code, duckdb_tables, active)
    if not read:
        return ""
    return (f"The embedded offline model cannot answer this yet: {read} is a DuckDB table (its file is at least "
            "duckdb_min_mb MiB, so it is not loaded into pandas) and the offline model writes only pandas code. "
            f"{_USE_A_MODEL}, or set duckdb_min_mb higher (0 = off) to load the file with pandas.")


def _tables_read(code: str, tables: Sequence[str], active: str) -> str:
    """Which of ``tables`` the script reads, comma-separated ('' for none)."""
    names = names_read(code)
    read = [t for t in tables if t in names] + ([active] if "df" in names and active in tables else [])
    return ", ".join(dict.fromkeys(read))
