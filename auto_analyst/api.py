"""The Python API: :class:`Analyst` opens sessions; a :class:`Session` loads tables and answers questions.

The CLI and the web page use only this module.

Example:
    >>> from auto_analyst import Analyst
    >>> with Analyst().session() as s:
    ...     s.load("datasets/iris.csv")
    ...     print(s.ask("mean petal_length by species").answer)
"""

from __future__ import annotations

import getpass
import threading
from typing import Any

from auto_analyst.config import Settings
from auto_analyst.errors import BadInputError
from auto_analyst.session import Session

__all__ = ["Analyst", "Session"]  # Session lives in auto_analyst.session


class Analyst:
    """Entry point: holds settings and the model choice; opens isolated sessions.

    Args:
        model: a LiteLLM model string ("openai/gpt-4o-mini"); None or "offline" = the embedded offline model.
        settings: a :class:`Settings`; built from the environment when None.
        user: user id; default the OS login name.
        api_key: a key for this Analyst only (kept in memory, never stored or logged).
        lm: a ready ``dspy.LM`` (or ``dspy.utils.DummyLM`` in tests) used instead of building one from ``model``.
        **overrides: setting overrides (e.g. ``max_fix_attempts=1``).
    """

    def __init__(self, model: str | None = None, settings: Settings | None = None, user: str | None = None,
                 api_key: str | None = None, lm: Any = None, **overrides: Any):
        base = settings or Settings.load()
        changes = {k: v for k, v in overrides.items() if v is not None}
        if model:
            changes["model"] = model
        self.settings = base.replace(**changes) if changes else base
        self.user = user or self.settings.user or _login_name()
        self._api_key = api_key
        self._lm = lm
        from auto_analyst.memory.services import MemoryServices

        self.memory = MemoryServices(self.settings)
        self._sessions: dict[str, Session] = {}
        self._lock = threading.Lock()

    def resume(self, session_id: str | None = None, user: str | None = None) -> "Session":
        """Continue a saved session (the user's last one when ``session_id`` is None); see :meth:`Session.resume`."""
        return Session.resume(self, user or self.user, session_id)

    def session(self, session_id: str | None = None, user: str | None = None) -> "Session":
        """A new session (or the open one with ``session_id``) for ``user`` (default the Analyst's user)."""
        with self._lock:
            if session_id and session_id in self._sessions:
                s = self._sessions[session_id]
                if s.user != (user or self.user):
                    raise BadInputError("That session belongs to another user.")
                return s
            s = Session(self, user or self.user, session_id)
            self._sessions[s.id] = s
            return s

    def forget(self, session_id: str) -> None:
        """Close session ``session_id`` and drop it from this Analyst (its history stays in the database)."""
        with self._lock:
            s = self._sessions.pop(session_id, None)
        if s is not None:
            s.close()

    def close(self) -> None:
        """Close every session (stops their workers)."""
        with self._lock:
            sessions, self._sessions = list(self._sessions.values()), {}
        for s in sessions:
            s.close()
        self.memory.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def _login_name() -> str:
    try:
        return getpass.getuser()
    except Exception:  # noqa: BLE001 - no login name in some containers
        return "user"
