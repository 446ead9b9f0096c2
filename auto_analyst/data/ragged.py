"""The careful reader for delimited text that pyarrow refuses: ragged rows and broken quotes.

Every row is kept. A short row is padded with empty cells; a row with more fields than the
header keeps its extra values in added unnamed columns; a quote that is never closed is read as
a plain character on its line instead of swallowing the rest of the file. The warnings name the
physical lines (1-based, counting the header and any lines above it) so the user can check them.
Only a file where many rows are too long is refused: that is a wrong delimiter, not a few bad rows.
"""

from __future__ import annotations

import csv
import io
from collections import Counter

import pyarrow as pa

from auto_analyst.errors import DataLoadError

__all__ = ["read_careful", "lines_list", "swallowed_rows"]

# Rows with more (non-empty) fields than the header are repaired while they stay below this share
# of the rows; above it the file is not a consistent table (often a wrong delimiter) and loading fails.
MAX_BAD_ROW_SHARE = 0.01
MAX_BAD_ROWS_ALWAYS_OK = 2
# Lines named in a warning; the count is always given in full.
MAX_LINES_SHOWN = 10
# Unclosed quotes repaired in one file before it is refused (each repair re-reads the rest).
MAX_QUOTE_REPAIRS = 50


def lines_list(numbers: list[int], word: str = "line") -> str:
    """'line 5', 'lines 5, 9' or 'lines 5, 9, … (23 in all)'."""
    shown = ", ".join(str(n) for n in numbers[:MAX_LINES_SHOWN])
    if len(numbers) > MAX_LINES_SHOWN:
        shown += f", … ({len(numbers)} in all)"
    return f"{word}{'s' if len(numbers) > 1 else ''} {shown}"


def read_careful(text: str, header: list[str], delimiter: str, name: str,
                 first_line: int) -> tuple[pa.Table, list[str], list[str]]:
    """Parse the body of a delimited file with the ``csv`` module, repairing what can be repaired.

    Args:
        text: the body (the lines below the header), decoded.
        header: the header cells.
        delimiter: the field delimiter.
        name: file name for messages.
        first_line: the 1-based physical line number of the body's first line.

    Returns:
        (text columns c0, c1, ... with null for empty cells, the header, possibly widened, warnings).

    Raises:
        DataLoadError: more than a few rows have extra values (the delimiter is probably wrong).
    """
    records, warnings = _records(text, delimiter, first_line)
    records = [(line, r) for line, r in records if r]
    width = len(header)
    if records:
        common, n_common = Counter(_width(r) for _, r in records).most_common(1)[0]
        # Nearly every row has an unnamed extra column (an exported index, a trailing field):
        # widen the header rather than call the whole file ragged.
        if common > width and n_common >= 0.9 * len(records):
            header = header + [""] * (common - width)
            width = common
    long_lines, short_lines, widest = [], [], width
    for line, r in records:
        n = _width(r)
        if n > width:
            long_lines.append(line)
            widest = max(widest, n)
        elif len(r) < width:
            short_lines.append(line)
    if len(long_lines) > max(MAX_BAD_ROWS_ALWAYS_OK, MAX_BAD_ROW_SHARE * len(records)):
        raise DataLoadError(f"{name} has {len(long_lines)} of {len(records)} rows with more fields than the header "
                            f"({width}); the rows are ragged beyond repair: check the delimiter "
                            "(pass delimiter=...) or quote fields that contain it.")
    if long_lines:
        added = [f"column_{i + 1}" for i in range(width, widest)]
        rows = "1 row has" if len(long_lines) == 1 else f"{len(long_lines)} rows have"
        warnings.append(f"{rows} more fields than the {width} header names ({lines_list(long_lines)}); "
                        f"the extra values are kept in {', '.join(added)}")
        header = header + [""] * (widest - width)
        width = widest
    if short_lines:
        rows = "1 short row" if len(short_lines) == 1 else f"{len(short_lines)} short rows"
        warnings.append(f"{rows} padded with empty cells ({lines_list(short_lines)})")
    swallowed = [line for line, r in records if any(swallowed_rows(c, delimiter, len(header)) for c in r)]
    if swallowed:
        warnings.append(_swallowed_warning(swallowed))
    cols: list[list[str | None]] = [[] for _ in range(width)]
    for _, r in records:
        r = r[:width] if len(r) >= width else r + [""] * (width - len(r))
        for col, cell in zip(cols, r):
            col.append(cell if cell != "" else None)
    table = pa.table({f"c{i}": pa.array(col, pa.string()) for i, col in enumerate(cols)})
    return table, header, warnings


