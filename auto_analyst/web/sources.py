"""The sources blueprint: connect a SQL database to a conversation (docs/sources.md).

Off unless the ``web_connect`` setting is on: the server would read any database URL a page user gives,
SQLite and DuckDB files on the server's own disk included; and then for admins only (members get 403).
The URL's password is used for the connection and never stored or sent back (previews name ``safe_url``).
"""

from __future__ import annotations

from flask import Blueprint, jsonify

from auto_analyst.web import render
from auto_analyst.web.auth import admin_required
from auto_analyst.web.chat import body, conversation, service
from auto_analyst.web.errors import ApiError

__all__ = ["bp"]

bp = Blueprint("sources", __name__)


@bp.post("/api/sessions/<sid>/sources")
@admin_required
def connect(sid: str):
    """Connect the database of JSON ``{"url": ...}``; 201 with a preview of each table (first rows, types).

    Raises:
        ApiError: 403 when ``web_connect`` is off or the user is no admin; 409 while a question runs.
        BadInputError: a missing or non-database URL.
        DataLoadError: the database cannot be reached (the message names the URL without its password).
    """
    if not service().settings.web_connect:
        raise ApiError(403, "forbidden", "Connecting a database from the page is turned off; an administrator can "
                                         "turn it on with the web_connect setting.")
    url = str(body().get("url") or "").strip()  # not a database URL: Session.connect says so (400, bad_input)
    conv = conversation(sid)
    with conv.lock:
        if service().busy(conv):
            raise ApiError(409, "busy", "A question is running; connect the database when it is done.")
        loaded = conv.session.connect(url)
        if conv.title == "New conversation":
            conv.title = conv.session.source.safe_url.rsplit("/", 1)[-1] or "database"
    return jsonify({"ok": True, "tables": [render.table_preview(t) for t in loaded],
                    "active": conv.session.active}), 201
