"""The load report: what loading found (encoding, dialect, header) and did to each column.

The report is plain data (dataclasses) so it serialises to JSON with :meth:`LoadReport.to_dict`,
and it has two short renderings for the agents: :meth:`LoadReport.column_notes` (one note per
column, shown beside the column in the dataset description) and :meth:`LoadReport.summary_lines`
(the file-level facts).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

import pandas as pd

__all__ = ["ColumnReport", "LoadReport", "LoadedTable"]

InferredType = str  # one of: integer, float, boolean, datetime, string, identifier, empty


@dataclass
class ColumnReport:
    """What loading inferred or converted for one column.

    Attributes:
        name: the column name in the loaded frame (stripped, de-duplicated).
        original: the header cell as it was in the file ('' when empty).
        inferred_type: integer, float, boolean, datetime, string, identifier or empty.
        dtype: the pandas dtype of the loaded column.
        conversion: how text became values, e.g. "currency text → float"; '' when nothing was done.
        n_placeholders: cells such as 'N/A', '-', '#DIV/0!' or blanks that became missing.
        n_inf: cells spelled 'inf'/'infinity' that became missing (not a valid measurement).
        n_unparsed: cells that did not fit the column's type and became missing.
        unparsed_examples: up to 5 of those cells, as written.
        note: anything else worth telling the agents (name clashes, ambiguous day/month order).
        thousands: the thousands separator removed from this column's numbers ('' when none).
    """

    name: str
    original: str = ""
    inferred_type: InferredType = "string"
    dtype: str = ""
    conversion: str = ""
    n_placeholders: int = 0
    n_inf: int = 0
    n_unparsed: int = 0
    unparsed_examples: list[str] = field(default_factory=list)
    note: str = ""
    thousands: str = ""

    def short_note(self) -> str:
        """One line for the dataset description, '' when there is nothing to say."""
        parts = []
        if self.original and self.original != self.name:
            parts.append(f"header was {self.original!r}")
        if self.conversion:
            parts.append(self.conversion)
        if self.n_placeholders:
            parts.append(f"{self.n_placeholders} blanks/placeholders → missing")
        if self.n_inf:
            parts.append(f"{self.n_inf} 'inf' → missing")
        if self.n_unparsed:
            ex = ", ".join(repr(_cut(e, 40)) for e in self.unparsed_examples[:3])
            parts.append(f"{self.n_unparsed} unparsed → missing (e.g. {ex})")
        if self.note:
            parts.append(self.note)
        return "; ".join(parts)


@dataclass
class LoadReport:
    """File-level facts found while loading, plus one :class:`ColumnReport` per column.

    Attributes:
        path: the file as given.
        format: csv, excel, parquet or json (of the table inside, for a compressed file).
        compression: gzip, bz2, xz or zip when the file was compressed ('' otherwise).
        encoding: the text encoding used ('' for binary formats).
        delimiter: the field delimiter ('' when not a delimited text file).
        decimal: the decimal mark used for numbers written as text.
        thousands: the thousands separator removed from numbers ('' when none was seen).
        header_row: 0-based line (CSV) or row (Excel) of the header.
        n_rows: data rows in the loaded frame.
        skipped_rows: metadata lines above the header, totals/notes rows below the data and empty rows.
        sheet: the workbook sheet, when the file is a workbook.
        columns: per-column reports, in frame order.
        warnings: things the user should check (ambiguous dates, repaired rows, dropped columns).
    """

    path: str
    format: str = "csv"
    compression: str = ""
    encoding: str = ""
    delimiter: str = ""
    decimal: str = "."
    thousands: str = ""
    header_row: int = 0
    n_rows: int = 0
    skipped_rows: list[str] = field(default_factory=list)
    sheet: str | None = None
    columns: list[ColumnReport] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)

    def column(self, name: str) -> ColumnReport:
        """The report of one column. Raises KeyError for an unknown name."""
        for c in self.columns:
            if c.name == name:
                return c
        raise KeyError(name)

    def column_notes(self) -> dict[str, str]:
        """Column name → short note, only for columns with something to say."""
        return {c.name: n for c in self.columns if (n := c.short_note())}

    def summary_lines(self) -> list[str]:
        """The report in a few short lines (used by ``describe_tables`` as ``load_notes``)."""
        where = f"sheet {self.sheet!r}, " if self.sheet is not None else ""
        packed = f" ({self.compression})" if self.compression else ""
        kind = "database table" if self.format == "sql" else f"{self.format} file{packed}"
        first = f"{kind}, {where}{self.n_rows} rows × {len(self.columns)} columns"
        if self.format == "csv":
            first += f"; encoding {self.encoding}, delimiter {self.delimiter!r}"
            if self.decimal != "." or self.thousands:
                first += f", decimal {self.decimal!r}, thousands {self.thousands or 'none'!r}"
        if self.format in ("csv", "excel"):
            first += f"; header on row {self.header_row + 1}"
        lines = [first]
        if self.skipped_rows:
            lines.append(f"skipped {len(self.skipped_rows)} non-data rows: "
                         + "; ".join(_clip(s) for s in self.skipped_rows[:3])
                         + (" …" if len(self.skipped_rows) > 3 else ""))
        return lines + list(self.warnings)

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON-ready dict (the schema is documented in docs/describe.md)."""
        return asdict(self)


@dataclass
class LoadedTable:
    """One loaded table: its variable name, the frame and the load report."""

    name: str
    frame: pd.DataFrame
    report: LoadReport


def _clip(text: str, width: int = 60) -> str:
    text = " ".join(str(text).split())
    return repr(_cut(text, width))


def _cut(text: str, width: int) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"
