"""What one turn's memory work is about, as plain values: whose it is and which data it saw."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import pandas as pd

    from auto_analyst.data.description import DatasetDescription

__all__ = ["Scope"]


@dataclass(frozen=True)
class Scope:
    """The user, the session and the session's tables, handed to memory by the session (no Session object).

    Attributes:
        user: the user id; nothing of one user reaches another's prompt.
        session_id: the session's id.
        owner: the account id the writes are made for (None: not an account's); see ``storage.owners``.
        description: the dataset description of the session's tables (None when none is loaded).
        frames: table name → DataFrame (read to mask the data's own values in shared fixes).
        sources: the tables' source file paths.
        paths: table name → its source file path (tables made in memory have none).
    """

    user: str
    session_id: str
    owner: str | None = None
    description: DatasetDescription | None = None
    frames: Mapping[str, pd.DataFrame] = field(default_factory=dict)
    sources: tuple[str, ...] = ()
    paths: Mapping[str, str] = field(default_factory=dict)

    @property
    def columns(self) -> list[str]:
        """Every column name of every table, in table order."""
        return [c.name for t in self.description.tables for c in t.columns] if self.description else []
