"""Reading a delimited text file into a table of text columns.

The encoding, dialect and header are sniffed from a sample (:mod:`auto_analyst.data.sniff`);
the bulk of the file is then parsed by pyarrow's multi-threaded CSV reader with every column as
text, so no guess by the parser can drop a leading zero or a digit. Files with ragged rows or
broken quotes take the careful path of :mod:`auto_analyst.data.ragged`.

Line ends may be LF, CRLF, a lone CR (old Mac and Excel exports) or a mixture: pyarrow's reader
takes all three, and the sniffing steps read the sample with universal newlines.
"""

from __future__ import annotations

import codecs
import csv
import io
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pacsv

from auto_analyst.data.ragged import lines_list, read_careful, swallowed_rows
from auto_analyst.data.sniff import (SAMPLE_BYTES, detect_dialect, detect_encoding, find_header, lift_field_limit,
                                    mostly_utf8)
from auto_analyst.errors import DataLoadError

__all__ = ["TextTable", "read_text_table"]

_EOL = re.compile(rb"\r\n|\r|\n")
_EOL_TEXT = re.compile("\r\n|\r|\n")


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
                    header_row: int | None = None, name: str | None = None,
                    typed: Callable[[pa.Table, list[str], str], dict[int, pa.DataType]] | None = None,
                    bool_words: tuple[list[str], list[str]] = ([], [])) -> TextTable:
    """Read a delimited text file with every column as text (null for empty cells).

    Args:
        path: the file (only read, never written).
        encoding: overrides detection (any Python codec name).
        delimiter: overrides detection.
        header_row: 0-based record index of the header (blank lines count); overrides detection.
        name: the file name used in messages (default ``path.name``).
        typed: given the first rows (text columns c0, c1, ...), the header and the delimiter, the columns the
            reader may convert itself (index → type). Any cell of such a column that does not
            convert makes the whole file be read again as text, so a guess never loses a value.

    Returns:
        The table; its columns are named c0, c1, ... in header order, text unless ``typed`` chose.

    Raises:
        DataLoadError: empty file, binary file, wrong encoding, no header, or ragged rows beyond repair.
    """
    name = name or path.name
    lift_field_limit()
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
        if encoding is not None or enc not in ("utf-8", "utf-8-sig"):
            raise DataLoadError(f"{name} is not valid {enc} text; leave encoding unset to detect it, "
                                "or pass the right one.") from None
        # Damaged UTF-8 (a BOM declares it, or detection found it): the careful path below replaces
        # and reports the bad bytes.
        text = codecs.getincrementaldecoder(enc)(errors="replace").decode(head, final=complete)
    text = text.lstrip("\ufeff")
    if not complete:
        end = max(text.rfind("\n"), text.rfind("\r"))
        if end < 0:
            raise DataLoadError(f"{name} has a first line longer than {SAMPLE_BYTES // 1024} KiB; it is not a table "
                                f"this tool can read (at most {MAX_FIELDS:,} columns). Check the file's line endings.")
        text = text[:end]
    widest = max((max(line.count(d) for d in ",;\t|") for line in text.splitlines()[:200]), default=0)
    if widest >= MAX_FIELDS:
        # dialect and header detection grow quickly with the width of a line: refuse before they run
        raise DataLoadError(f"{name} has a line with about {widest + 1:,} fields; at most {MAX_FIELDS:,} columns "
                            "are supported. Reshape the data (one row per item) or split the file.")
    if not text.strip():
        raise DataLoadError(f"{name} is empty (no rows); check that the export finished.")
    dialect = detect_dialect(text, delimiter)
    index, n_lines, header, skipped = find_header(text, dialect, header_row)
    if not header:
        raise DataLoadError(f"{name} has no header line that can be read as {dialect.delimiter!r}-delimited text; "
                            "check that it is a CSV file, or pass delimiter=... and header_row=....")
    width = len(header)
    nl_in_values = _has_newline_in_quotes(text, dialect.delimiter)
    if codecs.lookup(enc).name in ("utf-8", "utf-8-sig"):
        # Fast path: pyarrow parses the memory-mapped file in place and checks the UTF-8 itself.
        offset = _line_offset(head, n_lines)
        try:
            with pa.memory_map(str(path)) as mm:
                buf = mm.read_buffer()
                types = _types(buf, offset, width, dialect.delimiter, header, typed)
                table = _read_arrow(buf, offset, width, dialect.delimiter, nl_in_values, types, bool_words)
            return TextTable(table, header, enc, dialect.delimiter, index, skipped,
                             _swallowed(table, dialect.delimiter, nl_in_values), text)
        except pa.ArrowInvalid:
            pass  # a later byte is not UTF-8, or ragged rows: take the careful path below
    data, enc, warnings = _utf8_bytes(path, enc, name, bom=encoding is None and enc == "utf-8-sig")
    offset = _line_offset(data, n_lines)
    try:
        buf = pa.py_buffer(data)
        types = _types(buf, offset, width, dialect.delimiter, header, typed)
        table = _read_arrow(buf, offset, width, dialect.delimiter, nl_in_values, types, bool_words)
        warnings += _swallowed(table, dialect.delimiter, nl_in_values)
    except pa.ArrowInvalid:
        table, header, more = read_careful(data[offset:].decode("utf-8"), header, dialect.delimiter, name,
                                           first_line=n_lines + 1)
        warnings += more
    return TextTable(table, header, enc, dialect.delimiter, index, skipped, warnings, text)


