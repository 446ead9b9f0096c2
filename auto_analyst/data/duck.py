"""Tables past memory: a big CSV or Parquet file read by DuckDB into a database file, never into pandas.

A file of at least ``settings.duckdb_min_mb`` MiB (:func:`use_duckdb`; 0, the default, turns this off)
is loaded by :func:`load_duckdb`: DuckDB reads it itself (``read_csv`` with its own sniffing, or
``read_parquet``), streaming, into the table ``data`` of a DuckDB database file in the session's
``duck`` folder. Why a database file rather than a view over the user's file:

* the sandbox's worker sees only the session's own folders; the ``duck`` folder is bound into it
  read-only (docs/sandbox.md), while the source may be anywhere the server can read;
* every query over a CSV view parses the whole file again (measured here, 10M rows: ~3 s a query);
  DuckDB's own compressed columns answer a grouped aggregate in ~0.4 s and take a sixth of the CSV's
  disk space;
* the table is a snapshot, typed once: the description, the worker and later questions see the same
  table even if the source changes, as with a pandas table.

The import costs about one parse of the file; it is kept (keyed by the source's path, size, mtime and
the reader options), so loading the same file again, or resuming the session, reuses it. No Parquet
copy is made for the worker: it reads the database file in place.

The result is a :class:`DuckTable`: a ``LoadedTable`` whose ``frame`` is a :class:`DuckFrame` (length,
shape, columns, dtypes and ``head(n)`` read from DuckDB, what the CLI and the page show), with the table's
description built from DuckDB (:mod:`auto_analyst.data.duck_describe`). duckdb is imported only when a
function runs (``pip install -e ".[scale]"``).
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import os
import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterator, Mapping

import pandas as pd

from auto_analyst.data.description import DatasetDescription, TableDescription, describe_tables
from auto_analyst.data.duck_describe import SAMPLE_ROWS
from auto_analyst.data.duck_sql import aggregate_sql, grouped_aggregate_sql, quote
from auto_analyst.data.formats import TABLE_FORMATS
from auto_analyst.data.report import ColumnReport, LoadedTable, LoadReport
from auto_analyst.data.stand_in import FrameStandIn
from auto_analyst.errors import DataLoadError

if TYPE_CHECKING:
    from auto_analyst.config import Settings

__all__ = ["DUCKDB_NOTE", "DuckFrame", "DuckTable", "use_duckdb", "load_duckdb", "is_duck", "describe_all",
           "read_only", "aggregate_sql", "grouped_aggregate_sql", "quote"]

log = logging.getLogger(__name__)

DUCKDB_NOTE = ("engine=duckdb: this table is a DuckDB relation, not a pandas DataFrame; aggregate in SQL "
               "(con.sql(...)) and bring back only the result (.df()).")
TABLE = "data"
"""The table's name inside its database file (the worker names its view after the session's table)."""
_READERS = {"csv": "read_csv", "parquet": "read_parquet"}
_TYPES = {"string": "VARCHAR", "category": "VARCHAR", "integer": "BIGINT", "float": "DOUBLE", "boolean": "BOOLEAN",
          "datetime": "TIMESTAMP"}
_ENCODINGS = {"utf8": "utf-8", "utf-8-sig": "utf-8", "utf16": "utf-16", "latin1": "latin-1", "latin": "latin-1",
              "iso-8859-1": "latin-1", "iso8859-1": "latin-1"}  # Python's names of the encodings DuckDB reads
_IMPORT_VERSION = "1"  # part of each file's key: a change of the import makes earlier files stale
# One configuration for every connection of this process: DuckDB refuses a second connection to an open file
# with other settings. Extensions are never downloaded or loaded behind our back.
_READ_CONFIG = {"threads": 1, "async_threads": 1, "autoinstall_known_extensions": False,
                "autoload_known_extensions": False}


def _format(path: Path) -> tuple[str, str]:
    """(csv or parquet or '', compression '' or 'gzip') of a file DuckDB reads itself."""
    suffix = path.suffix.lower()
    if suffix in (".gz", ".gzip"):
        inner = TABLE_FORMATS.get(Path(path.stem).suffix.lower(), "")
        return ("csv", "gzip") if inner == "csv" else ("", "")
    fmt = TABLE_FORMATS.get(suffix, "")
    return (fmt, "") if fmt in _READERS else ("", "")


def use_duckdb(path: str | Path, settings: Settings) -> bool:
    """True when ``path`` is a CSV/TSV (possibly .gz) or Parquet file of at least ``settings.duckdb_min_mb`` MiB.

    ``duckdb_min_mb`` 0 (the default) is never: every file is loaded with pandas, as before.
    """
    limit = settings.duckdb_min_mb
    p = Path(path).expanduser()
    return limit > 0 and bool(_format(p)[0]) and p.is_file() and p.stat().st_size >= limit * 1024 * 1024


def is_duck(table: Any) -> bool:
    """Whether a session table is a DuckDB table (a :class:`DuckTable`)."""
    return isinstance(table, DuckTable)


class DuckFrame(FrameStandIn):
    """The part of a DataFrame the surfaces read, for a DuckDB table: nothing is loaded but ``head(n)``.

    Args:
        database: the table's database file.
        n_rows: its rows.
        dtypes: column name → DuckDB type, in order.
    """

    where = "DuckDB table"

    def __init__(self, database: Path, n_rows: int, dtypes: Mapping[str, str]):
        super().__init__(n_rows, dtypes)
        self.database = Path(database)
        self._sample: pd.DataFrame | None = None

    def head(self, n: int = 5) -> pd.DataFrame:
        """The first ``n`` rows as a DataFrame (file order)."""
        with read_only(self.database) as con:
            return con.sql(f"SELECT * FROM {TABLE} LIMIT {max(0, int(n))}").df()

    def sample(self) -> pd.DataFrame:
        """The first :data:`SAMPLE_ROWS` rows (read once): what the memory reads of the table's values."""
        if self._sample is None:
            self._sample = self.head(SAMPLE_ROWS)
        return self._sample

    def _label(self) -> str:
        return self.database.name


