"""File checks and the readers of non-CSV formats: Excel workbooks, Parquet and JSON.

Excel sheets come back as grids of text (the same rules as CSV then find the header and the
types); Parquet and JSON come back as DataFrames whose text columns are inferred afterwards.
Every reader takes ``name``, the file name for messages (a compressed file's name, when the file
read is its expanded copy).
"""

from __future__ import annotations

import json
from datetime import date, datetime, time
from pathlib import Path

import pandas as pd
import pyarrow as pa

from auto_analyst.data.compressed import COMPRESSIONS
from auto_analyst.errors import DataLoadError

__all__ = ["FORMATS", "TABLE_FORMATS", "check_file", "database_url", "excel_sheets", "read_excel_grid", "read_parquet", "read_json"]

TABLE_FORMATS = {
    ".csv": "csv", ".tsv": "csv", ".tab": "csv", ".txt": "csv", ".psv": "csv", ".dat": "csv",
    ".xlsx": "excel", ".xlsm": "excel",
    ".parquet": "parquet", ".pq": "parquet",
    ".json": "json", ".jsonl": "json", ".ndjson": "json",
}
# Every suffix a user may load: the table formats and the compressions that hold one table.
FORMATS = TABLE_FORMATS | COMPRESSIONS
# Nesting deeper than this is not a table of records (documents, trees); json_normalize and the
# json module recurse on it. Real record exports nest a handful of levels.
MAX_JSON_DEPTH = 32


def check_file(path: str | Path, max_file_mb: int) -> tuple[Path, str]:
    """Check that ``path`` is a loadable file and return it with its format.

    Args:
        path: the file.
        max_file_mb: size limit in MiB (the loader reads the file into memory).

    Returns:
        (path, one of csv, excel, parquet, json, or a compression: gzip, bz2, xz, zip).

    Raises:
        DataLoadError: missing, a directory, empty, over the limit, or an unknown extension.
    """
    p = Path(path).expanduser()
    if not p.exists():
        raise DataLoadError(f"No such file: {p}; check the path.")
    if not p.is_file():
        raise DataLoadError(f"{p} is a folder, not a file; pass the path of one data file.")
    fmt = FORMATS.get(p.suffix.lower())
    if fmt is None:
        if p.suffix.lower() == ".xls":
            raise DataLoadError(f"{p.name} is an old .xls workbook; save it as .xlsx or CSV and load that.")
        url = database_url(p)
        if url:
            raise DataLoadError(f"{p.name} is a database file, not a table file; open it by its URL instead: {url} "
                                "(ask/chat take it in place of the file, chat also as --source or /connect).")
        known = ", ".join(sorted(FORMATS))
        raise DataLoadError(f"Unknown file type {p.suffix or '(none)'!r} for {p.name}; use one of {known}.")
    size = p.stat().st_size
    if size == 0:
        raise DataLoadError(f"{p.name} is empty (0 bytes); check that the export finished.")
    if size > max_file_mb * 1024 * 1024:
        raise DataLoadError(f"{p.name} is {size / 2**20:.1f} MB, over the {max_file_mb} MB limit; "
                            "raise max_file_mb or load a smaller extract.")
    return p, fmt


DATABASE_SUFFIXES = {".db": "", ".sqlite": "sqlite", ".sqlite3": "sqlite", ".duckdb": "duckdb"}
"""Database files a user may pass where a table file goes: '' = told apart by the file's first bytes."""


def database_url(path: Path) -> str:
    """The SQLAlchemy URL that opens ``path`` as a source (``sqlite:////abs/file.db``, ``duckdb:///...``), or ''
    when its suffix is not a database file's. The header tells SQLite ('SQLite format 3' at byte 0) from DuckDB
    ('DUCK' at byte 8), as both formats document; a .db file with neither is taken for SQLite (the common case)."""
    kind = DATABASE_SUFFIXES.get(path.suffix.lower())
    if kind is None:
        return ""
    if not kind:
        try:
            with open(path, "rb") as f:
                head = f.read(16)
        except OSError:
            head = b""
        kind = "duckdb" if head[8:12] == b"DUCK" else "sqlite"
    return f"{kind}:///{path.resolve()}"


def excel_sheets(path: Path, name: str | None = None) -> list[str]:
    """Sheet names of a workbook, in workbook order.

    Raises:
        DataLoadError: the file is not a readable workbook.
    """
    from openpyxl import load_workbook

    try:
        wb = load_workbook(path, read_only=True, data_only=True)
    except Exception:  # noqa: BLE001 - openpyxl raises zipfile/KeyError/InvalidFileException alike
        raise DataLoadError(f"{name or path.name} is not a readable .xlsx workbook; "
                            "open it in Excel and save it again.") from None
    try:
        return list(wb.sheetnames)
    finally:
        wb.close()


def read_excel_grid(path: Path, sheet: str | None, name: str | None = None) -> tuple[str, list[list[str]]]:
    """All cells of one sheet as text ('' for empty; numbers in full precision, dates in ISO).

    Args:
        path: the workbook.
        sheet: the sheet name; None for the first sheet.

    Returns:
        (sheet name, rows of cells).

    Raises:
        DataLoadError: unknown sheet or unreadable workbook.
    """
    from openpyxl import load_workbook

    names = excel_sheets(path, name)
    if sheet is None:
        sheet = names[0]
    if sheet not in names:
        raise DataLoadError(f"{name or path.name} has no sheet {sheet!r}; its sheets are "
                            f"{', '.join(map(repr, names))}.")
    wb = load_workbook(path, read_only=True, data_only=True)
    try:
        rows = [[_cell_text(v) for v in row] for row in wb[sheet].iter_rows(values_only=True)]
    finally:
        wb.close()
    width = max((len(r) for r in rows), default=0)
    return sheet, [r + [""] * (width - len(r)) for r in rows]


