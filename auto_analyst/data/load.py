"""Placeholder loader (plain UTF-8 CSV); replaced by the robust loader of issue 4."""

from __future__ import annotations

import keyword
import re
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from auto_analyst.errors import DataLoadError

__all__ = ["LoadReport", "LoadedTable", "load", "load_all", "table_name"]


@dataclass
class LoadReport:
    path: str
    encoding: str = "utf-8"
    delimiter: str = ","
    header_row: int = 0
    notes: dict[str, str] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)

    def column_notes(self) -> dict[str, str]:
        return dict(self.notes)

    def summary_lines(self) -> list[str]:
        return [f"encoding {self.encoding}, delimiter {self.delimiter!r}, header row {self.header_row}", *self.warnings]


@dataclass
class LoadedTable:
    name: str
    frame: pd.DataFrame
    report: LoadReport


def table_name(path: str | Path, sheet: str | None = None) -> str:
    """A valid Python identifier from a file (and sheet) name: 'Sales 2023.csv' → 'sales_2023'."""
    stem = Path(path).stem if sheet is None else f"{Path(path).stem}_{sheet}"
    name = re.sub(r"\W+", "_", stem.lower()).strip("_") or "table"
    if name[0].isdigit() or keyword.iskeyword(name) or name in ("df", "tables"):
        name = "t_" + name
    return name


def load(path: str | Path, sheet: str | None = None, **options) -> LoadedTable:
    p = Path(path)
    if not p.exists():
        raise DataLoadError(f"No such file: {p}. Check the path.")
    try:
        frame = pd.read_csv(p)
    except Exception as exc:  # noqa: BLE001
        raise DataLoadError(f"Could not read {p.name} as CSV: {exc}") from None
    return LoadedTable(table_name(p, sheet), frame, LoadReport(str(p)))


def load_all(path: str | Path) -> list[LoadedTable]:
    return [load(path)]
