"""What the server holds of one user, counted and deleted (``auto-analyst users remove``).

A user's data is: conversations and their turns (history), the facts they found, the profile, the
user's own error-fix entries (shared ones stay), entity mentions and any other row of the storage
database with a ``"user"`` column, and the files the server stored for them (uploads under
``home/uploads/<name>/``, session folders with tables and figures under ``home/sessions/*/<session id>``).
Files a command-line user asked about from their own folders are theirs, not the server's: only the
server's copies are deleted. Usage per day stays (it is the operator's accounting, not the user's data), under
``NAME~ID`` (``accounts.removed_label``), so an account added again as NAME does not start with it.
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sqlalchemy import inspect, text

from auto_analyst.storage import store_engine, transaction

__all__ = ["UserData", "count_user_data", "delete_user_data"]

_KEPT = {"accounts", "api_tokens", "web_sessions", "usage_daily", "budget_holds", "_migrations"}
"""Tables not swept: the account's own rows (``AccountStore.remove``) and the operator's accounting."""


@dataclass(frozen=True)
class UserData:
    """How much of a user's data there is (or was deleted): conversations, facts, error-fix entries,
    other database rows (entity mentions and the like) and files (uploads, tables, figures)."""

    conversations: int = 0
    facts: int = 0
    error_entries: int = 0
    other_rows: int = 0
    files: int = 0

    def sentence(self) -> str:
        return (f"{self.conversations} conversation(s), {self.facts} fact(s), {self.error_entries} error-fix "
                f"entr{'y' if self.error_entries == 1 else 'ies'}, the profile, and {self.files} stored file(s)")


def _folders(settings: Any, name: str, sessions: list[str]) -> list[Path]:
    home = Path(settings.home)
    found = [home / "uploads" / name] if (home / "uploads" / name).is_dir() else []
    for sid in sessions:  # session ids are random, so a glob over the user folders finds only this user's
        found += [p for p in (home / "sessions").glob(f"*/{sid}") if p.is_dir()]
    return found


def _files(folders: list[Path]) -> int:
    return sum(1 for folder in folders for p in folder.rglob("*") if p.is_file())


def _user_tables(engine: Any) -> list[str]:
    names = inspect(engine).get_table_names()
    return [t for t in names if t not in _KEPT and any(c["name"] == "user" for c in inspect(engine).get_columns(t))]


def count_user_data(analyst: Any, settings: Any, name: str) -> UserData:
    """What :func:`delete_user_data` would delete for ``name`` (``analyst``: an :class:`~auto_analyst.api.Analyst`)."""
    sessions = [s.session_id for s in analyst.history(name).sessions()]
    return UserData(conversations=len(sessions), facts=len(analyst.facts(name).list(limit=None)),
                    error_entries=len(analyst.fix_memory(name).list(scope="user")),
                    files=_files(_folders(settings, name, sessions)))


def delete_user_data(analyst: Any, settings: Any, name: str) -> UserData:
    """Delete every piece of ``name``'s data listed in the module docstring; returns what was deleted.

    The stores are emptied through the API (so a graph or Chroma backend forgets too), then any row left
    in a table with a ``"user"`` column, then the folders.
    """
    sessions = [s.session_id for s in analyst.history(name).sessions()]
    folders = _folders(settings, name, sessions)
    files = _files(folders)
    facts = analyst.facts(name).clear()
    analyst.history(name).forget_all()
    analyst.profile(name).reset()
    errors = analyst.fix_memory(name).clear()
    engine = store_engine(settings)
    other = 0
    with transaction(engine) as conn:
        for table in _user_tables(engine):
            other += conn.execute(text(f'DELETE FROM "{table}" WHERE "user" = :u'), {"u": name}).rowcount or 0
    for folder in folders:
        shutil.rmtree(folder, ignore_errors=True)
    return UserData(conversations=len(sessions), facts=facts, error_entries=errors, other_rows=other, files=files)
