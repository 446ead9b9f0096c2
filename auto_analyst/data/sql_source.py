"""A SQL database as a source of tables: described from its catalog and a bounded sample, queried read-only.

Any SQLAlchemy URL works (``postgresql://user@host/db``, ``sqlite:///file.db``, ``duckdb:///file.duckdb``); SQLite,
PostgreSQL (psycopg 3) and DuckDB files are tested. The connection lives in the server or worker process that
opened it, never in the sandbox: scripts reach the database only through ``sql("SELECT ...")``, which the host
runs on their behalf (:mod:`auto_analyst.sql_runs`).

* **Describing** (:meth:`SqlSource.describe`): column names, types and comments, primary and foreign keys from
  the catalog (SQLAlchemy's inspector), the row count from the catalog's estimate on PostgreSQL (``reltuples``)
  or ``count(*)`` elsewhere (under the statement timeout), and the values of the first :data:`SAMPLE_ROWS` rows
  (``SELECT * ... LIMIT``): never a full scan to describe. Statistics of the values are said to be of the sample.
* **Querying** (:meth:`SqlSource.query`): the text must pass ``sql_check.check_read_only`` (one SELECT); it runs in
  a read-only transaction (``SET TRANSACTION READ ONLY`` and ``statement_timeout`` on PostgreSQL, ``PRAGMA
  query_only`` on SQLite, a read-only DuckDB connection without external access), reads only the source's own
  tables, interrupted after ``sql_timeout_s`` seconds, and at most
  ``sql_max_rows`` rows come back (more is an error saying to aggregate in SQL, never a silently cut result).
* **Credentials** come from the URL or the environment (libpq's ``PGPASSWORD``/``PGPASSFILE`` for PostgreSQL):
  :attr:`SqlSource.safe_url` (no password, no query string but :data:`SAFE_QUERY_PARAMETERS`) is what history,
  session state and messages ever show; the database's own messages are scrubbed of those secrets too.
"""

from __future__ import annotations

import logging
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from auto_analyst.data.description import TableDescription, describe_frame
from auto_analyst.data.duck_sql import quote
from auto_analyst.data.relations import Relationship, relationship
from auto_analyst.data.report import ColumnReport, LoadedTable, LoadReport
from auto_analyst.data.dates import iso_text_dates
from auto_analyst.data.stand_in import FrameStandIn
from auto_analyst.data.sql_check import SqlRefused, check_read_only, sqlglot_dialect
from auto_analyst.data.sql_driver import (duckdb_catalog, first_line, interrupt, numbers_typed, sqlite_numbers,
                                         sqlite_numbers_only)
from auto_analyst.data.sqlite_text import text_readings
from auto_analyst.data.sql_url import SAFE_QUERY_PARAMETERS, safe_url
from auto_analyst.data.sql_views import same_rows_views
from auto_analyst.data.sql_url import reads_files as _reads_files
from auto_analyst.data.sql_url import secrets as _secrets
from auto_analyst.data.sql_url import is_sql_url  # noqa: F401 - re-exported (callers import it from here)
from auto_analyst.errors import BadInputError, DataLoadError

__all__ = ["SAMPLE_ROWS", "SAFE_QUERY_PARAMETERS", "safe_url", "SqlSource", "SqlFrame", "SqlTable", "SqlQueryError",
           "is_sql_url", "is_sql"]

log = logging.getLogger(__name__)

SAMPLE_ROWS = 1000
"""Rows read to describe a table's values (its first rows, ``LIMIT``): bounded whatever the table's size."""
DEFAULT_TIMEOUT_S = 30.0
DEFAULT_MAX_ROWS = 100_000
MAX_RESULT_BYTES = 200 * 1024 * 1024
"""The most memory a query's result may take (pandas' ``memory_usage(deep=True)``): the row cap alone lets one
1 GB value through (``SELECT randomblob(1000000000)``); the host holds, encodes and ships every result."""


class SqlQueryError(BadInputError):
    """The database refused or failed a query (its first line), it ran past the timeout, or returned too many rows."""


