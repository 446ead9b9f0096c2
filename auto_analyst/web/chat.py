"""The chat blueprint: the page, conversations, asking, streaming progress, cancelling, re-running code.

Every ``/api/sessions/<sid>`` view looks the conversation up through
:meth:`WebService.get`, which answers 404 unless the session belongs to the browser's cookie user.
"""

from __future__ import annotations

import time
from contextlib import contextmanager
from typing import Any

from flask import Blueprint, Response, current_app, jsonify, render_template, request

from auto_analyst.web import render
from auto_analyst.web.conversations import Conversation
from auto_analyst.web.errors import ApiError
from auto_analyst.web.security import csrf_token, current_owner, current_user

__all__ = ["bp"]

bp = Blueprint("chat", __name__)

MAX_QUESTION_CHARS = 4000
MAX_CODE_CHARS = 200_000


def service():
    """The app's :class:`~auto_analyst.web.service.WebService`."""
    return current_app.extensions["auto_analyst"]


def body() -> dict[str, Any]:
    """The JSON body of the request.

    Raises:
        ApiError: 400 when the body is not a JSON object.
    """
    data = request.get_json(silent=True)
    if not isinstance(data, dict):
        raise ApiError(400, "bad_request", "Send a JSON object body with Content-Type: application/json.")
    return data


def signed_in_account():
    """The signed-in user's account as this request's sign-in read it (None without one)."""
    from flask_login import current_user as signed_in

    return getattr(signed_in, "account", None)


def conversation(sid: str) -> Conversation:
    """The signed-in user's conversation ``sid`` (raises ApiError 404 otherwise)."""
    return service().get(current_owner(), sid)


def conversation_json(conv: Conversation) -> dict[str, Any]:
    """Everything the page shows for one conversation."""
    session = conv.session
    tables = [{"name": t.name, "file": (u.original_name if (u := conv.source_of(t.name)) else ""),
               "sheet": getattr(t.report, "sheet", None),
               "n_rows": int(len(t.frame)), "n_columns": int(t.frame.shape[1])} for t in session.tables.values()]
    job = service().running_job(conv)
    return conv.summary() | {
        "tables": tables, "active": session.active,
        "results": [render.result_json(r, conv.id, i) for i, r in enumerate(list(session.results))],
        "job": {"id": job.id, "kind": job.kind} if job else None,
    }


@bp.get("/")
def page():
    """The single page; its data comes from the JSON endpoints below."""
    current_user()
    from flask_login import current_user as signed_in

    from auto_analyst.web.auth import is_admin

    return render_template("index.html", csrf_token=csrf_token(), max_file_mb=service().settings.max_file_mb,
                           user=signed_in, can_choose_model=is_admin() or service().settings.members_choose_model,
                           web_connect=service().settings.web_connect and is_admin())


@bp.get("/api/state")
def state():
    """The browser's model and its conversations, newest first."""
    user = current_owner()
    return jsonify({"ok": True, "model": service().model_of(user), "csrf_token": csrf_token(),
                    "max_file_mb": service().settings.max_file_mb,
                    "sessions": [c.summary() for c in service().index.list(user)]})


@bp.post("/api/model")
def set_model():
    """Pick the model (and API key, held in memory for this user only) for new conversations.

    Members may not, unless the setting ``members_choose_model`` is on (the server's key pays)."""
    from auto_analyst.web.auth import is_admin

    if not is_admin() and not service().settings.members_choose_model:
        raise ApiError(403, "forbidden", "Only an admin can change the model on this server; ask an admin.")
    data = body()
    model = service().set_model(current_owner(), str(data.get("model") or ""), str(data.get("api_key") or "") or None)
    return jsonify({"ok": True, "model": model})


@bp.get("/api/sessions")
def list_sessions():
    return jsonify({"ok": True, "sessions": [c.summary() for c in service().index.list(current_owner())]})


@bp.post("/api/sessions")
def new_session():
    """Start a new conversation."""
    conv = service().new_conversation(current_owner())
    return jsonify({"ok": True, "session": conversation_json(conv)}), 201


@bp.get("/api/sessions/<sid>")
def get_session(sid: str):
    return jsonify({"ok": True, "session": conversation_json(conversation(sid))})


@bp.delete("/api/sessions/<sid>")
def delete_session(sid: str):
    """Delete a conversation with its uploads, tables, figures and worker."""
    service().delete(current_owner(), sid)
    return jsonify({"ok": True})


def _job_json(conv: Conversation, job) -> dict[str, Any]:
    base = f"/api/sessions/{conv.id}/jobs/{job.id}"
    return {"ok": True, "job": {"id": job.id, "kind": job.kind, "events": f"{base}/events", "cancel": f"{base}/cancel"}}


def _index_of(conv: Conversation, result) -> int:
    return next(i for i, r in enumerate(conv.session.results) if r is result)


