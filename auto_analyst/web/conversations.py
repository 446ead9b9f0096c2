"""Conversations of each browser, kept in the history database so they survive a server restart.

A :class:`Conversation` wraps one API :class:`~auto_analyst.api.Session` with what the page needs
besides it: the uploads (``auto_analyst.api.Upload``, with their original file names), the running job,
a title and timestamps. :class:`ConversationIndex` is the interface the service and the blueprints use:

* :class:`HistoryIndex` (the default) lists a user's stored conversations with
  :meth:`Analyst.conversations <auto_analyst.api.Analyst.conversations>` and reopens one on first use after
  a restart with :meth:`Analyst.reopen <auto_analyst.api.Analyst.reopen>`: its tables come back from the
  uploaded files, its past answers from the stored turns, its short-term memory from the saved state.
* :class:`MemoryIndex` keeps everything in this process (gone on restart); pass it as
  ``create_app(test_config={"CONVERSATION_INDEX": MemoryIndex()})``.
"""

from __future__ import annotations

import logging
import threading
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable, Protocol

from auto_analyst.api import SavedSession, Upload

if TYPE_CHECKING:
    from auto_analyst.api import Analyst

__all__ = ["Conversation", "ConversationIndex", "HistoryIndex", "MemoryIndex", "Owner", "owner_of"]

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Owner:
    """Whose conversations: ``key`` is what this process's memory is keyed by (an account's id, made when the
    account is created and never reused; without accounts, the browser's random cookie id), ``name`` is the user
    name the stored data (history, uploads, facts) is kept under. ``account`` says the key is an account id, so
    the key's memory goes when the account does (``WebService.forget_removed``)."""

    key: str
    name: str
    account: bool = False


def owner_of(user: Owner | str) -> Owner:
    """``user`` as an :class:`Owner`; a plain string is a user without an account (its name is its key)."""
    return user if isinstance(user, Owner) else Owner(user, user)


@dataclass
class Conversation:
    """One conversation of one browser user.

    Attributes:
        id: the API session id (random, unguessable).
        user: the user name its data is stored under.
        key: the owner's :attr:`Owner.key` (default ``user``): the index finds it only under this key.
        session: the API Session (tables, results, worker).
        model: the model string the conversation's Analyst uses.
        uploads: the files loaded into it, in order.
        job: the running (or last) job, if any.
        jobs: recent jobs by id, so a reconnecting stream finds its job.
        n_turns: the stored number of turns, for a listed conversation not opened yet (``session`` None).
    """

    id: str
    user: str
    session: Any
    model: str = "offline"
    title: str = "New conversation"
    created: float = field(default_factory=time.time)
    updated: float = field(default_factory=time.time)
    uploads: list[Upload] = field(default_factory=list)
    job: Any = None
    jobs: dict[str, Any] = field(default_factory=dict)
    lock: threading.Lock = field(default_factory=threading.Lock, repr=False)
    n_turns: int = 0
    version: Any = None  # the stored (updated_at, turns) this object reflects (see HistoryIndex check_fresh)
    key: str = ""

    def __post_init__(self) -> None:
        self.key = self.key or self.user

    @property
    def busy(self) -> bool:
        """True while a question or a script is running."""
        return self.job is not None and not self.job.finished

    def source_of(self, table: str) -> Upload | None:
        """The upload a table came from (None for tables made in memory)."""
        return next((u for u in self.uploads if table in u.tables), None)

    def summary(self) -> dict[str, Any]:
        """The JSON the sidebar lists."""
        return {"id": self.id, "title": self.title, "model": self.model, "created": self.created,
                "updated": self.updated, "n_turns": len(self.session.results) if self.session is not None else self.n_turns, "busy": self.busy,
                "files": [u.original_name for u in self.uploads]}


class ConversationIndex(Protocol):
    """Where a user's conversations are found again; implement this to persist them."""

    def add(self, conv: Conversation) -> None: ...

    def get(self, owner: Owner, conv_id: str) -> Conversation | None: ...

    def list(self, owner: Owner) -> list[Conversation]: ...

    def remove(self, owner: Owner, conv_id: str) -> Conversation | None: ...

    def touch(self, conv: Conversation, result: Any = None) -> None: ...

    def all(self) -> list[Conversation]: ...

    def forget(self, key: str) -> list[Conversation]: ...


