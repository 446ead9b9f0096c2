"""Reading a delimited text file into a table of text columns.

The encoding, dialect and header are sniffed from a sample (:mod:`auto_analyst.data.sniff`);
the bulk of the file is then parsed by pyarrow's multi-threaded CSV reader with every column as
text, so no guess by the parser can drop a leading zero or a digit. Files with ragged rows take a
slower path through the ``csv`` module, which pads short rows and trims empty extra fields.
"""

from __future__ import annotations

import codecs
import csv
import io
import re
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import pyarrow as pa
import pyarrow.csv as pacsv

from auto_analyst.data.sniff import SAMPLE_BYTES, detect_dialect, detect_encoding, find_header
from auto_analyst.errors import DataLoadError

__all__ = ["TextTable", "read_text_table"]

# Rows that cannot be repaired (more fields than the header, the extras not empty) are skipped
# with a warning while they stay below this share of the rows; above it the file is not a
# consistent table (often a wrong delimiter) and loading fails.
MAX_BAD_ROW_SHARE = 0.01
MAX_BAD_ROWS_ALWAYS_OK = 2


@dataclass
class TextTable:
    """Text columns as read, with what sniffing found."""

    table: pa.Table
    header: list[str]
    encoding: str
    delimiter: str
    header_row: int
    skipped: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    sample_text: str = ""


MAX_FIELDS = 20_000
"""Columns a text file may have; wider lines are refused before the quadratic-time detection steps (a
150k-field line held a CPU for minutes)."""


def read_text_table(path: Path, *, encoding: str | None = None, delimiter: str | None = None,
                    header_row: int | None = None) -> TextTable:
    """Read a delimited text file with every column as text (null for empty cells).

    Args:
        path: the file (only read, never written).
        encoding: overrides detection (any Python codec name).
        delimiter: overrides detection.
        header_row: 0-based record index of the header (blank lines count); overrides detection.

    Returns:
        The table; its columns are named c0, c1, ... in header order.

    Raises:
        DataLoadError: empty file, binary file, wrong encoding, or ragged rows beyond repair.
    """
    name = path.name
    size = path.stat().st_size
    with path.open("rb") as f:
        head = f.read(SAMPLE_BYTES)
    complete = len(head) == size
    enc = encoding or detect_encoding(head, complete=complete, name=name)
    try:
        text = codecs.getincrementaldecoder(enc)().decode(head, final=complete)
    except LookupError:
        raise DataLoadError(f"Unknown encoding {enc!r}; pass a Python codec name such as 'utf-8' "
                            "or 'cp1252'.") from None
    except UnicodeDecodeError:
        raise DataLoadError(f"{name} is not valid {enc} text; leave encoding unset to detect it, "
                            "or pass the right one.") from None
    text = text.lstrip("\ufeff")
    if not complete and "\n" not in text:
        raise DataLoadError(f"{name} has a first line longer than {SAMPLE_BYTES // 1024} KiB; it is not a table "
                            f"this tool can read (at most {MAX_FIELDS:,} columns). Check the file's line endings.")
    if not complete:
        text = text[: max(text.rfind("\n"), 0)]
    widest = max((max(line.count(d) for d in ",;\t|") for line in text.splitlines()[:200]), default=0)
    if widest >= MAX_FIELDS:
        # dialect and header detection grow quickly with the width of a line: refuse before they run
        raise DataLoadError(f"{name} has a line with about {widest + 1:,} fields; at most {MAX_FIELDS:,} columns "
                            "are supported. Reshape the data (one row per item) or split the file.")
    if not text.strip():
        raise DataLoadError(f"{name} is empty (no rows); check that the export finished.")
    dialect = detect_dialect(text, delimiter)
    index, n_lines, header, skipped = find_header(text, dialect, header_row)
    width = len(header)
    nl_in_values = _has_newline_in_quotes(text, dialect.delimiter)
    warnings: list[str] = []
    if codecs.lookup(enc).name in ("utf-8", "utf-8-sig") and (b"\n" in head or b"\r" not in head):
        # Fast path: pyarrow parses the memory-mapped file in place and checks the UTF-8 itself.
        offset = _line_offset(head, n_lines)
        try:
            with pa.memory_map(str(path)) as mm:
                return TextTable(_read_arrow(mm.read_buffer(), offset, width, dialect.delimiter, nl_in_values),
                                 header, enc, dialect.delimiter, index, skipped, warnings, text)
        except pa.ArrowInvalid:
            pass  # a later byte is not UTF-8, or ragged rows: take the careful path below
    data, enc = _utf8_bytes(path, enc, name)
    offset = _line_offset(data, n_lines)
    try:
        table = _read_arrow(pa.py_buffer(data), offset, width, dialect.delimiter, nl_in_values)
    except pa.ArrowInvalid:
        table, header, warnings = _read_python(data[offset:], header, dialect.delimiter, name)
    return TextTable(table, header, enc, dialect.delimiter, index, skipped, warnings, text)


