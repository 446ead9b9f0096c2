"""The contracts of the per-user stores: the history of turns and sessions, and the answer profile.

Implemented by :class:`~auto_analyst.memory.users.history.History` and
:class:`~auto_analyst.memory.users.profile.ProfileStore` on SQLite or PostgreSQL; ``tests/memory/test_contracts.py``
runs one suite against every backend. Every method takes the user id first and reads or changes only that user's
rows; writes are committed before a method returns.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from auto_analyst.memory.users.history_schema import SessionInfo, TurnRecord, UploadRecord
from auto_analyst.memory.users.profile import Profile
from auto_analyst.memory.users.quotes import QuoteMatch

__all__ = ["HistoryPort", "ProfilePort"]


@runtime_checkable
class HistoryPort(Protocol):
    """Every turn of every session, the sessions' saved state and the files loaded in them."""

    def record_turn(self, user: str, session: str, turn: int, question: str, intent: str = "", plan_json: Any = "[]",
                    code: str = "", result_summary: str = "", answer: str = "", model: str = "",
                    timings_json: Any = "{}", usage_json: Any = "{}", result_json: Any = "{}", *,
                    at: Any = None, owner: str | None = None, state_json: Any = None) -> int:
        """Store one turn (``*_json``: JSON text or a JSON-serialisable value), and with ``state_json`` the session's
        state as :meth:`save_session_state` would, in the same write; returns its id, or 0 without storing
        when ``owner`` (an account id) is given and the account ``user`` no longer has it (``storage.owners``)."""

    def save_session_state(self, user: str, session: str, state_json: Any, *, owner: str | None = None) -> bool:
        """Store what resuming the session needs; False without storing when ``owner`` is gone (as above)."""

    def load_session_state(self, user: str, session: str) -> str | None:
        """The JSON text last saved for the session, or None."""

    def record_upload(self, user: str, session: str, path: str | Path, name: str, *, owner: str | None = None) -> int:
        """Remember a file loaded as table ``name``; returns its id (0 without storing when ``owner`` is gone)."""

    def turns(self, user: str, session: str | None = None, limit: int | None = None) -> list[TurnRecord]:
        """Turns oldest first (the last ``limit`` only, if given)."""

    def get_turn(self, user: str, id: int) -> TurnRecord | None:
        """One of the user's turns, or None."""

    def sessions(self, user: str) -> list[SessionInfo]:
        """Sessions, most recently active first."""

    def last_session(self, user: str) -> SessionInfo | None:
        """The most recently active session, or None."""

    def session_version(self, user: str, session: str) -> tuple[str, int] | None:
        """(last update time, number of turns), or None: whether another process changed the session."""

    def uploads(self, user: str, session: str | None = None) -> list[UploadRecord]:
        """Files loaded (in ``session``, if given), oldest first."""

    def search(self, user: str, text: str, k: int = 5) -> list[TurnRecord]:
        """The ``k`` turns best matching the words of ``text`` (ties: newest)."""

    def find_quote(self, user: str, quoted_text: str, session: str | None = None) -> QuoteMatch | None:
        """The turn whose answer was quoted, with its neighbours, or None."""

    def forget_turn(self, user: str, id: int) -> bool:
        """Delete one turn; True if it existed."""

    def forget_session(self, user: str, session: str) -> int:
        """Delete a session (turns, uploads records, state); returns the turns deleted."""

    def forget_user(self, user: str) -> int:
        """Delete everything of the user; returns the turns deleted."""


@runtime_checkable
class ProfilePort(Protocol):
    """How answers should sound for each user: stores and returns values only (sentences are read in
    :mod:`auto_analyst.memory.users.instructions`)."""

    def get(self, user: str) -> Profile:
        """The user's profile (the defaults if none was saved)."""

    def set(self, user: str, **changes: Any) -> Profile:
        """Change fields and save; raises BadInputError on an unknown field or a bad value."""

    def add_note(self, user: str, note: str) -> Profile:
        """Append a note (duplicates ignored, the oldest dropped past the cap)."""

    def reset(self, user: str) -> Profile:
        """Forget the user's profile; returns the defaults."""

    def forget_user(self, user: str) -> Profile:
        """The same as :meth:`reset` (every store has ``forget_user``)."""
