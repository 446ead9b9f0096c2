"""The tables of a session: loading files, adding frames, dropping, finding and choosing the active table.

A mixin of :class:`~auto_analyst.session.Session` (its tables, lock, runner, settings and folder), kept apart
so the session module stays about the conversation. Databases and data dictionaries are in
:mod:`auto_analyst.session_sources`.
"""

from __future__ import annotations

import difflib
import secrets
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pandas as pd

from auto_analyst.data.catalog import describe_session
from auto_analyst.data.description import DatasetDescription
from auto_analyst.data.dictionary import DataDictionary, is_dictionary_file
from auto_analyst.data.duck import load_duckdb, use_duckdb
from auto_analyst.data.load import LoadedTable, LoadReport, load, load_all, table_name, unreadable
from auto_analyst.data.sql_source import is_sql_url
from auto_analyst.data.sql_url import unknown_url_scheme
from auto_analyst.errors import BadInputError, DataLoadError, NotFoundError
from auto_analyst.saved_sessions import Upload, record_upload, upload_folder, upload_name

if TYPE_CHECKING:
    from auto_analyst.config import Settings
    from auto_analyst.runtime import Runtime
    from auto_analyst.session_runner import SessionRunner

__all__ = ["SessionDescription", "TableMethods"]


@dataclass
class SessionDescription:
    """What :meth:`Session.describe` returns: the loaded tables (with their load reports) and the description.

    ``to_dict()`` is the JSON of ``auto-analyst describe --json`` (documented in docs/describe.md).
    """

    tables: list[LoadedTable]
    description: DatasetDescription

    def to_dict(self) -> dict[str, Any]:
        return {"tables": [{"name": t.name, "report": t.report.to_dict()} for t in self.tables],
                "description": self.description.model_dump(mode="json")}



