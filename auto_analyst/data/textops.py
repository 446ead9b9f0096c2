"""Byte-level helpers on pyarrow string columns, for steps where a kernel pass per cell is the cost.

pyarrow's regex kernels run RE2 on every cell (about a quarter of a second per million cells
for a replace); trimming and blank checks allocate a new column each. These helpers work on the
offsets and data buffers with numpy instead: a table lookup over the bytes answers "does any cell
contain X" or "delete these ASCII characters" in a few milliseconds. Each one handles only what
it can answer exactly and says so (returns None) otherwise, so callers fall back to the kernels.

ASCII bytes never occur inside a multi-byte UTF-8 sequence, so deleting or mapping ASCII bytes
keeps every other character intact.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

__all__ = ["any_bytes", "byte_table", "contains_text", "count_true", "delete_ascii", "int_text_shape", "map_ascii",
           "min_length", "normalize", "value_bytes"]

_NULL = pa.scalar(None, pa.string())
# Bytes that may begin or end a whitespace character for utf8_trim_whitespace: ASCII controls,
# space, DEL and every non-ASCII byte (Unicode spaces such as U+00A0 or U+3000). A cell starting
# or ending with one of them takes the exact kernel path.
_MAYBE_SPACE = np.zeros(256, bool)
_MAYBE_SPACE[:0x21] = True
_MAYBE_SPACE[0x7F:] = True


def count_true(mask) -> int:
    """Number of true cells of a boolean mask (nulls count as false); sums the bits, no int64 copy."""
    return int(pc.sum(mask).as_py() or 0)


def _parts(chunk: pa.Array) -> tuple[np.ndarray, np.ndarray] | None:
    """(offsets relative to the first value, the values' bytes) of a plain string chunk, or None."""
    if chunk.type != pa.string():
        return None
    bufs = chunk.buffers()
    if not len(chunk):
        return np.zeros(1, np.int32), np.zeros(0, np.uint8)
    offsets = np.frombuffer(bufs[1], np.int32, len(chunk) + 1, chunk.offset * 4)
    start, end = int(offsets[0]), int(offsets[-1])
    data = np.frombuffer(bufs[2], np.uint8, end - start, start) if bufs[2] is not None and end > start \
        else np.zeros(0, np.uint8)
    return offsets - start, data


def _null_slots_empty(chunk: pa.Array, offsets: np.ndarray) -> bool:
    """True when null cells hold no bytes (so a scan of the data buffer sees only real values)."""
    if not chunk.null_count:
        return True
    # The non-null cells' lengths add up to the whole span exactly when null cells are empty.
    return int(pc.sum(pc.binary_length(chunk)).as_py() or 0) == int(offsets[-1])


def value_bytes(arr: pa.ChunkedArray, exact: bool = True) -> list[np.ndarray] | None:
    """The bytes of the cells, one array per chunk; None for other types (or, when ``exact``,
    when null cells hold bytes: ``pc.if_else(mask, arr, null)`` leaves the replaced text there).

    With ``exact=False`` the bytes may include such leftovers: a search over them can only find
    too much, never too little, which is enough for "certainly not there" answers.
    """
    out = []
    for chunk in arr.chunks:
        parts = _parts(chunk)
        if parts is None or (exact and not _null_slots_empty(chunk, parts[0])):
            return None
        out.append(parts[1])
    return out


def any_bytes(arr: pa.ChunkedArray, table: np.ndarray, exact: bool = False) -> bool | None:
    """Whether any non-null cell holds a byte marked in ``table`` (256 booleans); None if unknown.

    False is always exact. True is exact only with ``exact=True`` (which costs a pass over the
    cell lengths when the column has nulls); otherwise it may come from bytes left in null cells,
    so use it as "maybe" (run the kernel), and ask ``exact=True`` when a True answer decides.

    The bytes' minimum and maximum (SIMD reductions, a fraction of a millisecond per million
    cells) usually settle it: number text has no byte above '9' but for letters and currency.
    A few wanted bytes are then searched with memchr; more take one table lookup.
    """
    chunks = value_bytes(arr, exact)
    if chunks is None:
        return None
    wanted = np.flatnonzero(table)
    for data in chunks:
        if not len(data):
            continue
        lo, hi = int(data.min()), int(data.max())
        inside = wanted[(wanted >= lo) & (wanted <= hi)]
        if not len(inside):
            continue
        if len(inside) <= 4:
            raw = data.tobytes()
            if any(raw.find(bytes([int(b)])) >= 0 for b in inside):
                return True
        elif table[data].any():
            return True
    return False


def contains_text(arr: pa.ChunkedArray, text: str) -> bool | None:
    """Whether any non-null cell contains ``text`` (False exact, True maybe, as :func:`any_bytes`);
    None if unknown (the caller runs the kernel)."""
    chunks = value_bytes(arr, exact=False)
    if chunks is None:
        return None
    needle = text.encode("utf-8")
    # A UTF-8 sequence cannot start inside another character, so a byte search finds whole characters.
    return any(needle in data.tobytes() for data in chunks if len(data))


def byte_table(chars: bytes) -> np.ndarray:
    """A 256-entry lookup table marking the given bytes."""
    table = np.zeros(256, bool)
    table[np.frombuffer(chars, np.uint8)] = True
    return table


def delete_ascii(arr: pa.ChunkedArray, chars: bytes) -> pa.ChunkedArray | None:
    """``arr`` with every byte in ``chars`` (ASCII only) removed from every cell; None if not a string column."""
    drop = byte_table(chars)
    out = []
    for chunk in arr.chunks:
        parts = _parts(chunk)
        if parts is None:
            return None
        offsets, data = parts
        keep = ~drop[data]
        if keep.all():
            out.append(chunk)
            continue
        kept = np.empty(len(data) + 1, np.int32)
        kept[0] = 0
        np.cumsum(keep, dtype=np.int32, out=kept[1:])
        out.append(_rebuild(chunk, kept[offsets], data[keep]))
    return pa.chunked_array(out, pa.string())


def map_ascii(arr: pa.ChunkedArray, old: bytes, new: bytes) -> pa.ChunkedArray | None:
    """``arr`` with ASCII bytes ``old[i]`` replaced by ``new[i]``; None if not a string column."""
    table = np.arange(256, dtype=np.uint8)
    table[np.frombuffer(old, np.uint8)] = np.frombuffer(new, np.uint8)
    out = []
    for chunk in arr.chunks:
        parts = _parts(chunk)
        if parts is None:
            return None
        offsets, data = parts
        out.append(_rebuild(chunk, offsets, table[data]))
    return pa.chunked_array(out, pa.string())


def _rebuild(chunk: pa.Array, offsets: np.ndarray, data: np.ndarray) -> pa.Array:
    """A string array with new offsets and bytes and the validity of ``chunk``."""
    validity = chunk.buffers()[0]
    if validity is not None and chunk.offset:
        # The bitmap is shifted by the slice offset: pad the offsets so slot i still lines up.
        offsets = np.concatenate([np.zeros(chunk.offset, np.int32), offsets])
    return pa.StringArray.from_buffers(len(chunk), pa.py_buffer(offsets), pa.py_buffer(data),
                                       validity if validity is not None else None, chunk.null_count,
                                       chunk.offset if validity is not None else 0)


def int_text_shape(arr: pa.ChunkedArray) -> tuple[bool, int] | None:
    """(whether a cell has a leading zero, like '007', the longest cell in bytes) of a text column
    of integers, from the offsets and first bytes only; None for other types or odd layouts."""
    leading, longest = False, 0
    for chunk in arr.chunks:
        parts = _parts(chunk)  # bytes left in null cells can only add a leading zero: a slower path
        if parts is None:
            return None
        offsets, data = parts
        lengths = np.diff(offsets)
        if not len(lengths):
            continue
        longest = max(longest, int(lengths.max()))
        multi = offsets[:-1][lengths > 1]
        leading = leading or bool((data[multi] == ord("0")).any())
    return leading, longest


def min_length(arr: pa.ChunkedArray) -> int | None:
    """The byte length of the shortest non-null cell; None when there is none."""
    return pc.min(pc.binary_length(arr)).as_py() if arr.null_count < len(arr) else None


def normalize(raw: pa.ChunkedArray) -> pa.ChunkedArray:
    """Cells trimmed of surrounding whitespace, blank cells as null.

    Most columns need neither (the CSV reader already nulls empty cells): a check of each cell's
    first and last byte proves it and the column is returned as is, without a copy. Columns that
    are not text (the reader converted them) are returned as they are.
    """
    if not (pa.types.is_string(raw.type) or pa.types.is_large_string(raw.type)):
        return raw
    if not _needs_trim(raw):
        return raw
    arr = pc.utf8_trim_whitespace(raw)
    return pc.if_else(pc.equal(arr, ""), _NULL, arr)


def _needs_trim(arr: pa.ChunkedArray) -> bool:
    if arr.null_count < len(arr) and pc.min(pc.binary_length(arr)).as_py() == 0:
        return True  # an empty string that is not null
    for chunk in arr.chunks:
        parts = _parts(chunk)  # bytes left in null cells can only make it trim: never wrong, at worst slower
        if parts is None:
            return True
        offsets, data = parts
        if not len(data) or (int(data.min()) > 0x20 and int(data.max()) < 0x7F):
            continue  # no space, control or non-ASCII byte anywhere: nothing to trim
        # Check each non-empty cell's first and last byte (null cells are empty: skip them).
        filled = offsets[:-1] < offsets[1:]
        starts, ends = offsets[:-1], offsets[1:] - 1
        if not filled.all():
            starts, ends = starts[filled], ends[filled]
        if _MAYBE_SPACE[data[starts]].any() or _MAYBE_SPACE[data[ends]].any():
            return True
    return False