def swallowed_rows(cell: str | None, delimiter: str, width: int) -> bool:
    """True when a multi-line cell looks like rows of the table caught between two stray quotes.

    A real multi-line value (an address, a comment) rarely has a line holding as many delimiters
    as a row does; two or more such lines are taken as swallowed rows.
    """
    if not cell or width < 2 or ("\n" not in cell and "\r" not in cell):
        return False
    inner = cell.splitlines()[1:]
    return sum(1 for part in inner if part.count(delimiter) >= width - 1) >= 2


def _swallowed_warning(lines: list[int]) -> str:
    return (f"a quoted value starting on {lines_list(lines)} runs over several lines that look like rows; "
            "if a quote there is a stray, fix it and load again (rows may be inside that value)")


def _records(text: str, delimiter: str, first_line: int) -> tuple[list[tuple[int, list[str]]], list[str]]:
    """(physical line where each record starts, its fields), reading unclosed quotes as characters."""
    out: list[tuple[int, list[str]]] = []
    repaired: list[int] = []
    offset = 0  # physical lines of ``text`` consumed before ``chunk``
    chunk = text
    while True:
        reader = csv.reader(io.StringIO(chunk, newline=""), delimiter=delimiter)
        rows, prev = [], 0
        for row in reader:
            rows.append((prev + 1, row))
            prev = reader.line_num
        bad = _unclosed(chunk, rows, delimiter)
        if bad is None:
            out += [(first_line + offset + rel - 1, row) for rel, row in rows]
            break
        if len(repaired) >= MAX_QUOTE_REPAIRS:
            raise DataLoadError(f"more than {MAX_QUOTE_REPAIRS} quotes are never closed (from "
                                f"{lines_list(repaired)}); the file's quoting is broken: export it again.")
        rel_bad, lines = bad
        out += [(first_line + offset + rel - 1, row) for rel, row in rows if rel < rel_bad]
        line = lines[rel_bad - 1].rstrip("\r\n")
        out.append((first_line + offset + rel_bad - 1,
                    next(csv.reader([line], delimiter=delimiter, quoting=csv.QUOTE_NONE), [])))
        repaired.append(first_line + offset + rel_bad - 1)
        chunk = "".join(lines[rel_bad:])
        offset += rel_bad
    warnings = []
    if repaired:
        warnings.append(f"a quote is never closed on {lines_list(repaired)}: it was read as a plain character "
                        "and every row below it was read as usual")
    return out, warnings


def _unclosed(chunk: str, rows: list[tuple[int, list[str]]], delimiter: str) -> tuple[int, list[str]] | None:
    """(1-based line of the last record, the chunk's lines) when that record's quote never closes."""
    if not rows or not any("\n" in c or "\r" in c for c in rows[-1][1]):
        return None
    lines = list(io.StringIO(chunk, newline=""))
    start = rows[-1][0]
    try:
        list(csv.reader(io.StringIO("".join(lines[start - 1:]), newline=""), delimiter=delimiter, strict=True))
    except csv.Error:
        return start, lines
    return None


def _width(row: list[str]) -> int:
    """Field count without trailing empty fields (Excel pads short rows with delimiters)."""
    n = len(row)
    while n > 1 and not row[n - 1].strip():
        n -= 1
    return n
