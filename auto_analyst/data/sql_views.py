"""Which views of a database are one of its tables under another name (``CREATE VIEW v AS SELECT * FROM t``).

Such a view has the same columns and rows as its table; offered as a second table of the session, every column
would be in two tables and no question naming neither could be answered (nor told apart by a model). So a database
connected whole offers the table only, and its description says the view is the same rows (``sql_source``); a view
named on purpose (``connect(url, ["v"])``) is still loaded. A view that filters, joins, groups, samples, renames,
drops, replaces or computes a column is a table of its own and stays.

The definition is read by sqlglot in the database's dialect (PostgreSQL writes ``SELECT * FROM t`` back as
``SELECT t.a, t.b FROM t``: every column of the table in order is the same view).
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from typing import Any

from auto_analyst.data.sql_driver import duckdb_catalog

log = logging.getLogger(__name__)

__all__ = ["mirrored_table", "same_rows_views"]

_SELECT_ARGS = {"expressions", "from", "from_"}
"""The only parts a mirror's SELECT may have: anything else (WHERE, GROUP BY, DISTINCT, JOIN, ORDER BY, LIMIT, a
sample, a window, a CTE, and any clause sqlglot learns later) makes other rows."""
_TABLE_ARGS = {"this", "db", "catalog"}
"""The only parts its FROM table may have (a sample, an alias renaming columns, a time-travel version: other rows
or names)."""


def mirrored_table(definition: str, dialect: str, tables: Mapping[str, Sequence[str]],
                   schemas: Sequence[str] = (), view_columns: Sequence[str] | None = None) -> str | None:
    """The table a view's ``definition`` shows unchanged, or None (any other view, or a definition sqlglot cannot
    read).

    A mirror is only ``SELECT * FROM t`` with a bare star (no ``REPLACE``/``EXCLUDE``/``RENAME``, no ``COLUMNS(*)``),
    or every column of ``t`` in order (PostgreSQL's stored form), with no other clause, no sample on ``t``, and no
    column list on the view.

    Args:
        definition: the view's text from the catalog: ``CREATE VIEW ... AS SELECT ...`` or the SELECT alone.
        dialect: sqlglot's dialect name.
        tables: the database's base tables (not views) → their column names in order.
        schemas: the schemas those tables are in (a view of a table of another schema is another table's).
        view_columns: the view's columns from the catalog, in order (PostgreSQL stores ``CREATE VIEW v (a, b)``'s
            names there, not in the definition); they must be the table's.
    """
    import sqlglot
    from sqlglot import exp

    try:
        tree = sqlglot.parse_one(definition.strip().rstrip(";"), read=dialect)
    except (sqlglot.errors.SqlglotError, ValueError) as exc:
        log.debug("view definition not read (%s): %s", exc, definition[:200])
        return None
    if isinstance(tree, exp.Create) and isinstance(tree.this, exp.Schema):  # CREATE VIEW v (a, b): renamed columns
        return None
    select = tree.expression if isinstance(tree, exp.Create) else tree
    if not isinstance(select, exp.Select) or any(v for k, v in select.args.items() if k not in _SELECT_ARGS):
        return None
    source = select.args.get("from") or select.args.get("from_")
    table = source.this if source is not None else None
    if not isinstance(table, exp.Table) or any(v for k, v in table.args.items() if k not in _TABLE_ARGS):
        return None
    if table.catalog or (table.db and table.db.lower() not in {x.lower() for x in schemas}):
        return None
    name = next((t for t in tables if t.lower() == table.name.lower()), None)
    if name is None:
        return None
    if view_columns is not None and list(view_columns) != list(tables[name]):
        return None
    shown = select.expressions
    if len(shown) == 1 and isinstance(shown[0], exp.Star):
        # a bare star only: SELECT * REPLACE (x * 2 AS x) / EXCLUDE (c) / RENAME (...) changes the columns
        return name if not any(shown[0].args.values()) else None
    plain = [e for e in shown if isinstance(e, exp.Column) and not isinstance(e.this, exp.Star)]
    if len(plain) != len(shown):  # a computed, renamed or qualified-star column: another table
        return None
    return name if [c.name for c in plain] == list(tables[name]) else None


def same_rows_views(source: Any) -> dict[str, str]:
    """View → the table it shows unchanged, for a ``sql_source.SqlSource`` ({} when it has no views, or when its
    catalog cannot give the definitions: then every view is offered, as before)."""
    from sqlalchemy import exc, inspect

    views = list(getattr(source, "view_names", []))
    if not views:
        return {}
    tables = [t for t in source.table_names if t not in views]
    try:
        with source.engine.connect() as conn:
            insp = inspect(conn)
            if source.backend == "duckdb":  # duckdb-engine's inspector does not read DuckDB 2's catalog
                columns = {t: [c["name"] for c in duckdb_catalog(conn, t)[0]] for t in [*tables, *views]}
            else:
                columns = {t: [c["name"] for c in insp.get_columns(t)] for t in [*tables, *views]}
            definitions = {v: insp.get_view_definition(v) or "" for v in views}
    except (exc.SQLAlchemyError, NotImplementedError) as e:
        log.info("view definitions of %s not read (%s): every view is offered", source.safe_url, e)
        return {}
    bases = {t: columns[t] for t in tables}
    out = {v: mirrored_table(text, source.dialect, bases, source.schemas, view_columns=columns[v])
           for v, text in definitions.items()}
    return {v: t for v, t in out.items() if t}
