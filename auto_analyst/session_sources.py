"""What a session reads besides files: a SQL database (:meth:`SourceMethods.connect`) and a data dictionary.

A mixin of :class:`~auto_analyst.session.Session` (its tables, lock, runner and settings), kept apart so the
session module stays about the conversation. See docs/sources.md.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

from auto_analyst.data.dictionary import DataDictionary
from auto_analyst.data.load import LoadedTable, table_name
from auto_analyst.data.sql_source import is_sql_url
from auto_analyst.errors import BadInputError, DataLoadError

log = logging.getLogger(__name__)

__all__ = ["SourceMethods"]


class SourceMethods:
    """``connect``, ``load_dictionary`` and ``reconnect`` of a session."""

    tables: dict[str, Any]
    dictionary: DataDictionary | None
    source: Any

    def connect(self, url: str, tables: list[str] | None = None) -> list[LoadedTable]:
        """Add the tables of a SQL database (all, or ``tables``); the first becomes active.

        The tables stay in the database: they are described from its catalog and first rows, and scripts read them
        with ``sql("SELECT ...")``, run read-only by this process (docs/sources.md). One database per session.

        Args:
            url: a SQLAlchemy URL (``postgresql://user@host/db``, ``sqlite:///file.db``, ``duckdb:///file.duckdb``);
                a password may be in it or in the environment (``PGPASSWORD``); it is never stored.
            tables: the tables to add (default: every table and view).

        Raises:
            DataLoadError: the database cannot be reached or has no tables.
            BadInputError: ``url`` is no database URL, another database is already connected, or a name is not a
                table of it.
        """
        from auto_analyst.data.sql_source import SqlSource, load_sql_tables

        if not is_sql_url(url):
            raise BadInputError("Give a database URL such as postgresql://user@host/db or sqlite:///file.db.")
        source = SqlSource(url, timeout_s=self.settings.sql_timeout_s,
                           max_rows=self.settings.sql_max_rows)
        if self.source is not None and self.source.safe_url != source.safe_url:
            source.close()
            raise BadInputError(f"This session already reads {self.source.safe_url}; one database per session "
                                "(start another session for another database).")
        loaded = load_sql_tables(source, tables)
        with self._lock:
            self.source = source
            for t in loaded:
                t.name = self._unique(table_name(t.name, base=t.name))
                self.tables[t.name] = t
            self._runner.sql_source = source
            self._changed(loaded[0].name)
        return loaded

    def load_dictionary(self, path: str | Path) -> DataDictionary:
        """Load a data dictionary (``.md``/``.txt``: what the columns mean); a second one adds to the first.

        Raises:
            DataLoadError: the file cannot be read as text.
        """
        loaded = DataDictionary.load(path)
        with self._lock:
            self.dictionary = loaded if self.dictionary is None else self.dictionary.merged(loaded)
            self.dictionary_paths = [*getattr(self, "dictionary_paths", []), str(Path(path).expanduser().resolve())]
            self._description = None
        return self.dictionary

    def reconnect(self, state: dict[str, Any]) -> None:
        """Reconnect the databases and reload the dictionaries of a saved state (credentials from the environment:
        none are stored); the file tables are reloaded by ``Session.resume``. A database that cannot be reached (a
        password that was only in the URL typed earlier) is left out, as a file that is gone."""
        from auto_analyst.session_state import table_sources

        databases: dict[str, list[str]] = {}
        for _name, path, _sheet in table_sources(state):
            if is_sql_url(path):
                url, _, table = path.rpartition("#")
                databases.setdefault(url, []).append(table)
        for url, names in databases.items():
            try:
                self.connect(url, names)
            except (DataLoadError, BadInputError) as exc:  # as a file that is gone: left out, the session goes on
                log.warning("not reconnected to %s on resume: %s", url, exc)
        for path in state.get("dictionaries", []):
            if Path(path).exists():
                self.load_dictionary(path)