@dataclass
class DuckTable(LoadedTable):
    """A table loaded into DuckDB: ``frame`` is a :class:`DuckFrame`, ``database`` its file, ``description``
    its description (from DuckDB, named as loaded; :func:`describe_all` renames it with the table)."""

    database: Path = field(default_factory=Path)
    description: TableDescription | None = None


@contextlib.contextmanager
def read_only(database: Path) -> Iterator[Any]:
    """A short-lived read-only connection to a table's database file (closed on exit)."""
    import duckdb

    con = duckdb.connect(str(database), read_only=True, config=dict(_READ_CONFIG))
    try:
        yield con
    finally:
        con.close()


def _reader(path: Path, fmt: str, options: Mapping[str, Any], full_sample: bool) -> str:
    """The DuckDB table function reading ``path`` with the loader's options it supports.

    Raises:
        DataLoadError: an option DuckDB's reader cannot honour here (said with what to do instead).
    """
    lit = "'" + str(path).replace("'", "''") + "'"
    unsupported = [k for k in ("thousands", "dayfirst") if options.get(k) is not None]
    if fmt == "parquet":
        unsupported += [k for k in ("encoding", "delimiter", "decimal", "header_row", "dtypes") if options.get(k)]
    if unsupported:
        raise DataLoadError(f"{path.name} is read by DuckDB (it is at least duckdb_min_mb MiB), which does not take "
                            f"{', '.join(unsupported)}=; drop the option, or raise duckdb_min_mb to load it with pandas.")
    if fmt == "parquet":
        return f"read_parquet({lit})"
    args = [lit]
    if options.get("delimiter"):
        args.append("delim=" + quote_text(options["delimiter"]))
    if options.get("encoding"):
        enc = str(options["encoding"]).lower().replace("_", "-")
        args.append("encoding=" + quote_text(_ENCODINGS.get(enc, enc)))
    if options.get("decimal"):
        args.append("decimal_separator=" + quote_text(options["decimal"]))
    if options.get("header_row") is not None:
        args += [f"skip={int(options['header_row'])}", "header=true"]
    if options.get("dtypes"):
        bad = {k: v for k, v in options["dtypes"].items() if v not in _TYPES}
        if bad:
            raise DataLoadError(f"Unknown type {next(iter(bad.values()))!r} in dtypes; use one of {', '.join(_TYPES)}.")
        args.append("types={" + ", ".join(f"{quote_text(k)}: {quote_text(_TYPES[v])}"
                                         for k, v in options["dtypes"].items()) + "}")
    if full_sample:
        args.append("sample_size=-1")
    return f"read_csv({', '.join(args)})"


