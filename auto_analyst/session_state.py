"""What a session keeps between processes (for ``chat --resume`` and reopened web conversations).

The state is a JSON object: ``{"tables": {name: {"path", "sheet"}}, "active", "memory", "turn"}``
(the short-term memory as ``ShortTermMemory.to_json()``), saved in the history database. The
tables themselves are not copied: they are reloaded from their source files.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from auto_analyst.errors import BadInputError, NotFoundError

if TYPE_CHECKING:
    from auto_analyst.data.load import LoadedTable
    from auto_analyst.memory.services import MemoryServices
    from auto_analyst.memory.context.short_term import ShortTermMemory

__all__ = ["snapshot", "saved_state", "sheet_named", "table_sources"]


def snapshot(tables: Mapping[str, LoadedTable], active: str, memory: ShortTermMemory, turn: int) -> dict[str, Any]:
    """The state of a session: its tables' sources, the active table, its short-term memory and turn counter."""
    return {"tables": {n: {"path": t.report.path, "sheet": getattr(t.report, "sheet", None)} for n, t in tables.items()},
            "active": active, "memory": memory.to_json(), "turn": turn}


def saved_state(services: MemoryServices, user: str, session_id: str | None = None) -> tuple[str, dict[str, Any]]:
    """(session id, state) of the user's session ``session_id`` (default: the last one).

    Raises:
        BadInputError: the user has no saved session at all.
        NotFoundError: the user has no saved session ``session_id``.
    """
    history = services.history
    if session_id is None:
        last = history.last_session(user)
        if last is None:
            raise BadInputError("There is no earlier session to resume; start one with `auto-analyst chat FILE`.")
        session_id = last.session_id
    state = history.load_session_state(user, session_id)
    if not state:
        raise NotFoundError(f"No saved session {session_id!r} for user {user!r}; see `auto-analyst history sessions`.")
    return session_id, json.loads(state) if isinstance(state, str) else state


def table_sources(state: Mapping[str, Any]) -> list[tuple[str, str, str | None]]:
    """(table name, source path, sheet or None) of each table in a saved state (older states stored just the path)."""
    out = []
    for name, source in state.get("tables", {}).items():
        path, sheet = (source, None) if isinstance(source, str) else (source["path"], source.get("sheet"))
        out.append((name, path, sheet))
    return out


def sheet_named(path: str, table: str) -> str | None:
    """The sheet of workbook ``path`` that table ``table`` was loaded from, for a state saved without the sheets
    (older versions): the sheet whose name ends the table's (``book_two`` is sheet ``two`` of ``book.xlsx``, as
    ``data.load.table_name`` names it); None for another file, or when no sheet fits (every sheet is loaded then)."""
    from pathlib import Path

    from auto_analyst.data.formats import FORMATS, excel_sheets
    from auto_analyst.data.load import table_name
    from auto_analyst.errors import DataLoadError

    if FORMATS.get(Path(path).suffix.lower()) != "excel":
        return None
    try:
        sheets = excel_sheets(Path(path))
    except DataLoadError:
        return None
    fits = [s for s in sheets if table == table_name(s, base=s) or table.endswith("_" + table_name(s, base=s))]
    return max(fits, key=len) if fits else None
