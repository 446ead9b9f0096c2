"""Is a query one read-only statement? Checked by parsing it with sqlglot, before it reaches a database.

A query from a model (or a user) runs against the team's database only when sqlglot reads it, in the
database's dialect, as exactly one ``SELECT`` (or ``WITH ... SELECT``, or a ``UNION`` of them) with nothing
in it that writes or reaches outside the query: no ``INSERT``/``UPDATE``/``DELETE``/``MERGE`` (also not inside a
``WITH``), no DDL, no ``SELECT ... INTO``, no ``FOR UPDATE`` locks, no ``COPY``, ``PRAGMA``, ``SET``, ``ATTACH``,
transaction control or statements sqlglot can only keep as an opaque command, and none of the functions in
:data:`FORBIDDEN_FUNCTIONS` (server files, other connections, settings, sequences, sleeping).

This is the first of two walls: the connection itself is read-only too (a ``READ ONLY`` transaction on
PostgreSQL, ``PRAGMA query_only`` on SQLite, a read-only DuckDB file; see ``data/sql_source.py``), so a
statement this check let through still cannot change anything.
"""

from __future__ import annotations

import re

from auto_analyst.errors import BadInputError

__all__ = ["FORBIDDEN_FUNCTIONS", "SqlRefused", "sqlglot_dialect", "check_read_only"]

FORBIDDEN_FUNCTIONS = re.compile(
    r"^(pg_(read|ls|stat_file|sleep|terminate|cancel|reload|promote|advisory|notify|logical|replication|create|drop|"
    r"switch|backup|start|stop|rotate|file)\w*|lo_\w+|dblink\w*|set_config|nextval|setval|currval|txid_\w+|"
    r"query|query_table|read_\w+|\w+_scan|glob|sniff_csv|load_extension|readfile|writefile|edit|fts\w*|"
    r"copy\w*|export\w*|import\w*|sys_\w+|xp_\w+|sp_\w+|load_file|sleep|benchmark)$", re.I)
"""Function names a read-only question never needs: files and directories of the server, other connections,
settings, sequences (``nextval`` writes), sleeping, DuckDB's file readers and ``query()`` (which runs a string
as SQL)."""

_DIALECTS = {"postgresql": "postgres", "postgres": "postgres", "sqlite": "sqlite", "duckdb": "duckdb",
             "mysql": "mysql", "mariadb": "mysql", "mssql": "tsql", "oracle": "oracle", "snowflake": "snowflake",
             "bigquery": "bigquery", "redshift": "redshift", "trino": "trino", "clickhouse": "clickhouse"}


class SqlRefused(BadInputError):
    """A query that is not one read-only statement; its message says what was wrong and what to write instead."""

    kind = "bad_input"


def sqlglot_dialect(name: str) -> str:
    """sqlglot's name of a SQLAlchemy dialect name (``postgresql`` → ``postgres``; unknown names as they are)."""
    return _DIALECTS.get(str(name).lower().split("+")[0], str(name).lower())


def check_read_only(query: str, dialect: str) -> str:
    """The query, if it is one read-only statement in ``dialect`` (sqlglot's name); trailing ``;`` dropped.

    Raises:
        SqlRefused: the query is empty, does not parse, is several statements, or writes, locks, changes settings
            or calls a forbidden function (the message names which).
    """
    import sqlglot
    from sqlglot import exp

    text = (query or "").strip()
    if not text:
        raise SqlRefused("The SQL query is empty; write one SELECT statement.")
    try:
        statements = [s for s in sqlglot.parse(text, read=dialect, error_level=sqlglot.ErrorLevel.RAISE) if s is not None]
    except sqlglot.errors.SqlglotError as exc:
        raise SqlRefused(f"The SQL query could not be read as {dialect} SQL ({str(exc).splitlines()[0][:200]}); "
                         "write one SELECT statement.") from None
    if len(statements) != 1:
        raise SqlRefused(f"The SQL holds {len(statements)} statements; only one SELECT statement runs at a time.")
    root = statements[0]
    if not isinstance(root, exp.Query):
        raise SqlRefused(f"Only a SELECT query runs against the database (read-only); this is "
                         f"{_what(root)} statement.")
    writes = (exp.Insert, exp.Update, exp.Delete, exp.Merge, exp.Create, exp.Drop, exp.Alter, exp.Command,
              exp.Into, exp.Lock, exp.Copy, exp.Pragma, exp.Set, exp.Transaction, exp.Commit, exp.Rollback,
              exp.Use, exp.TruncateTable, exp.Grant, exp.LoadData, exp.Attach, exp.Detach)
    for node in root.walk():
        if isinstance(node, writes):
            raise SqlRefused(f"Only a read-only SELECT runs against the database; this query contains "
                             f"{_what(node)}.")
        if isinstance(node, exp.Func):
            name = node.name if isinstance(node, exp.Anonymous) else node.sql_name()
            if FORBIDDEN_FUNCTIONS.match(str(name or "")):
                raise SqlRefused(f"The function {str(name).lower()}() is not allowed in a query (it reaches files, "
                                 "settings or other connections of the server, or writes); use plain SELECT SQL.")
    return text.rstrip().rstrip(";").rstrip()


def _what(node) -> str:
    """A statement's kind in words: 'a DELETE', 'an INSERT', 'SELECT ... INTO'."""
    from sqlglot import exp

    if isinstance(node, exp.Into):
        return "SELECT ... INTO (it creates a table)"
    if isinstance(node, exp.Lock):
        return "a row lock (FOR UPDATE/SHARE)"
    if isinstance(node, exp.Command):
        word = str(node.this or "").split()[0].upper() if node.this else "command"
        return f"a {word} command"
    word = type(node).__name__.upper().replace("TABLE", " TABLE").strip()
    return ("an " if word[:1] in "AEIOU" else "a ") + word