class MemoryIndex:
    """The in-process index: owner key -> conversations, newest first. Thread-safe."""

    def __init__(self) -> None:
        self._by_user: dict[str, dict[str, Conversation]] = {}
        self._lock = threading.Lock()

    def add(self, conv: Conversation) -> None:
        with self._lock:
            self._by_user.setdefault(conv.key, {})[conv.id] = conv

    def get(self, owner: Owner | str, conv_id: str) -> Conversation | None:
        """The conversation, or None when it does not exist *or belongs to another user*."""
        with self._lock:
            return self._by_user.get(owner_of(owner).key, {}).get(conv_id)

    def list(self, owner: Owner | str) -> list[Conversation]:
        with self._lock:
            convs = list(self._by_user.get(owner_of(owner).key, {}).values())
        return sorted(convs, key=lambda c: c.updated, reverse=True)

    def remove(self, owner: Owner | str, conv_id: str) -> Conversation | None:
        with self._lock:
            return self._by_user.get(owner_of(owner).key, {}).pop(conv_id, None)

    def forget(self, key: str) -> list[Conversation]:
        """Drop every conversation of the owner ``key`` (its account is gone); returns them (to stop their work)."""
        with self._lock:
            return list(self._by_user.pop(key, {}).values())

    def touch(self, conv: Conversation, result: Any = None) -> None:
        """Note activity (a history-backed index records the turn here)."""
        conv.updated = time.time()

    def all(self) -> list[Conversation]:
        """Every conversation of every user (for closing workers)."""
        with self._lock:
            return [c for convs in self._by_user.values() for c in convs.values()]