def _cell_text(v) -> str:
    if v is None:
        return ""
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, float):
        return repr(int(v)) if v.is_integer() and abs(v) < 2**53 else repr(v)
    if isinstance(v, datetime):
        return v.isoformat(sep=" ").removesuffix(" 00:00:00")
    if isinstance(v, (date, time)):
        return v.isoformat()
    return str(v)


def read_parquet(path: Path, name: str | None = None) -> tuple[pd.DataFrame, list[str]]:
    """A Parquet file as a DataFrame, and warnings about columns kept as Python objects.

    List, struct and map columns stay values a script can use (Python lists and dicts), not the
    text of numpy arrays; each gets a warning saying how to work with it.

    Raises:
        DataLoadError: not a Parquet file.
    """
    import pyarrow.parquet as pq

    try:
        table = pq.read_table(path)
    except Exception:  # noqa: BLE001 - pyarrow raises ArrowInvalid/OSError for damaged files
        raise DataLoadError(f"{name or path.name} is not a readable Parquet file; write it again or "
                            "export CSV.") from None
    nested = [f for f in table.schema if pa.types.is_nested(f.type)]
    frame = table.drop_columns([f.name for f in nested]).to_pandas() if nested else table.to_pandas()
    warnings = []
    for f in nested:
        position = table.schema.get_field_index(f.name)
        values = [_plain(v) for v in table.column(f.name).to_pylist()]
        frame.insert(min(position, frame.shape[1]), f.name, pd.Series(values, index=frame.index, dtype=object))
        if pa.types.is_struct(f.type) or pa.types.is_map(f.type):
            warnings.append(f"column {f.name!r} holds objects (Parquet {f.type}): kept as dicts; "
                            f"use pd.json_normalize(df[{f.name!r}].tolist()) or df[{f.name!r}].str.get('key')")
        else:
            warnings.append(f"column {f.name!r} holds lists (Parquet {f.type}): kept as Python lists; "
                            f"use df.explode({f.name!r}) for one row per item")
    return frame, warnings


def _plain(v):
    """Parquet maps come back as lists of (key, value) pairs: make them dicts, inside lists and structs too."""
    if isinstance(v, list):
        if v and all(isinstance(x, tuple) and len(x) == 2 for x in v):
            return {k: _plain(x) for k, x in v}
        return [_plain(x) for x in v]
    if isinstance(v, dict):
        return {k: _plain(x) for k, x in v.items()}
    return v


def read_json(path: Path, encoding: str, name: str | None = None) -> pd.DataFrame:
    """JSON records (a list of objects, an object holding one such list, or JSON Lines) as a DataFrame.

    Nested objects become dotted columns (``address.city``); lists stay as their JSON text.

    Raises:
        DataLoadError: not JSON, JSON that is not a list of records, or nesting deeper than
            ``MAX_JSON_DEPTH`` levels.
    """
    name = name or path.name
    try:
        text = path.read_bytes().decode(encoding, errors="strict").lstrip("\ufeff")
    except (UnicodeDecodeError, LookupError):
        raise DataLoadError(f"{name} is not valid {encoding} text; leave encoding unset to detect it, "
                            "or pass the right one.") from None
    try:
        try:
            data = json.loads(text)
        except json.JSONDecodeError:
            try:
                data = [json.loads(line) for line in text.splitlines() if line.strip()]
            except json.JSONDecodeError as exc:
                raise DataLoadError(f"{name} is not valid JSON (line {exc.lineno}); "
                                    "fix the file or export it as CSV.") from None
    except RecursionError:
        data = None  # nested past the interpreter's recursion limit: refused just below
    if data is None or _depth_over(data, MAX_JSON_DEPTH):
        raise DataLoadError(f"{name} nests objects or lists more than {MAX_JSON_DEPTH} levels deep, which is not a "
                            "table; export the records as a flat list of objects (or as CSV) and load that.")
    if isinstance(data, dict):
        lists = [v for v in data.values() if isinstance(v, list) and v and all(isinstance(x, dict) for x in v)]
        if len(lists) == 1:
            data = lists[0]
        elif all(isinstance(v, list) for v in data.values()) and data:
            data = pd.DataFrame(data).to_dict("records")  # column-oriented: {"a": [...], "b": [...]}
        else:
            data = [data]
    if not isinstance(data, list) or not data or not all(isinstance(x, dict) for x in data):
        raise DataLoadError(f"{name} holds no table: expected a list of records like "
                            '[{"col": value, ...}, ...]; export it in that shape or as CSV.')
    frame = pd.json_normalize(data)
    for col in frame.columns:
        # lists (and objects inside lists) stay as their JSON text: cells must be plain values
        if frame[col].map(lambda v: isinstance(v, (list, dict))).any():
            frame[col] = frame[col].map(lambda v: json.dumps(v) if isinstance(v, (list, dict)) else v)
    return frame


def _depth_over(data, limit: int) -> bool:
    """Whether lists/objects nest deeper than ``limit`` (iterative: no recursion on hostile input)."""
    stack = [(data, 1)]
    while stack:
        v, d = stack.pop()
        if isinstance(v, dict):
            v = list(v.values())
        if isinstance(v, list):
            if d > limit:
                return True
            stack.extend((x, d + 1) for x in v if isinstance(x, (list, dict)))
    return False
