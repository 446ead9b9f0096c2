"""The web app's service object (``app.extensions["auto_analyst"]``): analysts, conversations, jobs.

Per-user state is keyed by the owner's key (:class:`~auto_analyst.web.conversations.Owner`: an account's id,
never its name, or the browser's cookie id without accounts) and lives here, never in a module global. The
default :class:`~auto_analyst.api.Analyst` (settings' model, usually offline) serves every
browser; a user who picks a model gets their own Analyst holding the key in memory only. When an account
is removed, :meth:`WebService.forget_removed` drops what this process holds of it.
"""

from __future__ import annotations

import logging
import re
import threading
import time
from pathlib import Path
from typing import Any, Callable

from auto_analyst.api import Analyst, Upload
from auto_analyst.config import Settings, is_offline_model
from auto_analyst.errors import AutoAnalystError, ModelError
from auto_analyst.web.conversations import Conversation, ConversationIndex, HistoryIndex, Owner, owner_of
from auto_analyst.web.errors import ApiError
from auto_analyst.web.jobs import Job

__all__ = ["WebService"]

log = logging.getLogger(__name__)
_ID = re.compile(r"^[A-Za-z0-9_-]{8,64}$")


class WebService:
    """Everything the blueprints share.

    Args:
        settings: the frozen settings (home, max_file_mb, model, ...).
        index: where conversations are kept (default: :class:`HistoryIndex`, the history database
            under ``settings.home``, so they survive a restart).
        max_live_workers: sessions allowed a running worker process at once; past it the least
            recently used idle conversation's worker is stopped (its tables and memory stay).
        keep_active_seconds: a conversation used within this many seconds keeps its worker even past
            ``max_live_workers``: stopping it would only restart it at the next question (a worker start
            and a table reload, which made 20 busy clients cost 3x the sandbox CPU per answer of one
            client with the cap at 12; ``benchmarks/bench_web_throughput.py``). Memory then follows the
            users actually asking, and the cap applies as soon as they pause.
        job_timeout: seconds before a running question cancels itself.
    """

    def __init__(self, settings: Settings, index: ConversationIndex | None = None, max_live_workers: int = 12,
                 job_timeout: float = 900.0, keep_active_seconds: float = 120.0):
        self.settings = settings
        self.analyst = Analyst(settings=settings)
        # With a queue, other web processes serve the same browsers: jobs are shared through Redis and a
        # cached conversation is reopened when another process changed it.
        self.shared = None
        if settings.queue_url:
            from auto_analyst.web.shared_jobs import SharedJobs

            self.shared = SharedJobs(settings.queue_url)
        self.index = index or HistoryIndex(self.analyst, self.analyst_for, check_fresh=self.shared is not None)
        self.max_live_workers = max_live_workers
        self.keep_active_seconds = keep_active_seconds
        self.job_timeout = job_timeout
        self._analysts: dict[str, Analyst] = {}  # owner key -> the Analyst of the model the owner picked
        self._account_keys: set[str] = set()  # owner keys that are account ids (forgotten when the account goes)
        self._live: dict[str, Conversation] = {}  # conv id -> conversation whose worker may be running
        self._lock = threading.Lock()
        self.closed = False  # set by close(): background sweeps stop

    # ----------------------------------------------------------------- models
    def analyst_for(self, user: Owner | str) -> Analyst:
        """The Analyst ``user``'s new (and reopened) conversations run with."""
        return self._analysts.get(owner_of(user).key) or self.analyst

    def model_of(self, user: Owner | str) -> str:
        """The model new conversations of ``user`` use."""
        return self.analyst_for(user).settings.model

    def set_model(self, user: Owner | str, model: str, api_key: str | None) -> str:
        """Use ``model`` (with ``api_key``, kept in memory only) for ``user``'s new conversations.

        Raises:
            ApiError: 400 when the model string is unknown or needs a key that was not given.
        """
        owner = self._seen(user)
        model = (model or "").strip()
        if is_offline_model(model) and is_offline_model(self.analyst.settings.model):
            with self._lock:  # the server's own model: the user's choice is dropped
                self._analysts.pop(owner.key, None)
            return self.analyst.settings.model
        try:  # the embedded offline model on a server with a priced one is the user's own choice too
            analyst = Analyst(model=model, settings=self.settings, api_key=api_key or None, user=owner.name)
            analyst.check_model()
        except (ModelError, AutoAnalystError) as exc:
            raise ApiError(400, "model", str(exc)) from None
        with self._lock:
            self._analysts[owner.key] = analyst
        return model

    def _seen(self, user: Owner | str) -> Owner:
        owner = owner_of(user)
        if owner.account:
            with self._lock:
                self._account_keys.add(owner.key)
        return owner

    def removed_accounts(self, account_ids: set[str]) -> set[str]:
        """The account ids this process holds something of that are not in ``account_ids`` (cheap: a set difference)."""
        with self._lock:
            return self._account_keys - set(account_ids)

    def forget_removed(self, account_ids: set[str]) -> int:
        """Drop what this process holds of accounts no longer in ``account_ids`` (removed, even if added again
        under the same name): their open conversations (running jobs cancelled, workers stopped) and the model
        and key they picked. Stored data is not touched (``users remove`` deletes it unless ``--keep-data``).

        Returns:
            how many accounts were forgotten.
        """
        with self._lock:
            gone = self._account_keys - set(account_ids)
            self._account_keys -= gone
            analysts = [self._analysts.pop(k) for k in gone if k in self._analysts]
        for key in gone:
            convs = self.index.forget(key)
            _stop_jobs(convs)
            for c in convs:
                with self._lock:
                    self._live.pop(c.id, None)
                if c.session is not None:
                    try:
                        c.session.close()
                    except Exception:  # noqa: BLE001 - a worker that will not stop must not stop the sweep
                        log.exception("conversation %s of a removed account: could not close it", c.id)
        for analyst in analysts:
            analyst.close()
        return len(gone)

    # ---------------------------------------------------------- conversations
    def new_conversation(self, user: Owner | str) -> Conversation:
        """A fresh conversation (and API session) for ``user`` with the user's current model."""
        owner = self._seen(user)
        analyst = self.analyst_for(owner)
        session = analyst.session(user=owner.name)
        session.owner = owner.key if owner.account else None  # writes only while the account has this id
        session.store_cancelled = False  # a stopped question (or a removed account's) leaves nothing stored
        conv = Conversation(id=session.id, user=owner.name, key=owner.key, session=session,
                            model=analyst.settings.model)
        self.index.add(conv)
        return conv

    def get(self, user: Owner | str, conv_id: str) -> Conversation:
        """The user's conversation.

        Raises:
            ApiError: 404 when it does not exist or belongs to another browser (the same answer
                for both, so ids of other users cannot be probed).
        """
        conv = self.index.get(self._seen(user), conv_id) if _ID.match(conv_id or "") else None
        if conv is None:
            raise ApiError(404, "not_found", "No such conversation; it may have been deleted. Start a new one.")
        return conv

    def delete(self, user: Owner | str, conv_id: str) -> None:
        """Delete a conversation and its data (``Analyst.delete_session``: history turns and state, uploads, tables,
        figures, worker, replay log) after cancelling its running job."""
        conv = self.get(user, conv_id)
        self.index.remove(user, conv_id)
        if conv.job is not None:
            conv.job.cancel.set()
            conv.job.wait(30)
        if self.shared is not None:
            running = self.shared.running(conv.id)
            if running:
                self.shared.get(conv.id, running).request_cancel()
        with self._lock:
            self._live.pop(conv.id, None)
        for analyst in self._all_analysts():  # the one that opened the session stops its worker
            analyst.forget(conv.id)
        self.analyst.delete_session(conv.id, user=conv.user)

    # ---------------------------------------------------------------- uploads
    def upload(self, conv: Conversation, original_name: str, save: Callable[[Path], None]) -> Upload:
        """Store an upload and load it into the conversation (``Session.upload``).

        Args:
            conv: the conversation.
            original_name: the browser's file name (metadata: table name, export, display).
            save: writes the uploaded bytes to the path it is given.

        Raises:
            ApiError: 409 while a run is going on.
            BadUploadError: no file name, or an unsupported type (400, kind ``bad_upload``).
            DataLoadError: the file is not a loadable table (the message says why).
        """
        with conv.lock:
            if self.busy(conv):
                raise ApiError(409, "busy", "A question is running; wait for it or cancel it, then upload.")
            upload = conv.session.upload(original_name, save)
            conv.uploads.append(upload)
            if conv.title == "New conversation":
                conv.title = upload.original_name
        self.index.touch(conv)
        return upload

    # ------------------------------------------------------------------- jobs
    def start_job(self, conv: Conversation, kind: str, work: Callable[..., Any], title: str = "",
                  then: Callable[[], None] | None = None) -> Job:
        """Run ``work`` for ``conv`` in the background (one job per conversation at a time); ``then`` runs in the
        job's thread after its last event and the conversation's note of activity (e.g. the usage, which waits for
        the after-answer work: the answer is streamed first, and no thread is started for it).

        Raises:
            ApiError: 409 when the conversation is already running something.
        """
        with conv.lock:
            if conv.busy:
                raise ApiError(409, "busy", "This conversation is already working; wait or cancel first.")
            job = Job(kind, work, timeout=self.job_timeout, on_done=lambda j: self._job_done(conv, then))
            if self.shared is not None:
                if not self.shared.claim(conv.id, job.id, kind, conv.user):
                    raise ApiError(409, "busy", "This conversation is already working; wait or cancel first.")
                self.shared.attach(job, conv.id)
            if title and (conv.title == "New conversation" or not conv.session.results):
                conv.title = title[:80]
            conv.job = job
            conv.jobs = {k: v for k, v in list(conv.jobs.items())[-4:]} | {job.id: job}
        with self._lock:
            self._live[conv.id] = conv
        job.start()
        return job

    def busy(self, conv: Conversation) -> bool:
        """True while a question or script runs on the conversation, in this process or another."""
        return conv.busy or (self.shared is not None and self.shared.running(conv.id) is not None)

    def running_job(self, conv: Conversation) -> Any:
        """The job running on the conversation (this process's, or another's seen through Redis), or None."""
        if conv.busy:
            return conv.job
        if self.shared is not None:
            job_id = self.shared.running(conv.id)
            return self.shared.get(conv.id, job_id) if job_id else None
        return None

    def job(self, conv: Conversation, job_id: str) -> Any:
        """The conversation's job ``job_id`` wherever it runs, or None."""
        job = conv.jobs.get(job_id)
        if job is None and self.shared is not None:
            job = self.shared.get(conv.id, job_id)
        return job

    def _job_done(self, conv: Conversation, then: Callable[[], None] | None = None) -> None:
        try:
            self.index.touch(conv)
            self._reap()
        finally:
            if then is not None:
                then()

    def _reap(self) -> None:
        """Stop the workers of the least recently used idle conversations beyond ``max_live_workers``."""
        with self._lock:
            live = sorted(self._live.values(), key=lambda c: c.updated)
            extra = len(live) - self.max_live_workers
            recent = time.time() - self.keep_active_seconds
            victims = [c for c in live if not c.busy and c.updated < recent][:max(extra, 0)]
            for c in victims:
                self._live.pop(c.id, None)
        for c in victims:
            with c.lock:
                if not c.busy:
                    c.session.close()

    def _all_analysts(self) -> list[Analyst]:
        with self._lock:
            return [self.analyst, *self._analysts.values()]

    def close(self) -> None:
        """Cancel running jobs and stop every worker (server shutdown)."""
        self.closed = True
        convs = self.index.all() if hasattr(self.index, "all") else list(self._live.values())
        _stop_jobs(convs)
        for a in self._all_analysts():
            a.close()


def _stop_jobs(convs) -> None:
    """Cancel the running jobs of ``convs``, then wait up to 10 s for each to end (all cancelled before any wait)."""
    for c in convs:
        if c.job is not None:
            c.job.cancel.set()
    for c in convs:
        if c.job is not None:
            c.job.wait(10)
