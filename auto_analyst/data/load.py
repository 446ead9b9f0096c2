"""Loading a user's file into a typed DataFrame with a report of what was found and done.

One entry point per need: :func:`load` (one table), :func:`load_all` (every sheet of a
workbook), :func:`table_name` (the variable name of a table in generated code). The steps live
in their own modules: ``sniff``/``textfile``/``ragged`` (encoding, dialect, header, bulk read,
repairs), ``formats`` (Excel, Parquet, JSON), ``compressed`` (gzip, bz2, xz, zip), ``layout``
(header names, empty and totals rows), ``columns`` with ``numbers`` and ``dates`` (types),
``report`` (the load report).

Nothing unexpected escapes: :func:`load` and :func:`load_all` are the only entry points, and any
exception other than :class:`~auto_analyst.errors.DataLoadError` raised while loading is logged
and re-raised as a ``DataLoadError`` (one sentence naming the file; the original as ``__cause__``).

Example:
    >>> from auto_analyst.data.load import load
    >>> t = load("datasets/iris.csv")
    >>> t.name, t.frame.shape
    ('iris', (150, 5))
"""

from __future__ import annotations

import contextlib
import difflib
import keyword
import logging
import os
import re
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Callable, Iterator, TypeVar

import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from auto_analyst.data.columns import InferOptions, infer_column
from auto_analyst.data.converted import BOOL_SPELLINGS, reader_types
from auto_analyst.data.compressed import COMPRESSIONS, expanded, sniff_format
from auto_analyst.data.formats import (TABLE_FORMATS, check_file, excel_sheets, read_excel_grid, read_json,
                                       read_parquet)
from auto_analyst.data.layout import clash_note, clean_headers, drop_empty, drop_footer, two_row_header
from auto_analyst.data.numbers import file_decimal
from auto_analyst.data.report import ColumnReport, LoadedTable, LoadReport
from auto_analyst.data.sniff import SAMPLE_BYTES, detect_encoding, header_index
from auto_analyst.data.textfile import read_text_table
from auto_analyst.data.textops import normalize
from auto_analyst.errors import DataLoadError

__all__ = ["ColumnReport", "LoadReport", "LoadedTable", "load", "load_all", "table_name", "unreadable"]

log = logging.getLogger(__name__)
_T = TypeVar("_T")

# Rows per column used to decide the file's decimal mark; the per-column evidence still runs on
# the whole column. 5,000 rows take a few ms and cover any export's header block.
DECIMAL_SAMPLE_ROWS = 5000
_DELIMITER_BY_SUFFIX = {".tsv": "\t", ".tab": "\t", ".psv": "|"}
# Columns are typed in parallel above this many cells: the pyarrow kernels and numpy release the
# GIL, so two cores type a million-row file in little more than half the time. Small tables stay
# on one thread (starting workers costs more than it saves).
PARALLEL_MIN_CELLS = 200_000


def table_name(path: str | Path, sheet: str | None = None, *, base: str | None = None) -> str:
    """The name of a table: a valid Python identifier from a file (and sheet) name.

    This is the one naming rule: the CLI, ``describe``, the Python API and the page's tabs all show
    these names. 'Sales 2023.csv' → 'sales_2023'; sheet 'Q2 data' of 'Book 1.xlsx' → 'book_1_q2_data'
    (a workbook with a single sheet of data is named like a file: :func:`load_all`).

    Args:
        path: the file (only its name is used).
        sheet: the workbook sheet, when the table is one sheet of several.
        base: a name to use instead of the file's stem (a name the user chose, or an upload's original
            file name when the file is stored under another name).
    """
    p = Path(path)
    stem = p.stem
    if p.suffix.lower() in COMPRESSIONS and Path(stem).suffix.lower() in TABLE_FORMATS:
        stem = Path(stem).stem  # 'sales.csv.gz' → 'sales'
    stem = stem if base is None else base
    stem = stem if sheet is None else f"{stem}_{sheet}"
    name = re.sub(r"\W+", "_", stem.lower()).strip("_") or "table"
    if name[0].isdigit() or keyword.iskeyword(name) or name in ("df", "tables"):
        name = "t_" + name
    return name


