"""A user's stored sessions as a surface lists and reopens them, and the files uploaded into them.

Uploads are stored under generated names in ``home/uploads/<user>/<session>/`` (:func:`upload_folder`); the
history database keeps each one's path and table names, and :data:`NAMES_FILE` beside the files maps each
generated name to the user's original file name (shown on the page, used by the exported script).
"""

from __future__ import annotations

import json
import re
import threading
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING

from auto_analyst.data.dictionary import is_dictionary_file
from auto_analyst.data.formats import FORMATS
from auto_analyst.errors import BadInputError, BadUploadError
from auto_analyst.results import Result

if TYPE_CHECKING:
    from auto_analyst.config import Settings
    from auto_analyst.memory.users.history import History, SessionInfo

__all__ = ["NAMES_FILE", "SESSION_ID", "SavedSession", "SavedSessions", "Upload", "checked_session_id",
           "checked_user_folder", "record_upload", "stored_results", "upload_folder", "upload_name"]

NAMES_FILE = "names.json"
"""In a session's upload folder: generated file name -> the user's original file name."""


@dataclass(frozen=True)
class Upload:
    """A file uploaded into a session: stored at ``path`` under a generated name; ``original_name`` is the user's
    file name (metadata only: the table names, exports, display); ``tables`` are the tables it became."""

    path: str
    original_name: str
    tables: tuple[str, ...] = ()


@dataclass(frozen=True)
class SavedSession:
    """A stored session as listed (nothing is loaded).

    Attributes:
        session_id: its id.
        title: the stored title, else the first upload's original name, else "".
        created, updated: epoch seconds of its start and of its last upload or turn.
        n_turns: the turns stored.
        model: the model string of its last turn ("" before the first).
        uploads: the files uploaded into it, oldest first.
    """

    session_id: str
    title: str
    created: float
    updated: float
    n_turns: int
    model: str = ""
    uploads: tuple[Upload, ...] = ()


SESSION_ID = re.compile(r"[A-Za-z0-9_-]{1,64}")
"""What a session id looks like (``secrets.token_urlsafe``); anything else never becomes part of a path."""


def checked_session_id(session_id: str) -> str:
    """``session_id`` when it has a session id's form (:data:`SESSION_ID`): '..' or 'a/b' never become a folder.

    Raises:
        BadInputError: it does not.
    """
    if not SESSION_ID.fullmatch(session_id or ""):
        raise BadInputError(f"{session_id!r} is not a session id.")
    return session_id


def checked_user_folder(user: str) -> str:
    """``user`` when it can be one folder name (no path separator, not '.' or '..').

    Raises:
        BadInputError: it cannot.
    """
    if not user or user in (".", "..") or re.search(r"[/\\\x00]", user):
        raise BadInputError(f"{user!r} is not a user name.")
    return user


def upload_folder(settings: Settings, user: str, session_id: str) -> Path:
    """Where the uploads of ``user``'s session ``session_id`` are stored.

    Raises:
        BadInputError: a session id or user name that would name another folder ('..').
    """
    return settings.home / "uploads" / checked_user_folder(user) / checked_session_id(session_id)


def upload_name(original_name: str) -> tuple[str, str]:
    """(file name, lower-case suffix) of a browser's file name, once it is known to be a loadable kind.

    Raises:
        BadUploadError: no name, or a type that is neither a table format nor a data dictionary (.md/.txt).
    """
    name = Path((original_name or "").replace("\\", "/")).name
    suffix = Path(name).suffix.lower()
    if not name:
        raise BadUploadError("The upload has no file name; choose a file to upload.")
    if suffix not in FORMATS and not is_dictionary_file(name):
        raise BadUploadError(f"Unsupported file type {suffix or '(none)'!r}; upload one of "
                             f"{', '.join(sorted(FORMATS))}.")
    return name, suffix


_NAMES_LOCK = threading.Lock()


