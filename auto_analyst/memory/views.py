"""One user's memory, as the public API shows it: history, profile, entities, facts and the error-fix memory.

``Analyst.history()``, ``.profile()``, ``.entities()``, ``.facts()`` and ``.fix_memory()`` return these
views, bound to one user; the CLI's ``history``, ``profile``, ``entities`` and ``memory`` commands and the
page's "what I remember" panel call only them. A view never shows or changes another user's records.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from auto_analyst.errors import BadInputError, NotFoundError
from auto_analyst.memory.errorfix.store import GLOBAL

if TYPE_CHECKING:
    from auto_analyst.memory.facts.entities import EntityScore
    from auto_analyst.memory.facts.model import Fact
    from auto_analyst.memory.errorfix.memory import ErrorFixEntry
    from auto_analyst.memory.users.history import SessionInfo, TurnRecord
    from auto_analyst.memory.users.profile import Profile
    from auto_analyst.memory.stores import MemoryStores

__all__ = ["UserHistory", "UserProfile", "UserEntities", "UserFacts", "UserFixMemory"]


class _View:
    def __init__(self, stores: MemoryStores, user: str):
        self._stores, self.user = stores, user


class UserHistory(_View):
    """The user's stored turns and sessions."""

    def turns(self, session: str | None = None, limit: int | None = None) -> list[TurnRecord]:
        """The most recent ``limit`` turns (of ``session`` only, if given), oldest first."""
        return self._stores.history.turns(self.user, session=session, limit=limit)

    def sessions(self) -> list[SessionInfo]:
        """The user's sessions, most recently active first."""
        return self._stores.history.sessions(self.user)

    def turn(self, turn_id: int) -> TurnRecord:
        """One turn.

        Raises:
            NotFoundError: the user has no turn ``turn_id`` (another user's turns are not found either).
        """
        found = self._stores.history.get_turn(self.user, turn_id)
        if found is None:
            raise NotFoundError(f"No turn {turn_id} in your history; see `history list`.")
        return found

    def forget_turn(self, turn_id: int) -> None:
        """Delete one turn.

        Raises:
            NotFoundError: the user has no turn ``turn_id``.
        """
        if not self._stores.history.forget_turn(self.user, turn_id):
            raise NotFoundError(f"No turn {turn_id} in your history; see `history list`.")

    def forget_session(self, session_id: str) -> int:
        """Delete a session's turns, saved state and the facts it found; returns the number of turns deleted."""
        self._stores.graph.forget_facts(self.user, session=session_id)
        return self._stores.history.forget_session(self.user, session_id)

    def forget_all(self) -> int:
        """Delete all the user's history and the facts it found; returns the number of turns deleted."""
        self._stores.graph.forget_facts(self.user)
        return self._stores.history.forget_user(self.user)


class UserProfile(_View):
    """How answers sound for the user (tone, style, persona, expertise, notes)."""

    @property
    def fields(self) -> tuple[str, ...]:
        """The profile's field names, in display order."""
        from auto_analyst.memory.users.profile import FIELDS

        return FIELDS

    def get(self) -> Profile:
        return self._stores.profiles.get(self.user)

    def set(self, **values: Any) -> Profile:
        """Change fields and save.

        Raises:
            BadInputError: an unknown field, an empty value, or a value over the length limit.
        """
        return self._stores.profiles.set(self.user, **values)

    def reset(self) -> Profile:
        """Back to the defaults (returned)."""
        return self._stores.profiles.reset(self.user)

    def prompt_text(self) -> str:
        """The text the profile adds to the prompts."""
        return self._stores.profiles.render(self.get())


class UserEntities(_View):
    """The columns, methods and concepts the user works with most."""

    @property
    def half_life_hours(self) -> float:
        """Hours after which an entity's count weighs half (the decay of the score)."""
        return self._stores.entities.half_life_hours

    def top(self, n: int = 10) -> list[EntityScore]:
        """The ``n`` highest-scoring entities (count decayed by recency)."""
        return self._stores.entities.top(self.user, n=n)


