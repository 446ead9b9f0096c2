"""Conversations of each browser, kept in the history database so they survive a server restart.

A :class:`Conversation` wraps one API :class:`~auto_analyst.api.Session` with what the page needs
besides it: the original file names of the uploads, the running job, a title and timestamps.
:class:`ConversationIndex` is the interface the service and the blueprints use:

* :class:`HistoryIndex` (the default) lists a user's conversations from the history database
  (``memory/users/history.py``), and reopens one on first use after a restart with
  :meth:`Analyst.resume <auto_analyst.api.Analyst.resume>`: its tables come back from the uploaded
  files, its past answers from the stored turns, its short-term memory from the saved state.
* :class:`MemoryIndex` keeps everything in this process (gone on restart); pass it as
  ``create_app(test_config={"CONVERSATION_INDEX": MemoryIndex()})``.
"""

from __future__ import annotations

import json
import logging
import threading
import time
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any, Callable, Protocol

__all__ = ["NAMES_FILE", "Conversation", "ConversationIndex", "HistoryIndex", "MemoryIndex", "Upload"]

log = logging.getLogger(__name__)

NAMES_FILE = "names.json"
"""In a conversation's upload folder: generated file name -> the user's original file name.

Uploads are stored under generated names and the history database keeps only their paths and
table names, so the original names (shown on the page, used by the exported script) are kept here."""


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

    def get(self, user: str, conv_id: str) -> Conversation | None: ...

    def list(self, user: str) -> list[Conversation]: ...

    def remove(self, user: str, conv_id: str) -> Conversation | None: ...

    def touch(self, conv: Conversation, result: Any = None) -> None: ...

    def add_upload(self, conv: Conversation, upload: Upload) -> None: ...

    def all(self) -> list[Conversation]: ...


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

    def add_upload(self, conv: Conversation, upload: Upload) -> None:
        """Note a new upload (already appended to ``conv.uploads``)."""
        self.touch(conv)

    def all(self) -> list[Conversation]:
        """Every conversation of every user (for closing workers)."""
        with self._lock:
            return [c for convs in self._by_user.values() for c in convs.values()]


