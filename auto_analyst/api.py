"""The Python API: :class:`Analyst` opens sessions and shows a user's memory; a :class:`Session` loads tables
and answers questions.

The CLI and the web page use only this module (and the objects it returns).

Example:
    >>> from auto_analyst import Analyst
    >>> with Analyst().session() as s:
    ...     s.load("datasets/iris.csv")
    ...     print(s.ask("mean petal_length by species").answer)
"""

from __future__ import annotations

import getpass
import logging
import shutil
import threading
from typing import TYPE_CHECKING, Any

from auto_analyst.config import Settings
from auto_analyst.errors import BadInputError, NotFoundError
from auto_analyst.llm.cost_bound import NO_MODEL_CALLS, QuestionCost
from auto_analyst.memory.views import UserEntities, UserFacts, UserFixMemory, UserHistory, UserProfile
from auto_analyst.runtime import Runtime, lm_factory
from auto_analyst.saved_sessions import SavedSession, SavedSessions, Upload, upload_folder
from auto_analyst.session import Session, session_folder

if TYPE_CHECKING:
    import dspy

    from auto_analyst.agents.registry import Entry
    from auto_analyst.memory.services import MemoryServices

__all__ = ["Analyst", "Session", "SavedSession", "Upload", "sandbox_protections", "sandbox_notice",
           "prestart_sandbox", "QuestionCost", "NO_MODEL_CALLS"]
# Session lives in auto_analyst.session, SavedSession and Upload in saved_sessions, QuestionCost in llm/cost_bound

log = logging.getLogger(__name__)