class HistoryIndex:
    """Conversations kept in the history database: listed, reopened and continued after a restart.

    What is stored is the API's (all under ``settings.home``): each answered question as a turn (``Session.ask``),
    the session state (``Session.save_state``, also called by :meth:`touch`), and each upload with its original
    file name (``Session.upload``). This index only reads it back through the API: ``Analyst.conversations``
    lists a user's stored sessions without loading anything, and ``Analyst.reopen`` opens one on first use (its
    tables reloaded from the uploaded files, its short-term memory, turn counter and past answers).

    Conversations opened or created by this process are cached in memory (one object per conversation, holding
    its session and running job), keyed by (owner key, id): an account's id, not its name, so an account added
    again under a removed one's name (another person) never gets the old one's open conversations; what it finds
    is what is stored under the name. A new conversation is stored once it has something to keep (an upload or
    an answer); an empty one lives in memory only. One user never sees another's.

    Args:
        analyst: the Analyst that lists the stored conversations (any Analyst over the same home).
        analyst_for: the Analyst a reopened conversation of a user runs with (the user's current one).
        check_fresh: several web processes serve the same browsers: a cached conversation that another
            process changed since (its stored version moved) is reopened from the database before use.
    """

    def __init__(self, analyst: Analyst, analyst_for: Callable[[Owner], Analyst], check_fresh: bool = False):
        self.analyst = analyst
        self.analyst_for = analyst_for
        self.check_fresh = check_fresh
        self._live: dict[tuple[str, str], Conversation] = {}
        self._deleted: set[tuple[str, str]] = set()
        self._opening: dict[tuple[str, str], threading.Lock] = {}
        self._lock = threading.Lock()

    # ------------------------------------------------------------------ interface
    def add(self, conv: Conversation) -> None:
        with self._lock:
            self._live[(conv.key, conv.id)] = conv

    def get(self, owner: Owner | str, conv_id: str) -> Conversation | None:
        """The owner's conversation (reopened from the history if needed), or None when it does not
        exist *or belongs to another user*."""
        owner = owner_of(owner)
        user, key = owner.name, (owner.key, conv_id)
        with self._lock:
            conv = self._live.get(key)
        if conv is not None and self.check_fresh and conv.version is not None and not conv.busy \
                and self.analyst.session_version(conv_id, user) != conv.version:
            with self._lock:  # another process answered in it: reopen it from the database
                if self._live.get(key) is conv:
                    del self._live[key]
        with self._lock:
            conv = self._live.get(key)
            if conv is not None or key in self._deleted:
                return conv
            opening = self._opening.setdefault(key, threading.Lock())
        try:
            with opening:  # two requests for the same stored conversation reopen it once
                with self._lock:
                    conv = self._live.get(key)
                if conv is not None:
                    return conv
                conv = self._reopen(owner, conv_id)
                with self._lock:
                    if conv is None or key in self._deleted:
                        return None
                    return self._live.setdefault(key, conv)
        finally:
            with self._lock:
                if self._opening.get(key) is opening:
                    del self._opening[key]

    def list(self, owner: Owner | str) -> list[Conversation]:
        """The owner's conversations, most recently active first: the stored ones and this process's new ones."""
        owner = owner_of(owner)
        with self._lock:
            live = {cid: c for (k, cid), c in self._live.items() if k == owner.key}
            deleted = {cid for (k, cid) in self._deleted if k == owner.key}
        out = []
        for saved in self.analyst.conversations(owner.name):
            if saved.session_id in deleted:
                continue
            conv = live.pop(saved.session_id, None)
            out.append(conv if conv is not None else self._stub(owner, saved))
        out += live.values()
        return sorted(out, key=lambda c: c.updated, reverse=True)

    def remove(self, owner: Owner | str, conv_id: str) -> Conversation | None:
        """Drop the conversation from the index (the caller deletes its stored data and files)."""
        key = (owner_of(owner).key, conv_id)
        with self._lock:
            self._deleted.add(key)
            return self._live.pop(key, None)

    def forget(self, key: str) -> list[Conversation]:
        """Drop every open conversation of the owner ``key`` (its account is gone); returns them (to stop their
        work). What is stored stays stored (``users remove`` deletes it, unless ``--keep-data``)."""
        with self._lock:
            gone = [self._live.pop(k) for k in [k for k in self._live if k[0] == key]]
            self._deleted = {k for k in self._deleted if k[0] != key}
        return gone

    def touch(self, conv: Conversation, result: Any = None) -> None:
        """Note activity and save the session state (tables, short-term memory, turn counter).

        ``Session.ask`` records the turn and saves the state itself; this also covers edited scripts. A
        conversation with nothing in it yet is not stored.
        """
        conv.updated = time.time()
        with self._lock:
            current = self._live.get((conv.key, conv.id)) is conv
        session = conv.session
        if not current or session is None or not (session.tables or session.results):
            return  # deleted meanwhile (do not bring its row back), or nothing to keep yet
        try:
            with conv.lock:
                session.save_state(only_changed=True)  # an answered question has stored it already
        except Exception:  # noqa: BLE001 - the answer stands even if the state cannot be saved now
            log.exception("conversation %s: could not save the session state", conv.id)
        if self.check_fresh:
            conv.version = self.analyst.session_version(conv.id, conv.user)

    def all(self) -> list[Conversation]:
        """The conversations open in this process (for closing workers)."""
        with self._lock:
            return list(self._live.values())

    # ------------------------------------------------------------------ stored conversations
    def _stub(self, owner: Owner, saved: SavedSession) -> Conversation:
        """A listed conversation that is not open: title, dates, turns, files; no session (nothing loaded)."""
        return Conversation(id=saved.session_id, user=owner.name, key=owner.key, session=None,
                            model=saved.model or self.analyst_for(owner).settings.model,
                            title=saved.title or "New conversation", created=saved.created, updated=saved.updated,
                            uploads=list(saved.uploads), n_turns=saved.n_turns)

    def _reopen(self, owner: Owner, conv_id: str) -> Conversation | None:
        """Reopen a stored conversation of ``owner`` (``Analyst.reopen``), or None when it has none ``conv_id``."""
        user = owner.name
        saved = self.analyst.conversation(conv_id, user)
        if saved is None:
            return None  # no such conversation for this user (another user's ids are not found either)
        version = self.analyst.session_version(conv_id, user) if self.check_fresh else None
        analyst = self.analyst_for(owner)
        session = analyst.reopen(conv_id, user=user)
        session.owner = owner.key if owner.account else None  # writes only while the account has this id
        session.store_cancelled = False  # a stopped question (or a removed account's) leaves nothing stored
        return Conversation(id=conv_id, user=user, key=owner.key, session=session, model=analyst.settings.model,
                            title=saved.title or "New conversation", created=saved.created, updated=saved.updated,
                            uploads=list(saved.uploads), version=version)