@bp.post("/api/sessions/<sid>/ask")
def ask(sid: str):
    """Start answering a question; progress and the result come from the job's event stream.

    The result's ``timings.waited`` counts from this request's receipt: the time the user waited.
    """
    asked_at = time.time()
    conv = conversation(sid)
    raw = body().get("question")
    if raw is not None and not isinstance(raw, str):
        raise ApiError(400, "bad_input", "The question must be text.")
    question = (raw or "").strip()
    if not question:
        raise ApiError(400, "bad_input", "The question is empty; type what you want to know about the data.")
    if len(question) > MAX_QUESTION_CHARS:
        raise ApiError(400, "bad_input", f"The question is over {MAX_QUESTION_CHARS} characters; shorten it.")
    if not conv.session.tables:
        raise ApiError(400, "bad_input", "No table is loaded; upload a CSV, Excel, Parquet or JSON file first.")
    from auto_analyst.web.auth import auth_state
    from auto_analyst.web.quota import check_question, cost_of

    state = auth_state()
    # Over the daily cap or the rate: refused before any model call. The hold reserves this question's
    # upper bound until its usage is recorded, so questions asked at once cannot pass the cap together.
    hold = check_question(state.store, state, conv.user, cost_of(conv.session), signed_in_account())
    meter = state.meter

    svc = service()  # the job thread has no app context

    def work(on_progress, cancel):
        from auto_analyst.results import ProgressEvent

        meter.before(conv.session)
        # The first question of a session starts its worker (seconds); say so before the API's events.
        on_progress(ProgressEvent(stage="starting", message="Preparing the session"))
        result = conv.session.ask(question, on_progress=on_progress, cancel=cancel, asked_at=asked_at)
        svc.index.touch(conv, result)
        return render.result_json(result, conv.id, _index_of(conv, result))

    def then():  # however the job ended: the real cost is recorded and the hold dropped, after the answer is out
        meter.record(conv.user, conv.session, hold)

    with _released_on_error(state, hold):
        job = svc.start_job(conv, "ask", work, title=question, then=then)
    return jsonify(_job_json(conv, job)), 202


@contextmanager
def _released_on_error(state, hold):
    """Drop ``hold`` when the question never starts (e.g. 409: the conversation is busy)."""
    try:
        yield
    except BaseException:
        from auto_analyst.web.quota import holds_of

        holds_of(state.store).release(hold)
        raise


@bp.post("/api/sessions/<sid>/run")
def run_code(sid: str):
    """Run an edited script in the conversation's worker (``Session.run_code``) as a job."""
    asked_at = time.time()
    conv = conversation(sid)
    data = body()
    code = str(data.get("code") or "")
    if not code.strip():
        raise ApiError(400, "bad_input", "The script is empty.")
    if len(code) > MAX_CODE_CHARS:
        raise ApiError(400, "bad_input", f"The script is over {MAX_CODE_CHARS} characters.")
    if not conv.session.tables:
        raise ApiError(400, "bad_input", "No table is loaded; upload a file first.")
    from auto_analyst.api import NO_MODEL_CALLS
    from auto_analyst.web.auth import auth_state
    from auto_analyst.web.quota import check_question, holds_of

    state = auth_state()
    hold = check_question(state.store, state, conv.user, NO_MODEL_CALLS,  # the rate only: a script calls no model
                          signed_in_account())
    question = str(data.get("question") or "") or None
    svc = service()  # the job thread has no app context

    def work(on_progress, cancel):
        from auto_analyst.results import ProgressEvent

        try:
            on_progress(ProgressEvent(stage="running", message="Running the edited script"))
            result = conv.session.run_code(code, question=question and f"{question} (edited)", cancel=cancel,
                                           asked_at=asked_at)
        finally:
            holds_of(state.store).release(hold)  # a script run calls no model: nothing to record
        svc.index.touch(conv, result)
        return render.result_json(result, conv.id, _index_of(conv, result))

    with _released_on_error(state, hold):
        job = svc.start_job(conv, "run", work)
    return jsonify(_job_json(conv, job)), 202


def _job(conv: Conversation, jid: str):
    job = service().job(conv, jid)
    if job is None:
        raise ApiError(404, "not_found", "No such job in this conversation.")
    return job


@bp.get("/api/sessions/<sid>/jobs/<jid>/events")
def events(sid: str, jid: str):
    """Server-sent events: ``progress`` events, then one ``result`` or ``error``.

    ``Last-Event-ID`` (sent by EventSource on reconnect) resumes after the events already seen.
    """
    job = _job(conversation(sid), jid)
    try:
        start = max(int(request.headers.get("Last-Event-ID", "0")), 0)
    except ValueError:
        start = 0
    # The generator touches only the job (no request or app context), so it needs no
    # stream_with_context; when the client leaves, werkzeug closes it and the job runs on.
    return Response(job.stream(start), mimetype="text/event-stream",
                    headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"})


@bp.get("/api/sessions/<sid>/jobs/<jid>")
def job_status(sid: str, jid: str):
    """A job's state, and its final event once finished (for clients without EventSource)."""
    job = _job(conversation(sid), jid)
    final = job.final()
    return jsonify({"ok": True, "job": {"id": job.id, "kind": job.kind, "finished": job.finished,
                                        "final": {"event": final[0], "data": final[1]} if final else None}})


@bp.post("/api/sessions/<sid>/jobs/<jid>/cancel")
def cancel(sid: str, jid: str):
    """Ask the run to stop (the API's cancel event); the stream then ends with the cancelled result."""
    job = _job(conversation(sid), jid)
    job.request_cancel()
    return jsonify({"ok": True, "finished": job.finished})
