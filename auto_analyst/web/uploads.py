"""The uploads blueprint: put a file into a conversation, preview its tables, switch the active table."""

from __future__ import annotations

from flask import Blueprint, jsonify, request

from auto_analyst.web import render
from auto_analyst.web.chat import body, conversation, service
from auto_analyst.web.errors import ApiError

__all__ = ["bp"]

bp = Blueprint("uploads", __name__)


@bp.post("/api/sessions/<sid>/uploads")
def upload(sid: str):
    """Upload one file (multipart field ``file``); it is stored under a generated name and loaded.

    Returns 201 with a preview (first rows, types, load report) of each table the file gave.

    Raises:
        ApiError: 400 without a file or with an unsupported type; 413 over ``max_file_mb``
            (werkzeug stops reading at MAX_CONTENT_LENGTH); 400 when the file is not a table.
    """
    conv = conversation(sid)
    file = request.files.get("file")
    if file is None or not file.filename:
        raise ApiError(400, "bad_upload", "No file in the upload; choose or drop a data file.")
    upload = service().upload(conv, file.filename, file.save)
    return jsonify({"ok": True, "tables": [render.table_preview(conv.session.tables[n], upload) for n in upload.tables],
                    "active": conv.session.active}), 201


@bp.get("/api/sessions/<sid>/tables/<name>")
def preview(sid: str, name: str):
    """First rows, types and load report of one table."""
    conv = conversation(sid)
    table = conv.session.tables.get(name)
    if table is None:
        raise ApiError(404, "not_found", f"No table {name!r} in this conversation.")
    return jsonify({"ok": True, "table": render.table_preview(table, conv.source_of(name))})


@bp.post("/api/sessions/<sid>/active")
def use_table(sid: str):
    """Make a table the active one (``df`` in generated code)."""
    conv = conversation(sid)
    name = str(body().get("name") or "")
    if name not in conv.session.tables:
        raise ApiError(404, "not_found", f"No table {name!r} in this conversation.")
    with conv.lock:
        if service().busy(conv):
            raise ApiError(409, "busy", "A question is running; switch tables when it is done.")
        conv.session.use(name)  # the next question is planned against it (Session.ask)
    return jsonify({"ok": True, "active": conv.session.active})