def _utf8_bytes(path: Path, enc: str, name: str, bom: bool = False) -> tuple[bytes, str, list[str]]:
    """The whole file as UTF-8 bytes without BOM (pyarrow parses UTF-8 only), its encoding, and warnings.

    A UTF-8 file with a few damaged bytes (it has a BOM, or ``mostly_utf8``) stays UTF-8, with
    U+FFFD for each bad byte and a warning: decoding it as cp1252 instead would garble every
    accented letter of the file.
    """
    data = path.read_bytes()
    warnings: list[str] = []
    if codecs.lookup(enc).name in ("utf-8", "utf-8-sig"):
        try:  # the sample was UTF-8; a later byte may not be. Chunks keep memory flat.
            dec = codecs.getincrementaldecoder("utf-8")()
            for start in range(0, len(data), 16 << 20):
                dec.decode(data[start:start + (16 << 20)])
            dec.decode(b"", final=True)
        except UnicodeDecodeError:
            damaged = _damaged_utf8(data, bom)
            if damaged is not None:
                fixed, lines = damaged
                places = "1 line has bytes" if len(lines) == 1 else f"{len(lines)} lines have bytes"
                warnings.append(f"{places} that are not valid UTF-8 ({lines_list(lines)}): each bad byte "
                                "was replaced by \ufffd; check those cells, or pass encoding=... if the file is not "
                                "UTF-8")
                return fixed, "utf-8-sig" if bom else "utf-8", warnings
            # Detect on the lines with non-ASCII bytes: in a mostly-ASCII file they are the only evidence.
            lines = b"\n".join(m.group(0) for _, m in
                               zip(range(5000), re.finditer(rb"[^\r\n]*[\x80-\xff][^\r\n]*", data)))
            enc = detect_encoding(lines, complete=True, name=name)
    if codecs.lookup(enc).name not in ("utf-8", "utf-8-sig"):
        try:
            data = data.decode(enc).encode("utf-8")
        except UnicodeDecodeError:
            raise DataLoadError(f"{name} is not valid {enc} text; pass the right encoding=....") from None
    if data.startswith(codecs.BOM_UTF8):
        data = data[3:]
    return data, enc, warnings


def _damaged_utf8(data: bytes, bom: bool) -> tuple[bytes, list[int]] | None:
    """(the file re-encoded with U+FFFD for bad bytes, the 1-based lines with them) when the file is
    UTF-8 with a little damage (:func:`~auto_analyst.data.sniff.mostly_utf8`, or it has a BOM);
    None when it is more likely another encoding."""
    if not bom and not mostly_utf8(data):
        return None
    text = data.decode("utf-8", errors="replace")
    fixed = text.encode("utf-8")
    lines, pos, line = [], 0, 1
    for m in re.finditer("\ufffd", text):
        line += len(_EOL_TEXT.findall(text, pos, m.start()))
        pos = m.start()
        if not lines or lines[-1] != line:
            lines.append(line)
    return fixed, lines


