"""Sniffing a delimited text file from a sample: encoding, dialect and the header line.

Detection uses well-kept libraries (charset-normalizer for the encoding; the standard library's
``csv.Sniffer``, with clevercsv when its answer is doubtful, for the dialect) on a sample, never
the whole file.
"""

from __future__ import annotations

import codecs
import csv
import io
from collections import Counter
from dataclasses import dataclass

from auto_analyst.errors import DataLoadError

__all__ = ["Dialect", "detect_encoding", "detect_dialect", "find_header", "header_index", "lift_field_limit",
           "mostly_utf8", "SAMPLE_BYTES"]

# 256 KiB holds a few thousand rows of a typical export: enough for the detectors, and fast
# (clevercsv's consistency measure grows with sample size; 256 KiB takes ~50 ms here).
SAMPLE_BYTES = 256 * 1024
DELIMITERS = [",", ";", "\t", "|"]
# Rows of the sample scanned for metadata lines above the header.
HEADER_SCAN_ROWS = 60
# The csv module refuses fields over 128 KiB by default; a cell of a real table may be larger (a
# document, a JSON blob). pyarrow's reader has no such limit; the careful path must not have one.
FIELD_LIMIT = 2**31 - 1


def lift_field_limit() -> None:
    """Raise the ``csv`` module's field size limit (a process-wide setting) so long cells load whole."""
    if csv.field_size_limit() < FIELD_LIMIT:
        csv.field_size_limit(FIELD_LIMIT)


@dataclass
class Dialect:
    """The delimiter and quote character of a text table."""

    delimiter: str = ","
    quotechar: str = '"'


def detect_encoding(sample: bytes, *, complete: bool, name: str = "file") -> str:
    """Guess the text encoding of ``sample`` (the first bytes of a file).

    BOMs decide first; then strict UTF-8; then charset-normalizer. Among charset-normalizer's
    equally good single-byte guesses we prefer cp1252, the encoding Excel on Western Windows
    writes (the WHATWG Encoding Standard maps the 'latin-1' label to it for the same reason);
    short samples otherwise often come back as cp1250, which turns 'è' into 'č'.

    Args:
        sample: leading bytes of the file.
        complete: True when ``sample`` is the whole file (a cut multi-byte character at its end
            is then an error, not an artefact of sampling).
        name: file name for error messages.

    Returns:
        A Python codec name (``utf-8``, ``utf-8-sig``, ``utf-16``, ``cp1252``, ...).

    Raises:
        DataLoadError: the bytes look binary (NUL bytes that are not UTF-16), not text.
    """
    if sample.startswith(codecs.BOM_UTF8):
        return "utf-8-sig"
    if sample.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        return "utf-16"
    if b"\x00" in sample:
        even, odd = sample[0::2], sample[1::2]
        # UTF-16 text of mostly ASCII has a NUL in every other byte.
        if odd and odd.count(0) > 0.4 * len(odd) and even.count(0) < 0.05 * len(even):
            return "utf-16-le"
        if even and even.count(0) > 0.4 * len(even) and odd.count(0) < 0.05 * len(odd):
            return "utf-16-be"
        raise DataLoadError(f"{name} looks like a binary file, not a table; export it as CSV, Excel, Parquet or JSON.")
    try:
        codecs.getincrementaldecoder("utf-8")().decode(sample, final=complete)
        return "utf-8"
    except UnicodeDecodeError:
        if mostly_utf8(sample):
            return "utf-8"  # a damaged byte or two in UTF-8 text; the reader replaces and reports them
    from charset_normalizer import from_bytes  # imported here: loading a UTF-8 file never needs it

    matches = list(from_bytes(sample))
    if not matches:
        raise DataLoadError(f"{name} is not readable text in any known encoding; "
                            "pass encoding=... or export it again as UTF-8 CSV.")
    best = min(m.chaos for m in matches)
    for m in matches:
        if m.chaos <= best + 0.01 and "cp1252" in m.could_be_from_charset:
            return _decodable("cp1252", sample) or "latin-1"
    return _codec_name(matches[0].encoding)


# Share of bad bytes among the multi-byte characters up to which text still counts as damaged
# UTF-8: decoding it as cp1252 instead would garble every accented letter of the file.
MAX_DAMAGED_SHARE = 0.05


def mostly_utf8(data: bytes) -> bool:
    """True when ``data`` is UTF-8 text with a few invalid bytes: many valid multi-byte characters
    and at most ``MAX_DAMAGED_SHARE`` as many bad bytes. Legacy encodings (cp1252) have almost no
    valid multi-byte sequences, so they never qualify."""
    text = data.decode("utf-8", errors="replace")
    n_bad = text.count("\ufffd") - data.count("\ufffd".encode())
    n_wide = len(data) - len(text) + n_bad  # bytes taken by valid multi-byte characters, roughly
    return n_wide >= 2 and n_bad <= MAX_DAMAGED_SHARE * n_wide


def _decodable(enc: str, sample: bytes) -> str | None:
    try:
        codecs.getincrementaldecoder(enc)().decode(sample, final=False)
        return enc
    except UnicodeDecodeError:
        return None


