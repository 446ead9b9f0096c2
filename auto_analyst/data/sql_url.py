"""What of a database URL may be shown, and whether a DuckDB file's views read files (``data/sql_source.py``)."""

from __future__ import annotations

import re
from typing import Any

from auto_analyst.errors import DataLoadError

__all__ = ["SAFE_QUERY_PARAMETERS", "safe_url", "secrets", "reads_files"]

SAFE_QUERY_PARAMETERS = frozenset({"sslmode", "host", "port", "connect_timeout", "application_name",
                                   "target_session_attrs", "gssencmode", "mode", "read_only", "charset", "options"})
"""URL query parameters :attr:`SqlSource.safe_url` keeps (how to reach the database, never a secret); every other
one (``password``, ``sslpassword``, ``motherduck_token``, any driver's key) is dropped. ``options`` holds
server settings (``-csearch_path=...``), kept so that a resumed session reaches the same tables."""


def safe_url(url: Any) -> str:
    """The URL as shown anywhere (messages, history, titles): no password, and of its query string only the
    :data:`SAFE_QUERY_PARAMETERS` (a token or password may be a query parameter)."""
    kept = {k: v for k, v in url.query.items() if k.lower() in SAFE_QUERY_PARAMETERS}
    return url._replace(password=None).set(query=kept).render_as_string(hide_password=True)  # set() keeps a password


def secrets(url: Any) -> tuple[str, ...]:
    """The URL's secret strings (password, values of the query parameters not kept), longest first."""
    values = [str(url.password or "")]
    for k, v in url.query.items():
        if k.lower() not in SAFE_QUERY_PARAMETERS:
            values += [str(x) for x in (v if isinstance(v, tuple) else (v,))]
    return tuple(sorted({v for v in values if len(v) >= 3}, key=len, reverse=True))


def reads_files(db_file: str) -> bool:
    """Whether a DuckDB file has a view that reads files when queried (a Parquet folder's ``read_parquet`` view)."""
    try:
        import duckdb

        con = duckdb.connect(db_file, read_only=True)
        try:
            rows = con.execute("SELECT sql FROM duckdb_views() WHERE NOT internal").fetchall()
        finally:
            con.close()
    except Exception:  # noqa: BLE001 - unreadable now (a writer holds it): keep access; the table rule still guards
        return True
    return any(_READS_FILES.search(str(r[0] or "")) for r in rows)


_READS_FILES = re.compile(r"\w+\s*\(\s*'|\bFROM\s+'|\bJOIN\s+'", re.I)
"""A view reading files: a function called with a string (``read_parquet('...')``) or a string as a table."""


_SCHEMES = ("postgresql", "postgres", "sqlite", "duckdb", "mysql", "mariadb", "mssql", "oracle", "snowflake")


def is_sql_url(text: str) -> bool:
    """Whether ``text`` is a database URL (``scheme://...`` with a SQLAlchemy dialect's scheme)."""
    head, sep, _ = str(text).partition("://")
    return bool(sep) and head.split("+")[0].lower() in _SCHEMES


def unknown_url_scheme(text: str) -> None:
    """Refuse ``scheme://...`` whose scheme names no database we read (a typo such as ``sqlte:///shop.db``).

    Raises:
        DataLoadError: naming the scheme and the ones that work.
    """
    head, sep, _ = text.partition("://")
    if sep and head.lower() in ("http", "https", "ftp", "s3", "gs"):
        raise DataLoadError(f"'{head}://' is a web or cloud address: Auto-Analyst reads files on this machine and "
                            "databases; download the file and give its path.")
    if sep and head and head.replace("+", "").replace("-", "").isalnum() and not is_sql_url(text):
        raise DataLoadError(f"'{head}://' is not a database this reads; use one of "
                            + ", ".join(f"{s}://" for s in _SCHEMES) + " (docs/sources.md), or give a file's path.")