def load(path: str | Path, sheet: str | None = None, *, encoding: str | None = None, delimiter: str | None = None,
         decimal: str | None = None, thousands: str | None = None, dayfirst: bool | None = None,
         header_row: int | None = None, dtypes: dict[str, str] | None = None, max_file_mb: int = 200) -> LoadedTable:
    """Load one table from a CSV/TSV, Excel (.xlsx), Parquet or JSON file, possibly compressed.

    Every option overrides the corresponding guess; the report says what was guessed.

    Args:
        path: the file; it is only read, never modified, and nothing is written beside it. A
            ``.gz``, ``.bz2``, ``.xz`` or ``.zip`` file holding one table is expanded into a
            temporary directory first (deleted afterwards).
        sheet: workbook sheet name (default: the first sheet). Only for .xlsx files.
        encoding: text encoding (Python codec name), e.g. 'cp1252'.
        delimiter: field delimiter, e.g. ';' or '\\t'.
        decimal: decimal mark of numbers written as text, '.' or ','.
        thousands: thousands separator, e.g. '.', ',' or ' '.
        dayfirst: True for DD/MM/YYYY dates, False for MM/DD/YYYY.
        header_row: 0-based row of the header (CSV: record index counting blank lines).
        dtypes: column → type for columns whose guess is wrong: string, category, integer,
            float, boolean or datetime.
        max_file_mb: refuse files larger than this many MiB (the whole file is read into memory);
            for a compressed file the limit applies to the expanded data.

    Returns:
        The table: its name (a Python identifier), the frame and the load report.

    Raises:
        DataLoadError: missing, empty, binary, too large or unknown file; unknown sheet; ragged rows
            beyond repair; unknown column or type in ``dtypes``; and any unexpected failure while
            loading (the original exception is its ``__cause__``).
    """
    options = {"encoding": encoding, "delimiter": delimiter, "decimal": decimal, "thousands": thousands,
               "dayfirst": dayfirst, "header_row": header_row, "dtypes": dtypes}

    def work() -> LoadedTable:
        with _source(path, max_file_mb) as (file, fmt, compression):
            if sheet is not None and fmt != "excel":
                raise DataLoadError(f"{Path(path).name} is not a workbook; sheet= applies to .xlsx files only.")
            return _load_one(file, fmt, Path(path), compression, sheet, **options)

    return _guarded(path, work)


def load_all(path: str | Path, **options) -> list[LoadedTable]:
    """Load every sheet of a workbook (one table each, named file_sheet; file alone when a single sheet has data);
    other files give [load(path)].

    Empty sheets are left out. Options are those of :func:`load`.

    Raises:
        DataLoadError: as :func:`load`; also when a workbook has no sheet with data.
    """
    max_file_mb = options.pop("max_file_mb", 200)

    def work() -> list[LoadedTable]:
        with _source(path, max_file_mb) as (file, fmt, compression):
            if fmt != "excel":
                return [_load_one(file, fmt, Path(path), compression, None, **options)]
            tables = []
            for s in excel_sheets(file, Path(path).name):
                try:
                    tables.append(_load_one(file, fmt, Path(path), compression, s, **options))
                except DataLoadError as exc:
                    if "is empty" not in str(exc):
                        raise
            if not tables:
                raise DataLoadError(f"{Path(path).name} has no sheet with data; check the workbook.")
            if len(tables) == 1:
                tables[0].name = table_name(path)  # 'sales.xlsx' with one sheet of data is the table 'sales'
            return tables

    return _guarded(path, work)


def unreadable(path: str | Path) -> DataLoadError:
    """The error for a file this user may not read (os.stat or open raised PermissionError on it or a folder above).

    Says which to check: the first folder above ``path`` this user cannot enter (``os.access(X_OK)``), else the
    file itself. Nothing is written there, so the tool's home (AUTO_ANALYST_HOME) is not the cause.
    """
    p = Path(path).expanduser().absolute()
    closed = next((a for a in reversed(p.parents) if not os.access(a, os.X_OK)), None)
    where = f"the permissions of the folder {closed}" if closed is not None else "the file's permissions"
    return DataLoadError(f"Cannot read {path}: permission denied (check {where}).")


