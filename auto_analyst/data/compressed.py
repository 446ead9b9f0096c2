"""Compressed files: gzip, bzip2, xz and zip archives that hold one table.

The file is expanded by streaming into a private temporary directory (never beside the user's
file), counting bytes as they come: the size limit applies to the expanded data, so a small
archive that expands to gigabytes (a zip bomb) is refused after ``max_file_mb`` MiB have been
written, not after the disk or memory is full. The expanded copy is deleted when loading ends.
"""

from __future__ import annotations

import bz2
import contextlib
import gzip
import lzma
import shutil
import tempfile
import zipfile
import zlib
from pathlib import Path, PurePosixPath
from typing import IO, Callable, Iterator

from auto_analyst.errors import DataLoadError

__all__ = ["COMPRESSIONS", "expanded", "inner_name", "sniff_format"]

COMPRESSIONS = {".gz": "gzip", ".gzip": "gzip", ".bz2": "bz2", ".xz": "xz", ".zip": "zip"}
_OPENERS: dict[str, Callable[[Path], IO[bytes]]] = {
    "gzip": lambda p: gzip.open(p, "rb"), "bz2": lambda p: bz2.open(p, "rb"), "xz": lambda p: lzma.open(p, "rb"),
}
CHUNK_BYTES = 1 << 20
# What a damaged or truncated archive raises, by library.
_BROKEN = (OSError, EOFError, zlib.error, lzma.LZMAError, zipfile.BadZipFile, ValueError, RuntimeError)


def inner_name(path: Path, known_suffixes) -> str | None:
    """The name of the file inside a gzip/bz2/xz file ('sales.csv.gz' → 'sales.csv'), or None
    when the name does not say (then the format is sniffed from the content)."""
    inner = path.name[: -len(path.suffix)] if path.suffix else path.name
    return inner if Path(inner).suffix.lower() in known_suffixes else None


def sniff_format(head: bytes) -> str:
    """The format of a file from its first bytes: parquet, excel (a zip container), json or csv."""
    if head.startswith(b"PAR1"):
        return "parquet"
    if head.startswith(b"PK\x03\x04"):
        return "excel"
    stripped = head.lstrip(b"\xef\xbb\xbf \t\r\n")
    return "json" if stripped[:1] in (b"[", b"{") else "csv"


@contextlib.contextmanager
def expanded(path: Path, compression: str, max_bytes: int, known_suffixes) -> Iterator[tuple[Path, str | None]]:
    """Expand a compressed file into a temporary file for the duration of the ``with`` block.

    Args:
        path: the compressed file.
        compression: gzip, bz2, xz or zip (a value of ``COMPRESSIONS``).
        max_bytes: the most expanded bytes accepted.
        known_suffixes: table file suffixes; a zip member with another suffix is not a table.

    Yields:
        (the expanded file, its name inside the archive or None when the name does not tell the format).

    Raises:
        DataLoadError: damaged or truncated archive, encrypted zip, a zip without exactly one
            table, or expanded data over ``max_bytes``.
    """
    tmp = Path(tempfile.mkdtemp(prefix="auto-analyst-"))
    try:
        if compression == "zip":
            name = _zip_member(path, tmp, max_bytes, known_suffixes)
        else:
            name = inner_name(path, known_suffixes)
            try:
                with _OPENERS[compression](path) as src:
                    _copy(src, tmp / "expanded", max_bytes, path.name)
            except DataLoadError:
                raise
            except _BROKEN:
                raise DataLoadError(f"{path.name} is not a readable {compression} file (damaged or cut short); "
                                    "compress the table again or load the uncompressed file.") from None
        yield tmp / "expanded", name
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def _zip_member(path: Path, tmp: Path, max_bytes: int, known_suffixes) -> str:
    try:
        with zipfile.ZipFile(path) as zf:
            members = [i for i in zf.infolist() if not i.is_dir() and not _hidden(i.filename)]
            tables = [i for i in members if PurePosixPath(i.filename).suffix.lower() in known_suffixes]
            if len(tables) != 1:
                names = ", ".join(PurePosixPath(i.filename).name for i in (tables or members)[:5])
                what = f"{len(tables)} tables ({names})" if tables else (f"no table file ({names})" if names
                                                                           else "no files")
                raise DataLoadError(f"{path.name} holds {what}; zip exactly one CSV, Excel, Parquet or JSON file, "
                                    "or unzip it and load the table you want.")
            info = tables[0]
            if info.file_size > max_bytes:
                raise _too_big(path.name, max_bytes)
            with zf.open(info) as src:
                _copy(src, tmp / "expanded", max_bytes, path.name)
            return PurePosixPath(info.filename).name
    except DataLoadError:
        raise
    except _BROKEN as exc:
        detail = "it is encrypted" if "encrypted" in str(exc) else "damaged or cut short"
        raise DataLoadError(f"{path.name} is not a readable zip file ({detail}); zip the table again without a "
                            "password, or load the uncompressed file.") from None


def _hidden(name: str) -> bool:
    parts = PurePosixPath(name).parts
    return any(p.startswith(".") or p == "__MACOSX" for p in parts)


def _copy(src: IO[bytes], dst: Path, max_bytes: int, name: str) -> None:
    total = 0
    with dst.open("wb") as out:
        while chunk := src.read(CHUNK_BYTES):
            total += len(chunk)
            if total > max_bytes:
                raise _too_big(name, max_bytes)
            out.write(chunk)


def _too_big(name: str, max_bytes: int) -> DataLoadError:
    return DataLoadError(f"{name} expands to more than the {max_bytes / 2**20:.0f} MB limit; "
                         "raise max_file_mb or load a smaller extract.")