def _utf8_bytes(path: Path, enc: str, name: str) -> tuple[bytes, str]:
    """The whole file as UTF-8 bytes without BOM (pyarrow parses UTF-8 only), and its encoding."""
    data = path.read_bytes()
    if codecs.lookup(enc).name in ("utf-8", "utf-8-sig"):
        try:  # the sample was UTF-8; a later byte may not be. Chunks keep memory flat.
            dec = codecs.getincrementaldecoder("utf-8")()
            for start in range(0, len(data), 16 << 20):
                dec.decode(data[start:start + (16 << 20)])
            dec.decode(b"", final=True)
        except UnicodeDecodeError:
            # Detect on the lines with non-ASCII bytes: in a mostly-ASCII file they are the only evidence.
            lines = b"\n".join(m.group(0) for _, m in zip(range(5000), re.finditer(rb"[^\n]*[\x80-\xff][^\n]*", data)))
            enc = detect_encoding(lines, complete=True, name=name)
    if codecs.lookup(enc).name not in ("utf-8", "utf-8-sig"):
        try:
            data = data.decode(enc).encode("utf-8")
        except UnicodeDecodeError:
            raise DataLoadError(f"{name} is not valid {enc} text; pass the right encoding=....") from None
    if data.startswith(codecs.BOM_UTF8):
        data = data[3:]
    if b"\n" not in data[:SAMPLE_BYTES] and b"\r" in data:
        data = data.replace(b"\r", b"\n")  # classic Mac line ends
    return data, enc


def _line_offset(data: bytes, n_lines: int) -> int:
    pos = 0
    for _ in range(n_lines):
        nxt = data.find(b"\n", pos)
        if nxt < 0:
            return len(data)
        pos = nxt + 1
    return pos


def _has_newline_in_quotes(text: str, delimiter: str) -> bool:
    try:
        return any("\n" in c or "\r" in c for row in csv.reader(io.StringIO(text), delimiter=delimiter) for c in row)
    except csv.Error:
        return True


def _read_arrow(data: pa.Buffer, offset: int, width: int, delimiter: str, nl_in_values: bool) -> pa.Table:
    names = [f"c{i}" for i in range(width)]
    body = data[offset:]
    if body.size == 0:
        return pa.table({n: pa.array([], pa.string()) for n in names})
    return pacsv.read_csv(
        pa.BufferReader(body),
        read_options=pacsv.ReadOptions(column_names=names, block_size=4 << 20),
        parse_options=pacsv.ParseOptions(delimiter=delimiter, newlines_in_values=nl_in_values),
        convert_options=pacsv.ConvertOptions(column_types={n: pa.string() for n in names}, null_values=[""],
                                             strings_can_be_null=True, quoted_strings_can_be_null=True),
    )


def _read_python(body: bytes, header: list[str], delimiter: str, name: str) -> tuple[pa.Table, list[str], list[str]]:
    """Slow path for ragged rows: pad short rows, trim empty extra fields, skip a few bad rows."""
    rows = [r for r in csv.reader(io.StringIO(body.decode("utf-8")), delimiter=delimiter) if r]
    warnings: list[str] = []
    width = len(header)
    if rows:
        common, n_common = Counter(_width(r) for r in rows).most_common(1)[0]
        # Nearly every row has an unnamed extra column (an exported index, a trailing field):
        # widen the header rather than call the whole file ragged.
        if common > width and n_common >= 0.9 * len(rows):
            header = header + [""] * (common - width)
            width = common
    bad, n_padded, kept = [], 0, []
    for i, r in enumerate(rows):
        if len(r) > width:
            if any(c.strip() for c in r[width:]):
                bad.append(i)
                continue
            r = r[:width]
        elif len(r) < width:
            n_padded += 1
            r = r + [""] * (width - len(r))
        kept.append(r)
    if len(bad) > max(MAX_BAD_ROWS_ALWAYS_OK, MAX_BAD_ROW_SHARE * len(rows)):
        raise DataLoadError(f"{name} has {len(bad)} of {len(rows)} rows with more fields than the header "
                            f"({width}); the rows are ragged beyond repair: check the delimiter "
                            "(pass delimiter=...) or quote fields that contain it.")
    if bad:
        warnings.append(f"skipped {len(bad)} rows with more fields than the header "
                        f"(data rows {', '.join(str(b + 1) for b in bad[:5])})")
    if n_padded:
        warnings.append(f"{n_padded} short rows padded with empty cells")
    cols = list(zip(*kept)) if kept else [()] * width
    table = pa.table({f"c{i}": pa.array([c if c != "" else None for c in col], pa.string())
                      for i, col in enumerate(cols)})
    return table, header, warnings


def _width(row: list[str]) -> int:
    n = len(row)
    while n > 1 and not row[n - 1].strip():
        n -= 1
    return n