class Analyst:
    """Entry point: holds settings, the model choice and the agents; opens isolated sessions.

    Args:
        model: a LiteLLM model string ("openai/gpt-4o-mini"); None or "offline" = the embedded offline model.
        settings: a :class:`Settings`; built from the environment when None.
        user: user id; default the OS login name. An empty or blank one raises BadInputError.
        api_key: a key for this Analyst only (kept in memory, never stored or logged).
        lm: a ready ``dspy.LM`` (or ``dspy.utils.DummyLM`` in tests) used instead of building one from ``model``.
        memory: the memory services (default: the stores under ``settings.home``; see docs/architecture.md for
            another storage backend).
        **overrides: setting overrides (e.g. ``max_fix_attempts=1``).
    """

    def __init__(self, model: str | None = None, settings: Settings | None = None, user: str | None = None,
                 api_key: str | None = None, lm: Any = None, memory: MemoryServices | None = None, **overrides: Any):
        base = settings or Settings.load()
        changes = {k: v for k, v in overrides.items() if v is not None}
        if model:
            changes["model"] = model
        self.settings = base.replace(**changes) if changes else base
        if user is not None and not user.strip():  # --user "" would silently act as the login name
            raise BadInputError("The user id is empty: give a name (--user NAME), or leave it out to use your login name.")
        self.user = user or self.settings.user or _login_name()
        self.runtime = Runtime(self.settings, memory=memory, make_lm=lm_factory(self.settings, api_key, lm))
        self.memory = self.runtime.memory
        self._sessions: dict[str, Session] = {}
        self._saved = SavedSessions(self.memory.history)
        self._lock = threading.Lock()

    # ---------------------------------------------------------------- agents
    def register_agent(self, name: str, signature: type[dspy.Signature], description: str) -> Entry:
        """Add an analyst the planner can choose and ``@name`` at the start of a question addresses directly.

        Sessions of this Analyst see it from their next question on; no other Analyst does.

        Args:
            name: lower-case identifier, e.g. ``"forecasting"``.
            signature: a Signature returning ``code`` (subclass ``auto_analyst.agents.AnalystSignature``; its
                docstring is the agent's instruction).
            description: one line for the planner: what the agent does, with which library.

        Raises:
            BadInputError: a bad or taken name, or a Signature the pipeline cannot call (see
                :meth:`auto_analyst.agents.registry.Registry.register_agent`).
        """
        return self.runtime.agents.register_agent(name, signature, description)

    def agents(self) -> dict[str, str]:
        """The analysts the planner can choose: name → description."""
        return self.runtime.agents.agent_descriptions()

    def check_model(self) -> None:
        """Fail now, in one sentence, when the model cannot be used as configured (instead of at the first question).

        Raises:
            ModelConfigError: an unknown model string, or a hosted model without its key.
        """
        self.runtime.new_lm()  # building the LM checks the model string and its key; it makes no call

    # -------------------------------------------------------------- sessions
    def resume(self, session_id: str | None = None, user: str | None = None) -> Session:
        """Continue a saved session (the user's last one when ``session_id`` is None); see :meth:`Session.resume`."""
        with self._lock:
            open_sessions = list(self._sessions.values())
        for other in open_sessions:
            other.settle()  # a session still summarising its last turn saves its memory first
        s = Session.resume(self.runtime, user or self.user, session_id)
        with self._lock:
            self._sessions[s.id] = s
        return s

    def session(self, session_id: str | None = None, user: str | None = None) -> Session:
        """A new session (or the open one with ``session_id``) for ``user`` (default the Analyst's user).

        Raises:
            BadInputError: the open session ``session_id`` belongs to another user.
        """
        with self._lock:
            if session_id and session_id in self._sessions:
                s = self._sessions[session_id]
                if s.user != (user or self.user):
                    raise BadInputError("That session belongs to another user.")
                return s
            s = Session(self.runtime, user or self.user, session_id)
            self._sessions[s.id] = s
            return s

    def forget(self, session_id: str) -> None:
        """Close session ``session_id`` and drop it from this Analyst (its history stays in the database)."""
        with self._lock:
            s = self._sessions.pop(session_id, None)
        if s is not None:
            s.close()

    # ------------------------------------------------------- stored sessions
    def conversations(self, user: str | None = None) -> list[SavedSession]:
        """The stored sessions of ``user`` (default the Analyst's user), most recently active first: title, times,
        turns, model and uploads of each; nothing is loaded (:meth:`reopen` does that)."""
        return self._saved.list(user or self.user)

    def conversation(self, session_id: str, user: str | None = None) -> SavedSession | None:
        """The stored session ``session_id`` of ``user``, or None (also when it is another user's)."""
        return self._saved.get(user or self.user, session_id)

    def session_version(self, session_id: str, user: str | None = None) -> tuple[str, int] | None:
        """(last update time, number of turns) of a stored session, or None: a cheap check whether another process
        changed it since it was opened here."""
        return self.memory.history.session_version(user or self.user, session_id)

    def reopen(self, session_id: str, user: str | None = None) -> Session:
        """The stored session ``session_id`` of ``user`` opened again: :meth:`resume` (its tables, short-term
        memory, turn counter and past Results) or, when it has no saved state or its tables cannot be reloaded
        (a file that no longer loads), a session with only its past Results.

        Raises:
            NotFoundError: ``user`` has no stored session ``session_id``.
        """
        user = user or self.user
        if self._saved.get(user, session_id) is None:
            raise NotFoundError(f"No stored session {session_id!r} for user {user!r}.")
        try:
            return self.resume(session_id, user=user)
        except NotFoundError:
            pass  # stored turns without a saved state: the answers alone
        except Exception:  # noqa: BLE001 - e.g. an uploaded file that no longer loads: keep the answers
            log.exception("session %s: could not reload its tables", session_id)
        s = self.session(session_id, user=user)
        s.restore_results()
        return s

    def delete_session(self, session_id: str, user: str | None = None) -> int:
        """Delete ``user``'s session ``session_id`` and what is kept of it: its worker, its turns and saved state in
        the history, its uploaded files, its folder (tables, figures) and, with a queue, its replay log.

        Returns:
            the number of stored turns deleted (0 for a session never stored).
        """
        user = user or self.user
        folder = session_folder(self.settings, user, session_id)
        if self.settings.queue_url:  # a worker must not rebuild the deleted session from its log
            from auto_analyst.queue.connection import session_key
            from auto_analyst.queue.replay import ReplayLog
            from auto_analyst.storage import database_url

            ReplayLog(database_url(self.settings)).clear(session_key(folder / "work"))
        self.forget(session_id)
        deleted = self.memory.history.forget_session(user, session_id)
        self._saved.forget(user, session_id)
        for path in (folder, upload_folder(self.settings, user, session_id)):
            shutil.rmtree(path, ignore_errors=True)
        return deleted

    # ---------------------------------------------------------------- memory
    def history(self, user: str | None = None) -> UserHistory:
        """The stored turns and sessions of ``user`` (default the Analyst's user)."""
        return UserHistory(self.memory.stores, user or self.user)

    def profile(self, user: str | None = None) -> UserProfile:
        """How answers sound for ``user``: show, set, reset."""
        return UserProfile(self.memory.stores, user or self.user)

    def entities(self, user: str | None = None) -> UserEntities:
        """The columns, methods and concepts ``user`` works with most."""
        return UserEntities(self.memory.stores, user or self.user)

    def facts(self, user: str | None = None) -> UserFacts:
        """What ``user``'s earlier analyses found: list, search, forget, clear."""
        return UserFacts(self.memory.stores, user or self.user)

    def fix_memory(self, user: str | None = None) -> UserFixMemory:
        """The error-fix memory as ``user`` sees it: their own entries and the shared ones."""
        return UserFixMemory(self.memory.stores, user or self.user)

    # ------------------------------------------------------------- lifecycle
    def close(self) -> None:
        """Close every session (stops their workers) and the stores."""
        with self._lock:
            sessions, self._sessions = list(self._sessions.values()), {}
        for s in sessions:
            s.close()
        self.runtime.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def _login_name() -> str:
    try:
        return getpass.getuser()
    except Exception:  # noqa: BLE001 - no login name in some containers
        return "user"


def sandbox_protections(settings: Settings) -> list:
    """What protects generated code on this machine for this user (``auto-analyst doctor``).

    Returns:
        a list of ``execution.protections.Protection`` (``name``, ``active``, ``detail``); runs ``bwrap`` once.
    """
    from auto_analyst.execution.protections import report

    return report(settings)


def sandbox_notice(settings: Settings) -> str | None:
    """The one sentence to show at start when generated code would run without the OS sandbox (or not at all)."""
    from auto_analyst.execution.protections import startup_notice

    return startup_notice(settings)


def prestart_sandbox(settings: Settings) -> None:
    """Start the worker's warm zygote in the background, so its imports overlap the caller's (returns at once;
    nothing starts when generated code may not run here). See docs/sandbox.md, "The first answer"."""
    from auto_analyst.execution.protections import refusal

    if refusal(settings) is None:
        from auto_analyst.execution.zygote import Zygote

        Zygote.prestart()