def _guarded(path: str | Path, work: Callable[[], _T]) -> _T:
    """Run ``work``; any exception but DataLoadError becomes one (logged, original as ``__cause__``)."""
    try:
        return work()
    except DataLoadError:
        raise
    except PermissionError as exc:
        raise unreadable(path) from exc
    except MemoryError as exc:
        raise DataLoadError(f"{Path(path).name} is too large to load in the memory available; load a smaller "
                            "extract or lower max_file_mb.") from exc
    except RecursionError as exc:
        raise DataLoadError(f"{Path(path).name} nests values too deeply to be a table; export it as a flat "
                            "table (CSV, or JSON records) and load that.") from exc
    except Exception as exc:  # noqa: BLE001 - the one place where loader bugs meet the user
        log.warning("loading %s failed unexpectedly", path, exc_info=True)
        raise DataLoadError(f"{Path(path).name} could not be loaded (an unexpected {type(exc).__name__}, now "
                            "logged); export it again as a UTF-8 CSV, or pass encoding=, delimiter= or "
                            "header_row= to skip detection.") from exc


@contextlib.contextmanager
def _source(path: str | Path, max_file_mb: int) -> Iterator[tuple[Path, str, str]]:
    """(the file to read, its format, the compression or ''); a compressed file is expanded first."""
    p, fmt = check_file(path, max_file_mb)
    if fmt not in COMPRESSIONS.values():
        yield p, fmt, ""
        return
    with expanded(p, fmt, max_file_mb * 1024 * 1024, TABLE_FORMATS) as (file, inner):
        if file.stat().st_size == 0:
            raise DataLoadError(f"{p.name} holds an empty file; check that the export finished.")
        inner_fmt = TABLE_FORMATS.get(Path(inner).suffix.lower()) if inner else None
        if inner_fmt is None:
            with file.open("rb") as f:
                inner_fmt = sniff_format(f.read(64))
        yield file, inner_fmt, fmt


def _load_one(p: Path, fmt: str, shown: Path, compression: str, sheet: str | None, *, encoding: str | None = None,
              delimiter: str | None = None, decimal: str | None = None, thousands: str | None = None,
              dayfirst: bool | None = None, header_row: int | None = None,
              dtypes: dict[str, str] | None = None) -> LoadedTable:
    """Load one table from a file ``p`` of format ``fmt``; messages and the report use ``shown``, the
    path as the user gave it (``p`` is its expanded copy when ``compression`` is set)."""
    if decimal not in (None, ".", ","):
        raise DataLoadError(f"decimal must be '.' or ',', not {decimal!r}.")
    opts = InferOptions(decimal=decimal or ".", decimal_forced=decimal is not None, thousands=thousands,
                        dayfirst=dayfirst)
    report = LoadReport(path=str(shown), format=fmt, compression=compression)
    name = shown.name
    if fmt == "csv":
        suffix = Path(shown.stem).suffix.lower() if compression else shown.suffix.lower()
        typed = _reader_choice(opts, decimal is None, dtypes)
        tt = read_text_table(p, encoding=encoding, delimiter=delimiter or _DELIMITER_BY_SUFFIX.get(suffix),
                             header_row=header_row, name=name, typed=typed, bool_words=BOOL_SPELLINGS)
        report.encoding, report.delimiter, report.header_row = tt.encoding, tt.delimiter, tt.header_row
        report.skipped_rows, report.warnings = list(tt.skipped), list(tt.warnings)
        frame = _from_text(tt.table, tt.header, report, opts, dtypes)
    elif fmt == "excel":
        report.sheet, grid = read_excel_grid(p, sheet, name)
        frame = _from_grid(grid, report, opts, dtypes, header_row)
    else:
        if fmt == "json":
            with p.open("rb") as f:
                report.encoding = encoding or detect_encoding(f.read(SAMPLE_BYTES), complete=False, name=name)
            raw = read_json(p, report.encoding, name)
        else:
            raw, report.warnings = read_parquet(p, name)
        frame = _from_frame(raw, report, opts, dtypes)
    report.n_rows = len(frame)
    if len(frame) == 0:
        raise DataLoadError(f"{name} has column names ({', '.join(map(str, frame.columns[:8]))}) but no data rows; "
                            "there is nothing to analyse. Check that you exported the data, not only the header.")
    return LoadedTable(table_name(shown, sheet), frame, report)