def is_sql(table: Any) -> bool:
    """Whether a session table lives in a SQL database (a :class:`SqlTable`)."""
    return isinstance(table, SqlTable)


def _engine_url(url: str):
    from sqlalchemy.engine import make_url

    u = make_url(url.replace("postgres://", "postgresql://", 1) if url.startswith("postgres://") else url)
    if u.drivername == "postgresql":
        u = u.set(drivername="postgresql+psycopg")
    return u


class SqlSource:
    """One database: its engine, dialect, tables and the read-only query path.

    Args:
        url: a SQLAlchemy URL; its password, if any, is used and never shown again.
        timeout_s: a query's wall-clock limit (seconds).
        max_rows: the most rows a query may return.

    Raises:
        DataLoadError: the URL cannot be read, its driver is missing, or the database does not answer.
    """

    def __init__(self, url: str, timeout_s: float = DEFAULT_TIMEOUT_S, max_rows: int = DEFAULT_MAX_ROWS):
        from sqlalchemy import create_engine, exc, inspect

        try:
            self.url = _engine_url(url)
        except exc.ArgumentError:
            shown = url.split('@')[-1].split('?')[0]  # neither the password nor a query string's secrets
            raise DataLoadError(f"{shown!r} is not a database URL; write it as "
                                "postgresql://user@host/db, sqlite:///file.db or duckdb:///file.duckdb.") from None
        self.safe_url = safe_url(self.url)
        self._secrets = _secrets(self.url)
        self.backend = self.url.get_backend_name()
        self.dialect = sqlglot_dialect(self.backend)
        self.timeout_s, self.max_rows = float(timeout_s), int(max_rows)
        args: dict[str, Any] = {}
        db_file = self.url.database or ""
        if self.backend in ("sqlite", "duckdb") and self.url.host:  # sqlite://shop.db: the file read as a host name
            raise DataLoadError(f"{url!r} names no file: a {self.backend} file takes three slashes, "
                                f"{self.backend}:///{self.url.host}{'/' + db_file if db_file else ''} "
                                f"(four for an absolute path: {self.backend}:////data/shop.db).")
        if self.backend in ("sqlite", "duckdb") and db_file not in ("", ":memory:") and not Path(db_file).is_file():
            # SQLite would make an empty database there: a mistyped path must not leave a file behind
            raise DataLoadError(f"No such {self.backend} database file: {db_file}; check the path.")
        if self.backend == "duckdb":
            config: dict[str, Any] = {"autoinstall_known_extensions": False, "autoload_known_extensions": False}
            if db_file not in ("", ":memory:") and not _reads_files(db_file):
                # no file, URL or other database can be read by any query; a Parquet folder's views read
                # their files at query time, so there the table allowlist of sql_check is the guard
                config["enable_external_access"] = False
            args = {"connect_args": {"read_only": True, "config": config}}
        elif self.backend == "postgresql":
            args = {"connect_args": {"connect_timeout": 10}}
        try:
            self.engine = create_engine(self.url, pool_pre_ping=True, **args)
            with self.engine.connect() as conn:
                self._inspector = inspect(conn)
                self.view_names = sorted(self._inspector.get_view_names())
                self.table_names = sorted(self._inspector.get_table_names()) + self.view_names
                try:
                    default = self._inspector.default_schema_name
                except Exception:  # noqa: BLE001 - a dialect without one: only unqualified names
                    default = None
                self.schemas = tuple(x for x in {default, {"sqlite": "main", "duckdb": "main"}.get(self.backend)} if x)
        except ModuleNotFoundError as e:
            raise DataLoadError(f"The driver for {self.backend} is not installed ({e.name}); pip install it "
                                "(PostgreSQL: pip install 'psycopg[binary]').") from None
        except exc.SQLAlchemyError as e:
            hint = " and the credentials (or PGPASSWORD)" if self.backend == "postgresql" else ""
            raise DataLoadError(f"Cannot connect to {self.safe_url}: {self._scrub(first_line(e))}; check the URL, "
                                f"that the database is running{hint}.") from None
        self.lock = threading.Lock()

    def __repr__(self) -> str:
        return f"<SqlSource {self.safe_url} ({self.dialect})>"

    def _scrub(self, message: str) -> str:
        """A database's message without the URL's password or query-string values (a driver may echo its DSN)."""
        for secret in getattr(self, "_secrets", ()):
            message = message.replace(secret, "***")
        return message

    def close(self) -> None:
        self.engine.dispose()

    # ------------------------------------------------------------ describing
    def describe(self, name: str) -> tuple[TableDescription, dict[str, Any]]:
        """The description of table ``name`` (catalog + first rows) and its catalog facts.

        Returns:
            (description, {"n_rows", "estimated", "sample", "primary_key", "foreign_keys", "comment"}).

        Raises:
            BadInputError: no such table in the database.
        """
        from sqlalchemy import inspect

        if name not in self.table_names:
            raise BadInputError(f"No table {name!r} in {self.safe_url}; tables: {', '.join(self.table_names) or 'none'}.")
        with self.engine.connect() as conn:
            if self.backend == "duckdb":  # duckdb-engine's inspector asks catalog tables DuckDB 2 does not have
                columns, pk, fks, comment = duckdb_catalog(conn, name)
            else:
                insp = inspect(conn)
                columns = insp.get_columns(name)
                try:
                    pk = list(insp.get_pk_constraint(name).get("constrained_columns") or [])
                    fks = insp.get_foreign_keys(name)
                except NotImplementedError:
                    pk, fks = [], []
                try:
                    comment = (insp.get_table_comment(name) or {}).get("text") or ""
                except NotImplementedError:
                    comment = ""
        sample, typed, readings = self.sample(name), [], {}
        if self.backend == "sqlite":  # SQLite keeps 'N/A' in a REAL column as text
            declared = {c["name"]: str(c.get("type", "")) for c in columns}
            readings = text_readings(self.query, name, [c for c, t in declared.items() if sqlite_numbers_only(t)])
            problems = {c: r.problem() for c, r in readings.items() if r.problem()}
            sample, typed = sqlite_numbers(sample, declared, problems)
        n_rows, estimated = self._row_count(name)
        whole = len(sample) < SAMPLE_ROWS and (estimated or n_rows == len(sample))  # LIMIT returned every row
        notes = [f"engine=sql: table {name!r} of the {self.dialect} database {self.safe_url}; read it with "
                 f"sql('SELECT ...') in {self.dialect} SQL, aggregating in the database",
                 f"values described from all {len(sample)} rows" if whole else
                 f"values described from the first {len(sample)} rows (a sample): counts, ranges and top values are "
                 "of the sample, not the table"]
        if whole:
            n_rows, estimated = len(sample), False
        notes += typed
        if comment:
            notes.append(f"table comment: {comment}")
        desc = describe_frame(name, sample, load_notes=notes)
        desc.n_rows = n_rows if n_rows >= 0 else len(sample)
        by_name = {c["name"]: c for c in columns}
        for info in desc.columns:
            col = by_name.get(info.name, {})
            info.dtype = str(col.get("type", info.dtype))
            if col.get("comment"):
                info.meaning = str(col["comment"])
            if info.name in readings:
                info.sql_text = readings[info.name].problem()
            if info.name in pk:
                info.note = (info.note + "; " if info.note else "") + "primary key"
        if estimated:
            desc.load_notes.append(f"row count {n_rows:,} is the catalog's estimate")
        facts = {"n_rows": desc.n_rows, "estimated": estimated, "sample": sample, "primary_key": pk,
                 "foreign_keys": fks, "comment": comment}
        return desc, facts

    def sample(self, name: str, n: int | None = None) -> pd.DataFrame:
        """The first ``n`` (default :data:`SAMPLE_ROWS`) rows of table ``name`` (``SELECT * ... LIMIT n``, under the
        timeout)."""
        from sqlalchemy import select, table

        n = SAMPLE_ROWS if n is None else n
        stmt = select("*").select_from(table(name)).limit(int(n))
        frame = self._fetch(stmt, int(n))
        return iso_text_dates(frame)[0] if self.backend == "sqlite" else frame  # SQLite keeps dates as text

    def _row_count(self, name: str) -> tuple[int, bool]:
        """(rows, estimated): PostgreSQL's catalog estimate when it has one, else ``count(*)``; -1 when unknown."""
        from sqlalchemy import func, select, table, text

        try:
            if self.backend == "postgresql":
                with self.engine.connect() as conn:
                    est = conn.execute(text("SELECT reltuples::bigint FROM pg_class WHERE oid = to_regclass(:t)"),
                                       {"t": quote(name, self.dialect)}).scalar()
                if est is not None and est >= 0:
                    return int(est), True
            frame = self._fetch(select(func.count()).select_from(table(name)), 1)
            return int(frame.iloc[0, 0]), False
        except (SqlQueryError, ValueError, IndexError):
            return -1, False

    # ------------------------------------------------------------- querying
    def query(self, sql: str) -> pd.DataFrame:
        """Run one read-only SELECT and return its rows.

        Raises:
            SqlRefused: the text is not one read-only SELECT (see ``sql_check.check_read_only``).
            SqlQueryError: the database failed it (its message), it ran past ``timeout_s``, or it returned more
                than ``max_rows`` rows.
        """
        from sqlalchemy import text

        checked = check_read_only(sql, self.dialect, tables=self.table_names, schemas=self.schemas)
        return self._fetch(text(checked), self.max_rows, raise_over=True)

    def _fetch(self, stmt: Any, limit: int, raise_over: bool = False) -> pd.DataFrame:
        from sqlalchemy import exc, text

        timer = None
        t0 = time.monotonic()
        try:
            with self.engine.connect() as conn:
                raw = conn.connection.driver_connection
                if self.backend == "postgresql":
                    conn.execute(text("SET TRANSACTION READ ONLY"))
                    conn.execute(text(f"SET LOCAL statement_timeout = {int(self.timeout_s * 1000)}"))
                elif self.backend == "sqlite":
                    conn.exec_driver_sql("PRAGMA query_only = ON")
                    deadline = t0 + self.timeout_s
                    raw.set_progress_handler(lambda: 1 if time.monotonic() > deadline else 0, 10_000)
                else:
                    timer = threading.Timer(self.timeout_s, interrupt, (raw,))
                    timer.daemon = True
                    timer.start()
                try:
                    result = conn.execution_options(stream_results=True).execute(stmt)
                    rows = result.fetchmany(limit + 1)
                    frame = pd.DataFrame(rows, columns=list(result.keys()))
                    result.close()
                finally:
                    if self.backend == "sqlite":
                        raw.set_progress_handler(None, 0)
                conn.rollback()
        except exc.SQLAlchemyError as e:
            if time.monotonic() - t0 >= self.timeout_s * 0.95 or "timeout" in str(e).lower() or "interrupt" in str(e).lower():
                raise SqlQueryError(f"The query ran past the {self.timeout_s:g} s limit and was stopped; aggregate more "
                                    "in SQL or filter the rows.") from None
            raise SqlQueryError(f"The database refused the query: {self._scrub(first_line(e))}") from None
        finally:
            if timer is not None:
                timer.cancel()
        if len(frame) > limit:
            if raise_over:
                raise SqlQueryError(f"The query returns more than {limit:,} rows (the limit); aggregate in SQL (GROUP "
                                    "BY) or add a LIMIT, and bring back only what the answer needs.")
            frame = frame.iloc[:limit]
        size = int(frame.memory_usage(deep=True, index=False).sum()) if len(frame.columns) else 0
        if size > MAX_RESULT_BYTES:
            raise SqlQueryError(f"The query's result takes {size / 2**20:,.0f} MB, more than the "
                                f"{MAX_RESULT_BYTES // 2**20} MB limit; aggregate in SQL or select fewer or shorter "
                                "columns.")
        return numbers_typed(frame)


