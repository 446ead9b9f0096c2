"""The memory around one question, as one object a session is given: what goes into its context, what is kept.

One :class:`MemoryServices` per :class:`~auto_analyst.api.Analyst` owns the stores under
``AUTO_ANALYST_HOME`` (:class:`~auto_analyst.memory.stores.MemoryStores`). A session calls
:meth:`~MemoryServices.prepare` before a question and :meth:`~MemoryServices.record` after it, and
hands the pipeline :meth:`~MemoryServices.port`. Every call takes a
:class:`~auto_analyst.memory.scope.Scope` of plain values (user, session id, the tables), never a
Session; nothing of one user reaches another's prompt. The jobs live in their own modules:
:mod:`~auto_analyst.memory.context.recall` (before), :mod:`~auto_analyst.memory.facts.recording` (after) and
:mod:`~auto_analyst.memory.errorfix.sharing` (the error-fix sharing policy).
"""

from __future__ import annotations

from auto_analyst.config import Settings
from auto_analyst.memory.context import recall
from auto_analyst.memory.errorfix import sharing
from auto_analyst.memory.facts import recording
from auto_analyst.memory.context.recall import Prepared
from auto_analyst.memory.scope import Scope
from auto_analyst.memory.context.short_term import ShortTermMemory
from auto_analyst.memory.stores import MemoryStores
from auto_analyst.results import MemoryHit, Result

__all__ = ["MemoryServices", "SessionMemory", "Prepared", "Scope"]


class MemoryServices:
    """Stores and context building for every session of an Analyst (the stores open lazily).

    Args:
        settings: the settings (budgets, ``error_memory_k``, the model recorded with each turn).
        stores: the stores (default :class:`~auto_analyst.memory.stores.MemoryStores`, SQLite and Chroma under
            ``settings.home``); another storage backend passes an object with the same attributes.
    """

    def __init__(self, settings: Settings, stores: MemoryStores | None = None):
        self.settings = settings
        self.stores = stores or MemoryStores(settings)

    # the stores, for the public views (auto_analyst.memory.views) and for tests
    @property
    def history(self):
        return self.stores.history

    @property
    def entities(self):
        return self.stores.entities

    @property
    def graph(self):
        return self.stores.graph

    @property
    def profiles(self):
        return self.stores.profiles

    @property
    def errors(self):
        return self.stores.errors

    def close(self) -> None:
        self.stores.close()

    def prepare(self, scope: Scope, question: str, dataset_description: str, short_term: ShortTermMemory) -> Prepared:
        """The memory parts of ``question``'s prompt, within the budgets (see :func:`recall.prepare`)."""
        return recall.prepare(self.stores, scope, question, dataset_description, short_term)

    def record(self, scope: Scope, question: str, result: Result, state: dict | str | None = None) -> bool:
        """Keep the answered turn, with the session's ``state`` when given (see :func:`recording.record`); False when
        nothing was stored (the account was removed meanwhile)."""
        return recording.record(self.stores, scope, question, result, state)

    def save_state(self, scope: Scope, state: dict | str) -> bool:
        """Keep what resuming the session needs (table sources, short-term memory, turn counter), as a dict or its
        JSON; False when nothing was stored (the account was removed meanwhile, see ``storage.owners``)."""
        return bool(self.stores.history.save_session_state(scope.user, scope.session_id, state, owner=scope.owner))

    def owner_present(self, scope: Scope) -> bool:
        """True unless ``scope`` is an account's that was removed meanwhile (``storage.owners``; checked before
        writes to stores outside the history database: profile, error-fix memory)."""
        if scope.owner is None:
            return True
        from auto_analyst.storage import owner_present, read

        with read(self.stores.history.engine) as conn:
            return owner_present(conn, scope.user, scope.owner)

    def port(self, scope: Scope) -> SessionMemory:
        """What the pipeline may ask of memory during one question of ``scope``."""
        return SessionMemory(self, scope)


class SessionMemory:
    """The pipeline's view of memory for one question (implements ``pipeline.MemoryPort``)."""

    def __init__(self, services: MemoryServices, scope: Scope):
        self.services, self.scope = services, scope

    def fixes_for_error(self, error_text: str) -> tuple[str, list[str]]:
        return recall.fixes_for_error(self.services.stores, self.scope.user, error_text)

    def history_for(self, question: str) -> tuple[str, list[MemoryHit]]:
        return recall.history_for(self.services.stores, self.scope.user, question, scope=self.scope)

    def apply_profile(self, instruction: str) -> str:
        from auto_analyst.memory.users.instructions import apply_instruction
        from auto_analyst.memory.users.profile import render

        if not self.services.owner_present(self.scope):
            return "This account was removed; nothing was changed."
        profile, changed = apply_instruction(self.services.profiles, self.scope.user, instruction)
        if not changed:
            return ("I did not find a change of style in that; try 'answer more briefly', 'be more detailed' or "
                    "'explain like I'm new to statistics'.")
        return "Noted. From now on: " + render(profile)

    def style(self) -> str:
        """How this user's answers are written now (the profile rendered as the answer writer reads it)."""
        from auto_analyst.memory.users.profile import render

        return render(self.services.profiles.get(self.scope.user))

    def remember_fix(self, bad_code: str, error: str, good_code: str, agent: str, summary: str, correction: str,
                     agent_version: str, human: bool = False) -> list[str]:
        if not self.services.owner_present(self.scope):
            return []  # the account was removed meanwhile: nothing is stored for it
        return sharing.remember_fix(self.services.stores, self.scope, agent_version, bad_code, error, good_code,
                                    agent, summary, correction, human=human)