def _reader_choice(opts: InferOptions, detect_decimal: bool, dtypes) -> Callable[[pa.Table, list[str], str],
                                                                                  dict[int, pa.DataType]]:
    """The ``typed`` callback of :func:`read_text_table`: the columns the reader converts itself.

    It also decides the file's decimal mark on the reader's sample (once, into ``opts``): plain
    decimals are converted by the reader only when the file writes a decimal point.
    """
    def typed(sample: pa.Table, header: list[str], sep: str) -> dict[int, pa.DataType]:
        names, originals = clean_headers(header)
        if detect_decimal:
            opts.decimal = file_decimal([pc.utf8_trim_whitespace(c) for c in sample.columns], sep)
            opts.decimal_sampled = True
        if opts.decimal == ",":
            return {}
        return reader_types(sample, names, set(_check_dtypes(dtypes, names, originals)))

    return typed


def _from_grid(grid: list[list[str]], report: LoadReport, opts: InferOptions, dtypes, header_row) -> pd.DataFrame:
    index = header_row if header_row is not None else header_index(grid)
    if index is None or index >= len(grid):
        raise DataLoadError(f"Sheet {report.sheet!r} is empty (no rows); pick another sheet.")
    report.header_row = index
    report.skipped_rows = [" | ".join(c for c in r if c.strip()) for r in grid[:index] if any(c.strip() for c in r)]
    header, body = grid[index], grid[index + 1:]
    combined = two_row_header(header, body)
    if combined is not None:
        header, body = combined, body[1:]
        report.warnings.append("the header takes two rows (merged cells above sub-headings); the columns are named "
                               + ", ".join(repr(c) for c in combined))
    table = pa.table({f"c{i}": pa.array([r[i] or None for r in body], pa.string()) for i in range(len(header))})
    return _from_text(table, header, report, opts, dtypes)


def _from_text(table: pa.Table, header: list[str], report: LoadReport, opts: InferOptions, dtypes) -> pd.DataFrame:
    """Layout clean-up and type inference for a table of text columns."""
    names, originals = clean_headers(header)
    # Trim once here (a no-op for most columns): layout checks and type inference reuse the result.
    table = pa.table([normalize(c) for c in table.columns], names=names)
    table, dropped, n_blank = drop_empty(table, originals, normalized=True)
    originals = [o for n, o in zip(names, originals) if n not in dropped]
    if dropped:
        report.warnings.append(f"dropped {len(dropped)} columns with no header and no values")
    if n_blank:
        report.warnings.append(f"dropped {n_blank} empty rows")
    table, footer = drop_footer(table)
    report.skipped_rows += footer
    if table.num_columns == 0:
        raise DataLoadError(f"{Path(report.path).name} has no columns with data; check the file.")
    if not opts.decimal_forced and not opts.decimal_sampled:
        # Columns the reader converted vote with their numbers written out (they hold decimal points).
        sample = [pc.utf8_trim_whitespace(c.slice(0, DECIMAL_SAMPLE_ROWS)) if pa.types.is_string(c.type)
                  else pc.cast(c.slice(0, DECIMAL_SAMPLE_ROWS), pa.string()) for c in table.columns]
        opts.decimal = file_decimal(sample, report.delimiter or ",")
    opts.dayfirst_hint = opts.decimal == "," or report.delimiter == ";"
    wanted = _check_dtypes(dtypes, table.column_names, originals)
    def infer(name: str) -> tuple[pd.Series, ColumnReport]:
        return infer_column(name, table.column(name), opts, wanted.get(name), normalized=True)

    workers = min(os.cpu_count() or 1, table.num_columns)
    if workers > 1 and table.num_rows * table.num_columns >= PARALLEL_MIN_CELLS:
        # Text columns with the most bytes first (longest-job-first): the slowest column, often
        # formatted numbers, does not start last and leave one core idle at the end.
        order = sorted(table.column_names, key=lambda n: -table.column(n).nbytes
                       if pa.types.is_string(table.column(n).type) else 0)
        with ThreadPoolExecutor(workers) as pool:
            done = dict(zip(order, pool.map(infer, order)))
        typed = [done[name] for name in table.column_names]
    else:
        typed = [infer(name) for name in table.column_names]
    series, reports = {}, []
    for name, original, (s, rep) in zip(table.column_names, originals, typed):
        reports.append(_finish_report(rep, original))
        series[name] = s
    report.columns, report.decimal = reports, opts.decimal
    report.thousands = next((r.thousands for r in reports if r.thousands), opts.thousands or "")
    if table.num_rows == 0:
        report.warnings.append("the file has a header but no data rows")
    # copy=False: consolidating a million-row frame into 2-D blocks copies every numeric column
    # (a fifth of a second); pandas consolidates later only if an operation needs it.
    return pd.DataFrame(series, index=pd.RangeIndex(table.num_rows), copy=False)