def quote_text(text: Any) -> str:
    """A SQL string literal (single quotes, doubled inside)."""
    return "'" + str(text).replace("'", "''") + "'"


def _key(path: Path, options: Mapping[str, Any]) -> str:
    st = path.stat()
    text = f"{_IMPORT_VERSION}|{path.resolve()}|{st.st_size}|{st.st_mtime_ns}|{sorted((k, str(v)) for k, v in options.items() if v is not None)}"
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def _import(path: Path, fmt: str, target: Path, options: Mapping[str, Any], settings: Any) -> None:
    """Write the table of ``path`` into a new database file ``target`` (complete or not there at all)."""
    import duckdb

    work = Path(tempfile.mkdtemp(prefix=".import-", dir=target.parent))  # 0700: nobody reads a half-made file
    tmp = work / target.name
    config = dict(_READ_CONFIG, threads=max(1, os.cpu_count() or 1), temp_directory=str(work / "spill"),
                  memory_limit=f"{max(256, settings.run_memory_mb)}MB")
    try:
        for full_sample in (False, True):
            con = duckdb.connect(str(tmp), config=config)
            try:
                con.execute(f"CREATE TABLE {TABLE} AS SELECT * FROM {_reader(path, fmt, options, full_sample)}")
                con.execute("CHECKPOINT")
                break
            except duckdb.ConversionException:
                if full_sample:
                    raise  # the types of the first rows do not hold further down: typed from the whole file now
            finally:
                con.close()
            tmp.unlink(missing_ok=True)
        tmp.chmod(0o400)
        os.replace(tmp, target)
    except duckdb.Error as exc:
        raise DataLoadError(f"DuckDB cannot read {path.name} ({str(exc).splitlines()[0][:200]}); check the file, or "
                            "raise duckdb_min_mb to load it with pandas.") from None
    finally:
        shutil.rmtree(work, ignore_errors=True)


def _sniffed(path: Path, options: Mapping[str, Any]) -> tuple[str, int]:
    """(delimiter, header line) DuckDB's CSV sniffer finds; ('', 0) when it cannot tell."""
    import duckdb

    args = [quote_text(path)] + (["delim=" + quote_text(options["delimiter"])] if options.get("delimiter") else [])
    con = duckdb.connect(":memory:", config=dict(_READ_CONFIG))
    try:
        delim, skip = con.execute(f"SELECT Delimiter, SkipRows FROM sniff_csv({', '.join(args)})").fetchall()[0]
        return str(delim), int(skip or 0)
    except duckdb.Error:
        return str(options.get("delimiter") or ""), int(options.get("header_row") or 0)
    finally:
        con.close()


def _report(path: Path, fmt: str, compression: str, desc: TableDescription, options: Mapping[str, Any]) -> LoadReport:
    delimiter, header_row = _sniffed(path, options) if fmt == "csv" else ("", 0)
    report = LoadReport(path=str(path), format=fmt, compression=compression, n_rows=desc.n_rows,
                        encoding=str(options.get("encoding") or ("utf-8" if fmt == "csv" else "")),
                        header_row=int(options.get("header_row") or header_row), delimiter=delimiter)
    report.columns = [ColumnReport(name=c.name, dtype=c.dtype, inferred_type=c.kind) for c in desc.columns]
    report.warnings = ["loaded into DuckDB (the file is at least duckdb_min_mb MiB): types are DuckDB's own "
                       "reading of the file; the pandas loader's repairs were not applied"]
    return report