def _codec_name(enc: str) -> str:
    return codecs.lookup(enc).name


def detect_dialect(text: str, delimiter: str | None = None) -> Dialect:
    """Find the delimiter (one of , ; tab |) and quote character of a text sample.

    Args:
        text: decoded sample, cut at a line end.
        delimiter: the user's choice; skips detection of the delimiter.

    Returns:
        The dialect. A file with no delimiter at all is one column, read with ','.
    """
    if delimiter:
        return Dialect(delimiter=delimiter)
    lines = text.splitlines()
    head = "\n".join(lines[:200])  # both sniffers slow down with sample size; 200 lines suffice
    candidates: list[str] = []
    try:
        candidates.append(csv.Sniffer().sniff(head, delimiters="".join(DELIMITERS)).delimiter)
    except csv.Error:
        pass
    if not candidates or _consistency(lines, candidates[0]) < 0.9:
        # clevercsv (pattern and type consistency) is the better detector for messy samples,
        # but costs ~0.5 s to import, so it is asked only when csv.Sniffer's answer is doubtful.
        try:
            import clevercsv

            d = clevercsv.Sniffer().sniff(head, delimiters=DELIMITERS)
            if d is not None and d.delimiter in DELIMITERS:
                candidates.insert(0, d.delimiter)
        except Exception:  # noqa: BLE001 - clevercsv raises plain Errors on odd samples; fall back
            pass
    candidates += [d for d in DELIMITERS if d not in candidates]
    # clevercsv can be fooled by metadata lines above the header; keep its answer only if the
    # lines below parse into a consistent table, else take the most consistent delimiter.
    scored = [(_consistency(lines, d), -i, d) for i, d in enumerate(candidates)]
    best = max(scored)
    chosen = candidates[0] if _consistency(lines, candidates[0]) >= best[0] - 0.05 else best[2]
    if _consistency(lines, chosen) == 0:
        chosen = ","
    return Dialect(delimiter=chosen)


def _consistency(lines: list[str], delimiter: str) -> float:
    """Share of the last rows of the sample that have the modal field count (0 if that is 1)."""
    try:
        rows = [r for r in csv.reader(io.StringIO("\n".join(lines[:400]), newline=""), delimiter=delimiter) if r]
    except csv.Error:
        return 0.0
    rows = rows[len(rows) // 4:] or rows  # skip the top, where metadata lines live
    if not rows:
        return 0.0
    width, n = Counter(len(r) for r in rows).most_common(1)[0]
    return 0.0 if width < 2 else n / len(rows)


def find_header(text: str, dialect: Dialect, header_row: int | None = None) -> tuple[int, int, list[str], list[str]]:
    """Find the header line below any metadata lines (report titles, export dates, blank lines).

    Args:
        text: decoded sample, cut at a line end.
        dialect: from :func:`detect_dialect`.
        header_row: the user's 0-based record index of the header (blank lines count); skips detection.

    Returns:
        (header record index, physical lines up to and including the header, header cells,
        the metadata lines skipped).

    Raises:
        DataLoadError: ``header_row`` is beyond the sample.
    """
    reader = csv.reader(io.StringIO(text, newline=""), delimiter=dialect.delimiter, quotechar=dialect.quotechar)
    rows: list[tuple[int, list[str]]] = []
    limit = HEADER_SCAN_ROWS if header_row is None else header_row + 1
    try:
        for row in reader:
            rows.append((reader.line_num, row))
            if len(rows) >= limit:
                break
    except csv.Error:
        pass
    if header_row is not None:
        if header_row >= len(rows):
            raise DataLoadError(f"header_row={header_row} is past the first {len(rows)} rows of the file; "
                                "pass a smaller header_row.")
        skipped = [dialect.delimiter.join(c for c in r if c.strip()) for _, r in rows[:header_row]]
        return header_row, rows[header_row][0], rows[header_row][1], [s for s in skipped if s]
    index = header_index([r for _, r in rows])
    if index is None:
        return 0, 0, [], []
    skipped = [dialect.delimiter.join(c for c in r if c.strip()) for _, r in rows[:index]]
    return index, rows[index][0], rows[index][1], [s for s in skipped if s]


def header_index(rows: list[list[str]]) -> int | None:
    """Index of the header among the first rows of a table (None when every row is blank).

    The header is the first row as wide as the table's usual row (trailing empty cells ignored)
    with at least half of its cells filled; rows above it are metadata.
    """
    filled = [(i, r) for i, r in enumerate(rows) if any(str(c).strip() for c in r)]
    if not filled:
        return None
    widths = Counter(_width(r) for _, r in filled[len(filled) // 3:] or filled)
    width = max(widths.items(), key=lambda kv: (kv[1], kv[0]))[0]
    for i, r in filled:
        n_filled = sum(1 for c in r if str(c).strip())
        if len(r) >= width and n_filled >= max(1, (width + 1) // 2):
            return i
    return filled[0][0]


def _width(row: list[str]) -> int:
    """Field count without trailing empty fields (Excel pads short rows with delimiters)."""
    n = len(row)
    while n > 1 and not str(row[n - 1]).strip():
        n -= 1
    return n