class TableMethods:
    """``load``, ``add_frame``, ``drop``, ``find_table``, ``use`` and the description of a session's tables."""

    settings: Settings
    runtime: Runtime
    user: str
    id: str
    dir: Path
    tables: dict[str, LoadedTable]
    active: str
    dictionary: DataDictionary | None
    _lock: threading.Lock
    _runner: SessionRunner
    _description: DatasetDescription | None

    def load(self, path: str | Path, name: str | None = None, sheet: str | None = None, **options: Any) -> list[LoadedTable]:
        """Load a file (every sheet of a workbook) and make its (first) table the active one.

        Tables are named by :func:`auto_analyst.data.load.table_name` (the names ``/tables``, ``describe``
        and the page show): ``sales.csv`` is ``sales``, the sheets of ``econ.xlsx`` are ``econ_macrodata`` and
        ``econ_fair`` (a workbook with one sheet of data is ``econ``). A name already taken gets ``_2``.

        Args:
            path: a CSV, TSV, Excel, Parquet or JSON file.
            name: the name instead of the file's (a workbook's sheets are then ``name_sheet``; with ``sheet``
                given, the table is ``name``).
            sheet: load only this sheet of a workbook.
            **options: the loader's options (encoding, delimiter, decimal, ..., ``max_file_mb``; see
                :func:`auto_analyst.data.load.load`).

        Raises:
            DataLoadError: the file cannot be read as a table (the message says why and what to do), or this user
                may not read it or a folder above it (:func:`~auto_analyst.data.load.unreadable`).
        """
        try:
            return self._load(path, name, sheet, **options)
        except PermissionError as exc:
            # only a refusal on the path itself or a folder above it is a read failure; one on the session's own
            # folder (a write under home) keeps its meaning for the caller
            target = Path(path).expanduser().absolute()
            if exc.filename is None or Path(exc.filename).absolute() not in (target, *target.parents):
                raise
            raise unreadable(path) from exc

    def _load(self, path: str | Path, name: str | None, sheet: str | None, **options: Any) -> list[LoadedTable]:
        if is_sql_url(str(path)):
            return self.connect(str(path))
        unknown_url_scheme(str(path))
        from auto_analyst.data.parquet_folder import folder_database, is_parquet_folder

        if is_parquet_folder(path):  # read by DuckDB in place, as a database (docs/sources.md)
            return self.connect(folder_database(path, self.dir / "sources", name or table_name(Path(path).name,
                                                                                              base=Path(path).name)))
        if is_dictionary_file(path):
            self.load_dictionary(path)
            return []
        options = {"max_file_mb": self.settings.max_file_mb} | options
        if use_duckdb(path, self.settings):  # past duckdb_min_mb: into DuckDB, never into pandas (docs/scale.md)
            from auto_analyst.execution.duckns import FOLDER

            loaded = [load_duckdb(path, self.dir / FOLDER, self.settings, sheet=sheet, **options)]
        else:
            loaded = load_all(path, **options) if sheet is None else [load(path, sheet=sheet, **options)]
        with self._lock:  # a question running in another thread keeps the tables it started with
            for t in loaded:
                if name:
                    by_sheet = sheet is None and len(loaded) > 1
                    t.name = table_name(path, t.report.sheet if by_sheet else None, base=name)
                t.name = self._unique(t.name)
                self.tables[t.name] = t
            self._changed(loaded[0].name)
        return loaded

    def upload(self, original_name: str, save: Callable[[Path], None]) -> Upload:
        """Store a file a user uploaded and load it as :meth:`load` does, its tables named after ``original_name``.

        The file is written by ``save`` under a generated name in the session's upload folder
        (:func:`~auto_analyst.saved_sessions.upload_folder`), recorded in the history with its original name (so
        :meth:`Analyst.reopen <auto_analyst.api.Analyst.reopen>` reloads it), and the session state is saved.

        Args:
            original_name: the user's file name (metadata only: it never becomes a path).
            save: writes the uploaded bytes to the path it is given.

        Returns:
            the :class:`~auto_analyst.saved_sessions.Upload` (no tables for a data dictionary).

        Raises:
            BadUploadError: no file name, or a type that is no table format nor a data dictionary.
            DataLoadError: the file is not a loadable table (the message names it by ``original_name``).
            NotFoundError: the account the session writes for (``owner``) was removed meanwhile; the file is deleted.
        """
        name, suffix = upload_name(original_name)
        folder = upload_folder(self.settings, self.user, self.id)
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / f"{secrets.token_hex(8)}{suffix}"
        save(path)
        try:
            loaded = self.load(path, name=table_name(name))
        except DataLoadError as exc:
            path.unlink(missing_ok=True)
            raise DataLoadError(str(exc).replace(str(path), name).replace(path.name, name)) from None
        upload = Upload(str(path), name, tuple(t.name for t in loaded))
        if not record_upload(self.runtime.memory.history, self.user, self.id, upload, getattr(self, "owner", None)):
            for t in loaded:
                self.drop(t.name)
            _discard(path)
            raise NotFoundError(f"The account {self.user!r} was removed while {name} was being uploaded; the file "
                                "was not kept.")
        self.save_state()
        return upload

    def save_state(self, only_changed: bool = False) -> None:
        raise NotImplementedError  # the session's (auto_analyst.session.Session.save_state)

    def add_frame(self, name: str, frame: pd.DataFrame) -> LoadedTable:
        """Add an in-memory DataFrame as a table (it becomes the active one)."""
        with self._lock:
            t = LoadedTable(self._unique(table_name(name, base=name)), frame, LoadReport(path=f"<DataFrame {name}>"))
            self.tables[t.name] = t
            self._changed(t.name)
        return t

    def drop(self, name: str) -> None:
        """Remove table ``name`` (the next table becomes active if it was).

        Raises:
            BadInputError: no such table, or ``name`` fits several (see :meth:`find_table`).
        """
        with self._lock:
            name = self.find_table(name)
            del self.tables[name]
            self._changed(self.active if self.active != name else next(iter(self.tables), ""))

    def _unique(self, name: str) -> str:
        base, k = name, 2
        while name in self.tables:
            name, k = f"{base}_{k}", k + 1
        return name

    def _changed(self, active: str) -> None:
        """The tables or the active one changed: a new description, and the running worker gets them."""
        self.active = active
        self._description = None
        self._runner.push_tables(self.tables, active)

    def find_table(self, text: str) -> str:
        """The table ``text`` names: its name, a sheet's name, or an unambiguous start of a name.

        ``econ_fair`` is found by ``econ_fair``, ``Econ Fair``, ``fair`` (its sheet) or ``econ_f``; a close
        misspelling is suggested, never picked.

        Raises:
            BadInputError: no table fits (close names are suggested), or several fit (they are listed).
        """
        text = (text or "").strip()
        if text in self.tables:
            return text
        key = table_name(text, base=text) if text else ""
        if key in self.tables:
            return key
        fits = [n for n, t in self.tables.items() if getattr(t.report, "sheet", None) is not None
                and table_name(text, base=t.report.sheet) == key]
        if not fits and key:
            fits = [n for n in self.tables if n.startswith(key)]
        if len(fits) == 1:
            return fits[0]
        names = ", ".join(self.tables) or "none loaded"
        if fits:
            raise BadInputError(f"{text!r} fits several tables ({', '.join(fits)}); type more of the name.")
        spoken = {n: n for n in self.tables} | {  # what a user may type for a table: its name or its sheet's
            table_name(n, base=t.report.sheet): n for n, t in self.tables.items()
            if getattr(t.report, "sheet", None) is not None}
        close = list(dict.fromkeys(spoken[c] for c in difflib.get_close_matches(key, list(spoken), n=3, cutoff=0.6)))
        hint = f" Did you mean {' or '.join(map(repr, close))}?" if close else ""
        raise BadInputError(f"No table {text!r}.{hint} Tables: {names}.")

    def use(self, name: str) -> str:
        """Make a table the active one (bound to ``df``); the next question is planned against it.

        Args:
            name: the table's name, its sheet's name or an unambiguous start of it (see :meth:`find_table`).

        Returns:
            The name of the table now active.

        Raises:
            BadInputError: no such table, or ``name`` fits several.
        """
        with self._lock:  # not in the middle of a question: it keeps the table it started with
            name = self.find_table(name)
            self.active = name
            self._description = None
            self._runner.set_active(name)
        return name

    @property
    def description(self) -> DatasetDescription:
        """The compact dataset description the agents get (built once per change of tables)."""
        if self._description is None:
            self._description = describe_session(self.tables, self.active, self.dictionary)
        return self._description

    def describe(self) -> SessionDescription:
        """The loaded tables with their load reports, and the dataset description the agents get."""
        return SessionDescription(list(self.tables.values()), self.description)


def _discard(path: Path) -> None:
    """Delete an upload's file, and its session's and user's upload folders when that leaves them empty (made again
    by the upload after the removal's sweep had deleted them)."""
    path.unlink(missing_ok=True)
    for folder in (path.parent, path.parent.parent):
        try:
            folder.rmdir()
        except OSError:  # not empty: another upload's files are there
            break