def record_upload(history: History, user: str, session_id: str, upload: Upload, owner: str | None = None) -> bool:
    """Store an upload: its path and tables in the history, its original name beside the file.

    Returns:
        False, with nothing more stored, when the account ``user`` no longer has the id ``owner`` (removed while
        the file was written; checked as every write for an account is, ``storage.owners``): the caller deletes
        the file, which the removal's sweep of the account's folders may have run too early to see.
    """
    from auto_analyst.storage import owner_present, read

    path = Path(upload.path)
    for table in upload.tables:  # first: a removed account's upload must not write its name file either
        if not history.record_upload(user, session_id, str(path), table, owner=owner):
            return False
    if not upload.tables and owner is not None:  # a data dictionary has no row to check with: check alone
        with read(history.engine) as conn:
            if not owner_present(conn, user, owner):
                return False
    with _NAMES_LOCK:
        names = _read_names(path.parent)
        names[path.name] = upload.original_name
        tmp = path.parent / f".{NAMES_FILE}.tmp"
        tmp.write_text(json.dumps(names, ensure_ascii=False), encoding="utf-8")
        tmp.replace(path.parent / NAMES_FILE)
    return True


def stored_results(history: History, user: str, session_id: str) -> list[Result]:
    """The Results of the stored turns of a session, oldest first (a turn stored without its Result JSON comes back
    with its question, answer and code)."""
    out = []
    for t in history.turns(user, session_id):
        try:
            out.append(Result.model_validate_json(t.result_json))
        except ValueError:
            out.append(Result(question=t.question, status="ok", answer=t.answer, code=t.code, session_id=session_id,
                              turn=t.turn))
    return out


class SavedSessions:
    """The stored sessions of every user of one history database (``Analyst.conversations``); thread-safe.

    A listed session is built once per change of its stored row (turns, tables, title), not on every listing.
    """

    def __init__(self, history: History):
        self.history = history
        self._listed: dict[tuple[str, str], tuple[tuple, SavedSession]] = {}
        self._lock = threading.Lock()

    def list(self, user: str) -> list[SavedSession]:
        """``user``'s stored sessions, most recently active first."""
        return [self._saved(user, info) for info in self.history.sessions(user)]

    def get(self, user: str, session_id: str) -> SavedSession | None:
        """``user``'s stored session ``session_id``, or None (also when it is another user's)."""
        info = next((s for s in self.history.sessions(user) if s.session_id == session_id), None)
        return None if info is None else self._saved(user, info)

    def forget(self, user: str, session_id: str) -> None:
        with self._lock:
            self._listed.pop((user, session_id), None)

    def uploads(self, user: str, session_id: str) -> tuple[list[Upload], float]:
        """The session's uploads (one per file, with its tables) and the epoch time of the last one."""
        paths: dict[str, tuple[str, list[str]]] = {}
        last = 0.0
        for rec in self.history.uploads(user, session_id):
            if rec.path not in paths:
                original = _read_names(Path(rec.path).parent).get(Path(rec.path).name) or rec.name + Path(rec.path).suffix
                paths[rec.path] = (original, [])
            if rec.name not in paths[rec.path][1]:
                paths[rec.path][1].append(rec.name)
            last = max(last, _epoch(rec.created_at))
        return [Upload(path, original, tuple(tables)) for path, (original, tables) in paths.items()], last

    def _saved(self, user: str, info: SessionInfo) -> SavedSession:
        key, stored = (user, info.session_id), (info.n_turns, tuple(info.tables), info.title)
        with self._lock:
            cached = self._listed.get(key)
        if cached is not None and cached[0] == stored:
            return cached[1]
        uploads, uploaded = self.uploads(user, info.session_id)
        last = self.history.turns(user, info.session_id, limit=1)
        created = _epoch(info.started)
        saved = SavedSession(
            session_id=info.session_id, title=info.title or (uploads[0].original_name if uploads else ""),
            created=created, updated=max(created, uploaded, _epoch(last[0].created_at) if last else 0.0),
            n_turns=info.n_turns, model=last[0].model if last else "", uploads=tuple(uploads))
        with self._lock:
            self._listed[key] = (stored, saved)
        return saved


def _read_names(folder: Path) -> dict[str, str]:
    try:
        names = json.loads((folder / NAMES_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return names if isinstance(names, dict) else {}


def _epoch(iso: str) -> float:
    try:
        return datetime.fromisoformat(iso).timestamp()
    except (TypeError, ValueError):
        return 0.0
