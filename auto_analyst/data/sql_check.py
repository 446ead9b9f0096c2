"""Is a query one read-only statement? Checked by parsing it with sqlglot, before it reaches a database.

A query from a model (or a user) runs against the team's database only when sqlglot reads it, in the
database's dialect, as exactly one ``SELECT`` (or ``WITH ... SELECT``, or a ``UNION`` of them) with nothing
in it that writes or reaches outside the query: no ``INSERT``/``UPDATE``/``DELETE``/``MERGE`` (also not inside a
``WITH``), no DDL, no ``SELECT ... INTO``, no ``FOR UPDATE`` locks, no ``COPY``, ``PRAGMA``, ``SET``, ``ATTACH``,
transaction control or statements sqlglot can only keep as an opaque command, none of the functions in
:data:`FORBIDDEN_FUNCTIONS` (functions that run a string as SQL, server files, other connections, settings,
sequences, sleeping), no statement given as a string to a function sqlglot does not know, and, when the source's
tables are given, no table but those (and the query's own ``WITH`` names): DuckDB reads ``FROM '/any/path.csv'``.

This is the first of two walls: the connection itself is read-only too (a ``READ ONLY`` transaction on
PostgreSQL, ``PRAGMA query_only`` on SQLite, a read-only DuckDB file; see ``data/sql_source.py``), so a
statement this check let through still cannot change anything.
"""

from __future__ import annotations

import logging
import re

from auto_analyst.errors import BadInputError

__all__ = ["FORBIDDEN_FUNCTIONS", "TABLE_FUNCTIONS", "SqlRefused", "sqlglot_dialect", "check_read_only"]

FORBIDDEN_FUNCTIONS = re.compile(
    r"^(pg_(read|ls|stat_file|sleep|terminate|cancel|reload|promote|advisory|notify|logical|replication|create|drop|"
    r"switch|backup|start|stop|rotate|file|import|export|current_logfile|get_keywords|log|wal|walfile|visible|"
    r"catalog|signal|stat_reset|truncate|sequence)\w*|"
    r"\w*_to_xml\w*|\w*xmlschema\w*|cursor_to_\w+|"  # query_to_xml & co run a string (or a cursor) as SQL
    r"lo_\w+|\w*dblink\w*|\w*postgres_fdw\w*|set_config|current_setting|nextval|setval|currval|txid_\w+|"
    r"query|query_table|read_\w+|\w+_scan|glob|sniff_csv|load_extension|readfile|writefile|edit|fts\w*|"
    r"copy\w*|export\w*|import\w*|sys_\w+|xp_\w+|sp_\w+|load_file|sleep|benchmark|getenv|"
    r"parquet_\w+|iceberg_\w+|delta_\w+|json_execute_serialized_sql|json_deserialize_sql|json_serialize_sql|"
    r"sql_auto_complete|which_secret|duckdb_secrets|duckdb_settings|duckdb_extensions|install\w*|load|"
    r"checkpoint|force_checkpoint|pragma_\w+|execute\w*|exec|eval|shell\w*)$", re.I)
"""Function names a read-only question never needs: files and directories of the server, other connections
(``dblink*``), settings (``set_config``, ``current_setting``, ``getenv``), sequences (``nextval`` writes),
sleeping, DuckDB's file readers, secrets and ``query()``, and every function that runs a string as SQL
(PostgreSQL's ``query_to_xml`` family, ``cursor_to_xml``, ``table_to_xml``...): what such a string does is not
seen by this check, so the function is refused whatever the string holds."""

TABLE_FUNCTIONS = frozenset({"generate_series", "exploding_generate_series", "range", "unnest", "explode",
                             "generate_subscripts", "values"})
"""Table-valued functions a query may read FROM when the source's tables are given (numbers and arrays only);
every other function in a FROM (file readers, catalog and settings functions) is refused."""

_SQL_TEXT = re.compile(r"^\s*\(?\s*(select|with|insert|update|delete|merge|copy|call|do|create|drop|alter|truncate|"
                       r"grant|revoke|execute|vacuum|set|attach|detach|pragma|install|load|prepare|table|values)\b",
                       re.I)
"""The first word of a SQL statement: a string argument that starts with one and parses as SQL is SQL text."""

_DIALECTS = {"postgresql": "postgres", "postgres": "postgres", "sqlite": "sqlite", "duckdb": "duckdb",
             "mysql": "mysql", "mariadb": "mysql", "mssql": "tsql", "oracle": "oracle", "snowflake": "snowflake",
             "bigquery": "bigquery", "redshift": "redshift", "trino": "trino", "clickhouse": "clickhouse"}