class HistoryIndex:
    """Conversations kept in the history database: listed, reopened and continued after a restart.

    What is stored (all under ``settings.home``): each answered question as a turn
    (``Session.ask`` records it), the session state (table source paths, short-term memory, turn
    counter; saved by :meth:`touch`), each upload's path and table names (:meth:`add_upload`) and
    the uploads' original file names (:data:`NAMES_FILE` beside the files).

    Conversations opened or created by this process are cached in memory (one object per
    conversation, holding its tables, results, worker and running job). The others are listed from
    ``History.sessions`` without loading anything, and reopened by :meth:`get` on first use: the
    session is resumed (``Analyst.resume``: tables reloaded from the uploaded files, short-term
    memory, turn counter) and its past answers are rebuilt from the stored turns' ``result_json``.

    A new conversation is stored once it has something to keep (an upload or an answer); an empty
    one lives in memory only. Every lookup is by (user, id): one user never sees another's.

    Args:
        history: the :class:`~auto_analyst.memory.users.history.History` (``analyst.memory.history``).
        analyst_for: the Analyst a reopened conversation of a user runs with (the user's current one).
        check_fresh: several web processes serve the same browsers: a cached conversation that another
            process changed since (its stored version moved) is reopened from the database before use.
    """

    def __init__(self, history: Any, analyst_for: Callable[[str], Any], check_fresh: bool = False):
        self.history = history
        self.analyst_for = analyst_for
        self.check_fresh = check_fresh
        self._live: dict[tuple[str, str], Conversation] = {}
        self._deleted: set[tuple[str, str]] = set()
        self._listed: dict[tuple[str, str], tuple[Any, Conversation]] = {}  # (user, id) -> (stored key, stub)
        self._opening: dict[tuple[str, str], threading.Lock] = {}
        self._lock = threading.Lock()

    # ------------------------------------------------------------------ interface
    def add(self, conv: Conversation) -> None:
        with self._lock:
            self._live[(conv.user, conv.id)] = conv

    def get(self, user: str, conv_id: str) -> Conversation | None:
        """The user's conversation (reopened from the history if needed), or None when it does not
        exist *or belongs to another user*."""
        key = (user, conv_id)
        with self._lock:
            conv = self._live.get(key)
        if conv is not None and self.check_fresh and conv.version is not None and not conv.busy \
                and self.history.session_version(user, conv_id) != conv.version:
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
                conv = self._reopen(user, conv_id)
                with self._lock:
                    if conv is None or key in self._deleted:
                        return None
                    return self._live.setdefault(key, conv)
        finally:
            with self._lock:
                if self._opening.get(key) is opening:
                    del self._opening[key]

    def list(self, user: str) -> list[Conversation]:
        """The user's conversations, most recently active first: the stored ones and this process's new ones."""
        with self._lock:
            live = {cid: c for (u, cid), c in self._live.items() if u == user}
            deleted = {cid for (u, cid) in self._deleted if u == user}
        out = []
        for info in self.history.sessions(user):
            if info.session_id in deleted:
                continue
            conv = live.pop(info.session_id, None)
            out.append(conv if conv is not None else self._stub(user, info))
        out += live.values()
        return sorted(out, key=lambda c: c.updated, reverse=True)

    def remove(self, user: str, conv_id: str) -> Conversation | None:
        """Drop the conversation from the index (the caller deletes its stored data and files)."""
        key = (user, conv_id)
        with self._lock:
            self._deleted.add(key)
            self._listed.pop(key, None)
            return self._live.pop(key, None)

    def touch(self, conv: Conversation, result: Any = None) -> None:
        """Note activity and save the session state (tables, short-term memory, turn counter).

        ``Session.ask`` records the turn and saves the state itself; this also covers uploads and
        edited scripts (``run_code`` does not save the state). A conversation with nothing in it
        yet is not stored.
        """
        conv.updated = time.time()
        with self._lock:
            current = self._live.get((conv.user, conv.id)) is conv
        session = conv.session
        if not current or session is None or not (session.tables or session.results):
            return  # deleted meanwhile (do not bring its row back), or nothing to keep yet
        try:
            with conv.lock:
                session.save_state()
        except Exception:  # noqa: BLE001 - the answer stands even if the state cannot be saved now
            log.exception("conversation %s: could not save the session state", conv.id)
        if self.check_fresh:
            conv.version = self.history.session_version(conv.user, conv.id)

    def add_upload(self, conv: Conversation, upload: Upload) -> None:
        """Store an upload: its path and tables in the history, its original name beside the file."""
        path = Path(upload.path)
        with self._lock:
            names = _read_names(path.parent)
            names[path.name] = upload.original_name
            tmp = path.parent / f".{NAMES_FILE}.tmp"
            tmp.write_text(json.dumps(names, ensure_ascii=False), encoding="utf-8")
            tmp.replace(path.parent / NAMES_FILE)
        for table in upload.tables:
            self.history.record_upload(conv.user, conv.id, str(path), table)
        self.touch(conv)

    def all(self) -> list[Conversation]:
        """The conversations open in this process (for closing workers)."""
        with self._lock:
            return list(self._live.values())

    # ------------------------------------------------------------------ stored conversations
    def _info(self, user: str, conv_id: str) -> Any:
        return next((s for s in self.history.sessions(user) if s.session_id == conv_id), None)

    def _uploads(self, user: str, conv_id: str) -> tuple[list[Upload], float]:
        """The conversation's uploads (one per file, with its tables) and the time of the last one."""
        by_path: dict[str, Upload] = {}
        last = 0.0
        for rec in self.history.uploads(user, conv_id):
            up = by_path.get(rec.path)
            if up is None:
                names = _read_names(Path(rec.path).parent)
                original = names.get(Path(rec.path).name) or rec.name + Path(rec.path).suffix
                up = by_path[rec.path] = Upload(path=rec.path, original_name=original)
            if rec.name not in up.tables:
                up.tables.append(rec.name)
            last = max(last, _epoch(rec.created_at))
        return list(by_path.values()), last

    def _stub(self, user: str, info: Any) -> Conversation:
        """A listed conversation that is not open: title, dates, turns, files; no session (nothing loaded)."""
        key = (user, info.session_id)
        stored = (info.n_turns, tuple(info.tables), info.title)
        with self._lock:
            cached = self._listed.get(key)
        if cached is not None and cached[0] == stored:
            return cached[1]
        uploads, uploaded = self._uploads(user, info.session_id)
        last = self.history.turns(user, info.session_id, limit=1)
        created = _epoch(info.started)
        conv = Conversation(
            id=info.session_id, user=user, session=None,
            model=last[0].model if last and last[0].model else self.analyst_for(user).settings.model,
            title=_title(info, uploads), created=created,
            updated=max(created, uploaded, _epoch(last[0].created_at) if last else 0.0),
            uploads=uploads, n_turns=info.n_turns)
        with self._lock:
            self._listed[key] = (stored, conv)
        return conv

    def _reopen(self, user: str, conv_id: str) -> Conversation | None:
        """Resume a stored conversation of ``user``: tables, short-term memory, turn counter, past answers."""
        from auto_analyst.results import Result

        info = self._info(user, conv_id)
        if info is None:
            return None  # no such conversation for this user (another user's ids are not found either)
        version = self.history.session_version(user, conv_id) if self.check_fresh else None
        analyst = self.analyst_for(user)
        session = None
        state = self.history.load_session_state(user, conv_id)
        if state:
            try:
                session = analyst.resume(conv_id, user=user)
            except Exception:  # noqa: BLE001 - e.g. an uploaded file that no longer loads: keep the answers
                log.exception("conversation %s: could not reload its tables", conv_id)
            else:
                _drop_extra_sheets(session, state)
        if session is None:
            session = analyst.session(conv_id, user=user)
        turns = self.history.turns(user, conv_id)
        results = []
        for t in turns:
            try:
                results.append(Result.model_validate_json(t.result_json))
            except ValueError:  # a turn stored without its result: show its question, answer and code
                results.append(Result(question=t.question, status="ok", answer=t.answer, code=t.code,
                                      session_id=conv_id, turn=t.turn))
        if not session.results:
            session.results.extend(results)
        session.turn = max([session.turn] + [t.turn for t in turns])
        uploads, uploaded = self._uploads(user, conv_id)
        created = _epoch(info.started)
        return Conversation(id=conv_id, user=user, session=session, model=analyst.settings.model,
                            title=_title(info, uploads), created=created,
                            updated=max(created, uploaded, _epoch(turns[-1].created_at) if turns else 0.0),
                            uploads=uploads, version=version)


def _drop_extra_sheets(session: Any, state: str) -> None:
    """Keep only the tables the saved state names.

    A state saved without the tables' sheets (older versions) makes ``Session.resume`` load every
    sheet of a workbook once per table of it, so a two-sheet upload came back as four tables
    (``book_one``, ``book_two``, ``book_one_2``, ...). The first load of each file names its sheets
    as the original upload did; the later copies go.
    """
    try:
        saved = set(json.loads(state).get("tables", {}))
    except (ValueError, AttributeError):
        return
    for name in [name for name in session.tables if name not in saved]:
        session.drop(name)


def _read_names(folder: Path) -> dict[str, str]:
    try:
        names = json.loads((folder / NAMES_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return names if isinstance(names, dict) else {}


def _title(info: Any, uploads: list[Upload]) -> str:
    return info.title or (uploads[0].original_name if uploads else "") or "New conversation"


def _epoch(iso: str) -> float:
    try:
        return datetime.fromisoformat(iso).timestamp()
    except (TypeError, ValueError):
        return 0.0