class SqlFrame(FrameStandIn):
    """The part of a DataFrame the surfaces read, for a database table: only its first rows are ever loaded."""

    where = "SQL table"

    def __init__(self, source: SqlSource, name: str, n_rows: int, sample: pd.DataFrame, dtypes: dict[str, str]):
        super().__init__(n_rows, dtypes)
        self.source, self.name, self._sample = source, name, sample

    def head(self, n: int = 5) -> pd.DataFrame:
        return self._sample.head(n) if n <= len(self._sample) else self.source.sample(self.name, n)

    def sample(self) -> pd.DataFrame:
        """The first :data:`SAMPLE_ROWS` rows (read once when the table was described)."""
        return self._sample

    def _label(self) -> str:
        return f"{self.name} in {self.source.safe_url}"


@dataclass
class SqlTable(LoadedTable):
    """A table of a database: ``frame`` is a :class:`SqlFrame`, ``description`` its description, ``source`` the
    database, ``table`` its name there, ``foreign_keys`` the catalog's (SQLAlchemy's inspector dicts)."""

    source: Any = None
    table: str = ""
    description: TableDescription | None = None
    foreign_keys: list[dict[str, Any]] = field(default_factory=list)
    primary_key: list[str] = field(default_factory=list)


def load_sql_tables(source: SqlSource, names: list[str] | None = None) -> list[SqlTable]:
    """Describe the database's tables (all of them, or ``names``) as session tables.

    Raises:
        BadInputError: a name that is not a table of the database.
        DataLoadError: the database has no tables.
    """
    mirrors = {} if names else same_rows_views(source)  # a view named on purpose is loaded
    names = [n for n in (names or source.table_names) if n not in mirrors]
    if not names:
        raise DataLoadError(f"{source.safe_url} has no tables; connect to a database with tables.")
    out = []
    for name in names:
        desc, facts = source.describe(name)
        same = [f"the view {v!r} is this table's rows under another name (every column of {name!r}, unchanged), so "
                f"it is not offered as a second table: questions about it are answered from {name!r}"
                for v, t in mirrors.items() if t == name]
        desc.load_notes += same
        desc.same_rows_views = [v for v, t in mirrors.items() if t == name]
        sample = facts["sample"]
        report = LoadReport(path=f"{source.safe_url}#{name}", format="sql", n_rows=desc.n_rows, warnings=same)
        report.columns = [ColumnReport(name=c.name, dtype=c.dtype, inferred_type=c.kind) for c in desc.columns]
        frame = SqlFrame(source, name, desc.n_rows, sample, {c.name: c.dtype for c in desc.columns})
        out.append(SqlTable(name, frame, report, source=source, table=name, description=desc,  # type: ignore[arg-type]
                            foreign_keys=list(facts["foreign_keys"]), primary_key=list(facts["primary_key"])))
    return out


def declared_relationships(tables: dict[str, Any]) -> list[Relationship]:
    """The catalog's foreign keys between the session's SQL tables (session names), as relationships.

    A foreign key's referenced columns are its table's key (unique); the referencing side is unique only when its
    columns are that table's primary key. Coverage is 1 (the database enforces it).
    """
    by_db = {(id(t.source), t.table): n for n, t in tables.items() if is_sql(t)}
    out = []
    for name, t in tables.items():
        if not is_sql(t):
            continue
        for fk in t.foreign_keys:
            other = by_db.get((id(t.source), fk.get("referred_table")))
            if other is None or other == name:
                continue
            cols, ref = list(fk.get("constrained_columns") or []), list(fk.get("referred_columns") or [])
            out.append(relationship(name, other, cols, ref, 1.0, 1.0, cols == t.primary_key and bool(cols), True,
                                    "catalog"))
    return out


def refused(exc: Exception) -> bool:
    return isinstance(exc, SqlRefused)
