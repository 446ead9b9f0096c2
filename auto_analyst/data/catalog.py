"""The description of a whole session: every table (pandas, DuckDB, SQL), the keys linking them, the dictionary.

:func:`describe_session` is what ``Session.description`` is: each table described where it lives
(``describe_all``: pandas frames, DuckDB files, database tables from their catalog and sample), then

* ``relationships``: the keys the tables share, checked on their values (``data/relations.py``; big and remote
  tables on their first rows) plus the foreign keys a database declares;
* each column's ``meaning``: from the database's column comment, or the data dictionary's line about it;
* ``source``: for tables in a database, its dialect, the tables that live there (session names; ``names`` maps a
  session name to the database's name where they differ) and the row cap of ``sql()``.

:func:`for_question` adds the dictionary's passages the question is about (all of it when short).
"""

from __future__ import annotations

from typing import Any, Mapping

import pandas as pd

from auto_analyst.data.description import DatasetDescription
from auto_analyst.data.duck import describe_all, is_duck
from auto_analyst.data.relations import detect_relationships
from auto_analyst.data.sql_source import declared_relationships, is_sql

__all__ = ["describe_session", "for_question"]


def describe_session(tables: Mapping[str, Any], active: str, dictionary: Any = None) -> DatasetDescription:
    """The session's description (see the module docstring); ``dictionary`` a ``data.dictionary.DataDictionary``."""
    desc = describe_all(tables, active)
    if len(tables) > 1:
        frames: dict[str, pd.DataFrame] = {}
        sampled = []
        for name, t in tables.items():
            if is_duck(t) or is_sql(t):
                frames[name] = t.frame.sample()
                if len(frames[name]) < len(t.frame):  # a sample of the first rows, not the whole table
                    sampled.append(name)
            else:
                frames[name] = getattr(t, "frame", t)  # a LoadedTable, or a DataFrame given as it is
        desc.relationships = detect_relationships(frames, sampled, declared_relationships(dict(tables)))
    sql_tables = [n for n, t in tables.items() if is_sql(t)]
    if sql_tables:
        source = tables[sql_tables[0]].source
        desc.source = {"kind": "sql", "dialect": source.dialect, "database": source.safe_url, "tables": sql_tables,
                       "max_rows": source.max_rows, "timeout_s": source.timeout_s}
        # a session name is a Python name ('order items' is order_items in the session); SQL needs the database's
        names = {n: tables[n].table for n in sql_tables if tables[n].table and tables[n].table != n}
        if names:
            desc.source["names"] = names
    if dictionary is not None:
        dictionary.annotate(desc)
    return desc


def for_question(desc: DatasetDescription, question: str, dictionary: Any = None) -> DatasetDescription:
    """``desc`` with the dictionary's passages for ``question`` (a copy; ``desc`` is kept as it is)."""
    if dictionary is None:
        return desc
    return desc.model_copy(update={"dictionary": dictionary.passages(question, desc)})