class UserFacts(_View):
    """What the user's earlier analyses found (facts), with stale ones marked: their table is gone."""

    def _mark(self, facts: list[Fact]) -> list[Fact]:
        from auto_analyst.memory.facts.recall import current_fingerprints
        from auto_analyst.memory.scope import Scope

        current = current_fingerprints(self._stores.graph, Scope(user=self.user, session_id=""))
        for f in facts:
            f.stale = bool(f.fingerprint) and f.fingerprint not in current
        return facts

    def list(self, limit: int | None = 100, session: str | None = None) -> list[Fact]:
        """The newest ``limit`` facts (of ``session`` only, if given); ``stale`` set when their table is gone."""
        return self._mark(self._stores.graph.list_facts(self.user, limit=limit, session=session))

    def search(self, text: str, limit: int = 20) -> list[Fact]:
        """Facts around the entities ``text`` names (ranked as for a question), then facts containing ``text``.

        Raises:
            BadInputError: ``text`` is empty.
        """
        from auto_analyst.memory.facts.recall import retrieve
        from auto_analyst.memory.scope import Scope

        if not (text or "").strip():
            raise BadInputError("Say what to search for, e.g. `memory facts search West`.")
        scope = Scope(user=self.user, session_id="")
        found = [h.fact for h in retrieve(self._stores.graph, scope, text, k=limit).hits]
        ids = {f.id for f in found}
        found += [f for f in self._stores.graph.list_facts(self.user, limit=limit, text=text.strip()) if f.id not in ids]
        return self._mark(found[:limit])

    def forget(self, fact_id: str) -> None:
        """Delete one fact.

        Raises:
            NotFoundError: the user has no fact ``fact_id``.
        """
        if not self._stores.graph.forget_facts(self.user, ids=[fact_id]):
            raise NotFoundError(f"No fact {fact_id!r} in your memory; see `memory facts list`.")

    def clear(self) -> int:
        """Delete every fact of the user; returns the number deleted."""
        return self._stores.graph.forget_facts(self.user)


class UserFixMemory(_View):
    """The error-fix memory as the user sees it: their own entries and the shared ones."""

    def list(self, scope: str = "all") -> list[ErrorFixEntry]:
        """Entries, most recently used first: ``scope`` is all (own + shared), user (own) or global (shared).

        Raises:
            BadInputError: an unknown scope.
        """
        return self._stores.errors.list(user=self.user, scope=scope)

    def search(self, text: str, k: int | None = None, error_type: str | None = None) -> list[ErrorFixEntry]:
        """The entries most like ``text`` (own first, then shared); ``k`` defaults to ``error_memory_k``."""
        return self._stores.errors.search(text, user=self.user, k=k, error_type=error_type)

    def forget(self, entry_id: str) -> None:
        """Delete the user's entry ``entry_id``, or a shared one (anyone who sees a shared entry may remove it).

        Raises:
            NotFoundError: no such entry owned by the user or shared.
        """
        mem = self._stores.errors
        entry = mem.get(entry_id)
        owner = GLOBAL if entry is not None and entry.user == GLOBAL else self.user
        if not mem.forget(entry_id, user=owner):
            raise NotFoundError(f"There is no entry {entry_id!r} owned by {owner!r}; see `memory list`.")

    def check_clear(self, owner: str) -> None:
        """Raise unless the user may clear ``owner``'s entries: their own, or the shared ones (``"global"``).

        Raises:
            BadInputError: ``owner`` is another user.
        """
        if owner not in (self.user, GLOBAL):
            raise BadInputError(f"You are {self.user!r}; you can clear your own entries or the shared ones "
                                f"('global'), not {owner!r}'s. Use --user {self.user} or the global --user option.")

    def clear(self, owner: str | None = None) -> int:
        """Delete every entry of the user (``owner`` None or the user) or every shared one (``owner="global"``).

        Raises:
            BadInputError: ``owner`` is another user.
        """
        owner = owner or self.user
        self.check_clear(owner)
        return self._stores.errors.clear(user=owner)

    def reindex(self) -> int:
        """Rebuild the search index from the SQLite store; returns the number of entries indexed."""
        return self._stores.errors.reindex()

    def prune(self) -> int:
        """Delete entries unused for ``memory_retention_days``, then the least recently used past
        ``memory_max_entries``; returns the number deleted."""
        return self._stores.errors.prune()