def _from_frame(raw: pd.DataFrame, report: LoadReport, opts: InferOptions, dtypes) -> pd.DataFrame:
    """Header clean-up and inference of the text columns of an already typed frame (Parquet, JSON)."""
    names, originals = clean_headers(list(raw.columns))
    wanted = _check_dtypes(dtypes, names, originals)
    series, reports = {}, []
    for i, (name, original) in enumerate(zip(names, originals)):
        col = raw.iloc[:, i]
        if name in wanted or pd.api.types.is_object_dtype(col) or pd.api.types.is_string_dtype(col):
            if col.map(lambda v: isinstance(v, (list, dict, tuple)), na_action="ignore").any():
                s, rep = col.rename(name), ColumnReport(name=name, inferred_type="string", dtype=str(col.dtype),
                                                         note="nested values (lists or objects)")
            else:
                text = pa.chunked_array([pa.array([None if _missing(v) else str(v) for v in col], pa.string())])
                s, rep = infer_column(name, text, opts, wanted.get(name))
        else:
            s, rep = col.rename(name).reset_index(drop=True), ColumnReport(name=name, dtype=str(col.dtype),
                                                                          inferred_type=_type_of(col))
        reports.append(_finish_report(rep, original))
        series[name] = s
    report.columns = reports
    return pd.DataFrame(series, index=pd.RangeIndex(len(raw)))


def _finish_report(rep: ColumnReport, original: str) -> ColumnReport:
    rep.original = original
    clash = clash_note(rep.name)
    rep.note = "; ".join(n for n in (rep.note, clash) if n)
    return rep


def _check_dtypes(dtypes, names: list[str], originals: list[str]) -> dict[str, str]:
    """Map the user's dtypes (by cleaned or original header) to column names; unknown names fail."""
    out = {}
    for key, value in (dtypes or {}).items():
        if key in names:
            out[key] = value
        elif key in originals:
            out[names[originals.index(key)]] = value
        else:
            close = difflib.get_close_matches(str(key), names, n=3)
            hint = f" Did you mean {', '.join(map(repr, close))}?" if close else f" Columns: {', '.join(names[:20])}."
            raise DataLoadError(f"dtypes names a column {key!r} that the file does not have.{hint}")
    return out


def _missing(v) -> bool:
    return v is None or v is pd.NA or v is pd.NaT or (isinstance(v, float) and v != v)


def _type_of(col: pd.Series) -> str:
    if pd.api.types.is_bool_dtype(col):
        return "boolean"
    if pd.api.types.is_integer_dtype(col):
        return "integer"
    if pd.api.types.is_float_dtype(col):
        return "float"
    if pd.api.types.is_datetime64_any_dtype(col):
        return "datetime"
    return "string"