def _line_offset(data: bytes, n_lines: int) -> int:
    """Byte offset just past the first ``n_lines`` physical lines (any of LF, CRLF, CR ends a line)."""
    pos = 0
    for _ in range(n_lines):
        m = _EOL.search(data, pos)
        if m is None:
            return len(data)
        pos = m.end()
    return pos


def _has_newline_in_quotes(text: str, delimiter: str) -> bool:
    try:
        return any("\n" in c or "\r" in c
                   for row in csv.reader(io.StringIO(text, newline=""), delimiter=delimiter) for c in row)
    except csv.Error:
        return True


def _swallowed(table: pa.Table, delimiter: str, nl_in_values: bool) -> list[str]:
    """The warning for multi-line values that look like rows caught between stray quotes (if any)."""
    if not nl_in_values or table.num_rows == 0:
        return []
    rows = set()
    for col in table.columns:
        if not pa.types.is_string(col.type):
            continue
        multi = pc.fill_null(pc.or_(pc.match_substring(col, "\n"), pc.match_substring(col, "\r")), False)
        if not pc.any(multi).as_py():
            continue
        idx = pc.indices_nonzero(multi).to_pylist()
        cells = pc.take(col, idx).to_pylist()
        rows.update(i for i, c in zip(idx, cells) if swallowed_rows(c, delimiter, table.num_columns))
    if not rows:
        return []
    # The arrow path does not know physical lines; data rows are 1-based below the header.
    return [f"a quoted value in data {lines_list(sorted(r + 1 for r in rows), 'row')} runs over "
            "several lines that look like rows; if a quote there is a stray, fix it and load again "
            "(rows may be inside that value)"]


def _types(data: pa.Buffer, offset: int, width: int, delimiter: str, header: list[str],
           typed: Callable[[pa.Table, list[str], str], dict[int, pa.DataType]] | None) -> dict[int, pa.DataType]:
    """The column types ``typed`` chooses from the rows in the first ``SAMPLE_BYTES`` of the body."""
    if typed is None:
        return {}
    head = data[offset: offset + SAMPLE_BYTES].to_pybytes()
    if offset + SAMPLE_BYTES < data.size:
        head = head[: max(head.rfind(b"\n"), head.rfind(b"\r")) + 1]
    try:
        sample = _read_arrow(pa.py_buffer(head), 0, width, delimiter, False)
    except pa.ArrowInvalid:
        return {}  # ragged or multi-line rows near the top: read everything as text
    return typed(sample, header, delimiter)


def _read_arrow(data: pa.Buffer, offset: int, width: int, delimiter: str, nl_in_values: bool,
                types: dict[int, pa.DataType] | None = None,
                bool_words: tuple[list[str], list[str]] = ([], [])) -> pa.Table:
    """Parse the body with pyarrow; columns are text but for ``types`` (read again as text if one fails)."""
    if types:
        try:
            return _arrow_csv(data, offset, width, delimiter, nl_in_values, types, bool_words)
        except pa.ArrowInvalid as exc:
            if "conversion error" not in str(exc):
                raise  # a parse error (ragged rows): reading as text would fail the same way
            # a cell the guessed type cannot hold: every column as text, as if nothing was guessed
    return _arrow_csv(data, offset, width, delimiter, nl_in_values, {})


def _arrow_csv(data: pa.Buffer, offset: int, width: int, delimiter: str, nl_in_values: bool,
               types: dict[int, pa.DataType], bool_words: tuple[list[str], list[str]] = ([], [])) -> pa.Table:
    names = [f"c{i}" for i in range(width)]
    body = data[offset:]
    if body.size == 0:
        return pa.table({n: pa.array([], pa.string()) for n in names})
    return pacsv.read_csv(
        pa.BufferReader(body),
        read_options=pacsv.ReadOptions(column_names=names, block_size=32 << 20),
        parse_options=pacsv.ParseOptions(delimiter=delimiter, newlines_in_values=nl_in_values),
        convert_options=pacsv.ConvertOptions(column_types={n: types.get(i, pa.string()) for i, n in enumerate(names)},
                                             null_values=[""], strings_can_be_null=True,
                                             quoted_strings_can_be_null=True, true_values=bool_words[0],
                                             false_values=bool_words[1]),
    )
