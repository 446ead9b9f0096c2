"""Conversations of each browser: the in-app index now, the history database later.

A :class:`Conversation` wraps one API :class:`~auto_analyst.api.Session` with what the page needs
besides it: the original file names of the uploads, the running job, a title and timestamps.
:class:`ConversationIndex` is the interface point for persistence: :class:`MemoryIndex` keeps
everything in this process; a history-backed index (``memory/history.py``: ``sessions``,
``record_turn``, ``record_upload``, ``forget_session``) can implement the same five methods and be
passed to ``create_app(test_config={"CONVERSATION_INDEX": ...})``.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field
from typing import Any, Protocol

__all__ = ["Conversation", "ConversationIndex", "MemoryIndex", "Upload"]


@dataclass
class Upload:
    """A stored upload: the generated file on disk and the user's original file name (metadata only)."""

    path: str
    original_name: str
    tables: list[str] = field(default_factory=list)


@dataclass
class Conversation:
    """One conversation of one browser user.

    Attributes:
        id: the API session id (random, unguessable).
        user: the owner's cookie user id.
        session: the API Session (tables, results, worker).
        model: the model string the conversation's Analyst uses.
        uploads: the files loaded into it, in order.
        job: the running (or last) job, if any.
        jobs: recent jobs by id, so a reconnecting stream finds its job.
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
                "updated": self.updated, "n_turns": len(self.session.results), "busy": self.busy,
                "files": [u.original_name for u in self.uploads]}


class ConversationIndex(Protocol):
    """Where a user's conversations are found again; implement this to persist them."""

    def add(self, conv: Conversation) -> None: ...

    def get(self, user: str, conv_id: str) -> Conversation | None: ...

    def list(self, user: str) -> list[Conversation]: ...

    def remove(self, user: str, conv_id: str) -> Conversation | None: ...

    def touch(self, conv: Conversation, result: Any = None) -> None: ...


class MemoryIndex:
    """The in-process index: user id -> conversations, newest first. Thread-safe."""

    def __init__(self) -> None:
        self._by_user: dict[str, dict[str, Conversation]] = {}
        self._lock = threading.Lock()

    def add(self, conv: Conversation) -> None:
        with self._lock:
            self._by_user.setdefault(conv.user, {})[conv.id] = conv

    def get(self, user: str, conv_id: str) -> Conversation | None:
        """The conversation, or None when it does not exist *or belongs to another user*."""
        with self._lock:
            return self._by_user.get(user, {}).get(conv_id)

    def list(self, user: str) -> list[Conversation]:
        with self._lock:
            convs = list(self._by_user.get(user, {}).values())
        return sorted(convs, key=lambda c: c.updated, reverse=True)

    def remove(self, user: str, conv_id: str) -> Conversation | None:
        with self._lock:
            return self._by_user.get(user, {}).pop(conv_id, None)

    def touch(self, conv: Conversation, result: Any = None) -> None:
        """Note activity (a history-backed index records the turn here)."""
        conv.updated = time.time()

    def all(self) -> list[Conversation]:
        """Every conversation of every user (for closing workers)."""
        with self._lock:
            return [c for convs in self._by_user.values() for c in convs.values()]