def load_duckdb(path: str | Path, folder: Path, settings: Any, name: str | None = None,
                sheet: str | None = None, **options: Any) -> DuckTable:
    """Load ``path`` into a DuckDB database file in ``folder`` and describe it from DuckDB.

    Args:
        path: a CSV/TSV (possibly .gz) or Parquet file (see :func:`use_duckdb`).
        folder: the session's DuckDB folder (made if missing).
        settings: ``run_memory_mb`` bounds the import's memory (DuckDB spills to disk past it).
        name: the table's name (default the file's, :func:`~auto_analyst.data.load.table_name`).
        sheet: must be None (workbooks are not read by DuckDB).
        **options: the loader's options DuckDB honours: ``encoding`` (utf-8, utf-16, latin-1), ``delimiter``,
            ``decimal``, ``header_row``, ``dtypes``; ``max_file_mb`` does not apply (nothing is read into memory).

    Raises:
        DataLoadError: the file is missing or not one DuckDB reads, an option it cannot honour, or DuckDB
            cannot read it (the message names the file and what to do).
    """
    import duckdb

    try:
        return _load(Path(path).expanduser(), folder, settings, name, sheet, options)
    except DataLoadError:
        raise
    except duckdb.Error as exc:
        raise DataLoadError(f"DuckDB cannot read {Path(path).name} ({str(exc).splitlines()[0][:200]}); check the "
                            "file, or raise duckdb_min_mb to load it with pandas.") from exc
    except OSError as exc:
        raise DataLoadError(f"{Path(path).name} could not be loaded into DuckDB ({exc.strerror or exc}); check the "
                            f"file and the free space in {folder}.") from exc
    except Exception as exc:  # noqa: BLE001 - as the pandas loader: no traceback reaches the user
        log.warning("loading %s into DuckDB failed unexpectedly", path, exc_info=True)
        raise DataLoadError(f"{Path(path).name} could not be loaded into DuckDB (an unexpected {type(exc).__name__}, "
                            "now logged); raise duckdb_min_mb to load it with pandas.") from exc


def _load(p: Path, folder: Path, settings: Any, name: str | None, sheet: str | None,
          options: dict[str, Any]) -> DuckTable:
    from auto_analyst.data.duck_describe import describe_database
    from auto_analyst.data.load import table_name

    fmt, compression = _format(p)
    if not p.is_file():
        raise DataLoadError(f"No such file: {p}; check the path.")
    if not fmt:
        raise DataLoadError(f"{p.name} is not a CSV or Parquet file, which DuckDB reads; raise duckdb_min_mb to load "
                            "it with pandas.")
    if sheet is not None:
        raise DataLoadError(f"{p.name} is not a workbook; sheet= applies to .xlsx files only.")
    options = {k: v for k, v in options.items() if k != "max_file_mb"}
    folder.mkdir(mode=0o700, parents=True, exist_ok=True)
    target = folder / f"{table_name(p)}-{_key(p, options)}.duckdb"
    name = name or table_name(p)
    if not target.exists():
        _import(p, fmt, target, options, settings)
    cached = target.with_suffix(".json")
    try:
        desc = TableDescription.model_validate_json(cached.read_text())
    except (OSError, ValueError):
        with read_only(target) as con:
            desc = describe_database(con, TABLE, name, [DUCKDB_NOTE])
        tmp = cached.with_name(f".{cached.name}.{os.getpid()}")
        tmp.write_text(desc.model_dump_json())
        tmp.chmod(0o400)
        os.replace(tmp, cached)
    desc = desc.model_copy(update={"name": name})
    if desc.n_rows == 0:
        raise DataLoadError(f"{p.name} has column names but no data rows; there is nothing to analyse.")
    report = _report(p, fmt, compression, desc, options)
    desc.load_notes = [DUCKDB_NOTE] + report.summary_lines()
    with read_only(target) as con:
        dtypes = {str(r[0]): str(r[1]) for r in con.execute(f"DESCRIBE {TABLE}").fetchall()}
    return DuckTable(name, DuckFrame(target, desc.n_rows, dtypes), report, database=target,  # type: ignore[arg-type]
                     description=desc)


def describe_all(tables: Mapping[str, Any], active: str | None = None) -> DatasetDescription:
    """:func:`~auto_analyst.data.description.describe_tables` with DuckDB tables described from DuckDB (and
    database tables from their catalog: any table carrying its own ``description``).

    Without such tables this is ``describe_tables(tables, active)`` itself.
    """
    ducks = {n for n, t in tables.items() if getattr(t, "description", None) is not None}  # DuckDB and SQL tables
    if not ducks:
        return describe_tables(tables, active)
    rest = describe_tables({n: t for n, t in tables.items() if n not in ducks}, active)
    by_name = {d.name: d for d in rest.tables}
    out = [by_name[n] if n not in ducks else tables[n].description.model_copy(update={"name": n}) for n in tables]
    return DatasetDescription(tables=out, active=active or (out[0].name if out else ""))