class SqlRefused(BadInputError):
    """A query that is not one read-only statement; its message says what was wrong and what to write instead."""

    kind = "bad_input"


def sqlglot_dialect(name: str) -> str:
    """sqlglot's name of a SQLAlchemy dialect name (``postgresql`` → ``postgres``; unknown names as they are)."""
    return _DIALECTS.get(str(name).lower().split("+")[0], str(name).lower())


def check_read_only(query: str, dialect: str, tables: "list[str] | set[str] | None" = None,
                    schemas: "tuple[str, ...]" = ()) -> str:
    """The query, if it is one read-only statement in ``dialect`` (sqlglot's name); trailing ``;`` dropped.

    Args:
        query: the SQL text.
        dialect: sqlglot's dialect name.
        tables: the source's own tables (its catalog). When given, every table the query reads must be one of them
            (case-insensitive) or a CTE defined in the query, and a FROM may call only :data:`TABLE_FUNCTIONS`: a
            string written as a table (DuckDB reads ``FROM '/any/file.csv'``), a path-like name, another schema or
            catalog are refused. None: no table check (a database whose table list is not known).
        schemas: the schema names a table may be qualified with (the source's default schema: ``public``,
            ``main``); any other qualifier is refused when ``tables`` is given.

    Raises:
        SqlRefused: the query is empty, does not parse, is several statements, or writes, locks, changes settings,
            calls a forbidden function, passes SQL text to a function, or reads a table that is not the source's
            (the message names which).
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
                                 "settings or other connections of the server, runs SQL text, or writes); use plain "
                                 "SELECT SQL.")
            # a function sqlglot does not know (an extension's, a server's) given a statement as a string may run it
            for arg in (node.iter_expressions() if isinstance(node, exp.Anonymous) else ()):
                if isinstance(arg, exp.Literal) and arg.is_string and _is_sql_text(str(arg.this), dialect):
                    raise SqlRefused(f"The function {str(name).lower()}() is given SQL text as a string; a query may "
                                     "not run SQL from a string. Write the SELECT itself.")
    if tables is not None:
        _check_tables(root, tables, schemas)
    return text.rstrip().rstrip(";").rstrip()


def _is_sql_text(value: str, dialect: str) -> bool:
    """Whether a string literal is a SQL statement (starts with a statement's first word and parses as SQL)."""
    if not _SQL_TEXT.match(value) or len(value.split()) < 2:
        return False
    import sqlglot
    from sqlglot import exp

    level = logging.getLogger("sqlglot").level
    logging.getLogger("sqlglot").setLevel(logging.ERROR)  # its "falling back to Command" warning is not news here
    try:
        return any(s is not None and not isinstance(s, exp.Command)
                   for s in sqlglot.parse(value, read=dialect, error_level=sqlglot.ErrorLevel.RAISE))
    except Exception:  # noqa: BLE001 - not SQL: an ordinary string value
        return False
    finally:
        logging.getLogger("sqlglot").setLevel(level)


def _check_tables(root, tables, schemas) -> None:
    """Refuse a table the source does not have (see :func:`check_read_only`'s ``tables``)."""
    from sqlglot import exp

    known = {str(t).lower() for t in tables}
    allowed_schemas = {str(s).lower() for s in schemas if s}
    ctes = {str(c.alias_or_name).lower() for c in root.find_all(exp.CTE)}
    listed = ", ".join(sorted(tables)) or "none"
    for node in root.find_all(exp.Table):
        target = node.this
        if isinstance(target, exp.Func):
            fname = (target.name if isinstance(target, exp.Anonymous) else target.sql_name()) or ""
            if str(fname).lower() in TABLE_FUNCTIONS and not node.args.get("db") and not node.args.get("catalog"):
                continue
            raise SqlRefused(f"A query reads only the database's tables, not the function {str(fname).lower()}() "
                             f"in FROM; the tables are: {listed}.")
        name = str(node.name or "")
        qualifiers = [str(q).lower() for q in (node.catalog, node.db) if q]
        if qualifiers and not (len(qualifiers) == 1 and qualifiers[0] in allowed_schemas):
            raise SqlRefused(f"The table {'.'.join([*qualifiers, name])!r} is not one of the database's tables; a "
                             f"query reads only these: {listed}.")
        if name.lower() in known or (not qualifiers and name.lower() in ctes):
            continue
        raise SqlRefused(f"{name!r} is not one of the database's tables (a query reads only the source's own "
                         f"tables, never a file or another database); the tables are: {listed}.")


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
