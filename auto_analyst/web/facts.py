"""The "what I remember" blueprint: the browser user's facts (``Analyst.facts()``), listed and forgotten.

``GET /api/facts`` lists the newest facts (``?q=`` searches them); ``DELETE /api/facts/<id>`` forgets one.
Only the cookie user's facts are ever read or changed.
"""

from __future__ import annotations

from flask import Blueprint, jsonify, request

from auto_analyst.web.chat import service
from auto_analyst.web.security import current_owner, current_user

__all__ = ["bp", "MAX_LISTED"]

bp = Blueprint("facts", __name__)

MAX_LISTED = 200
"""Facts the panel lists at most (newest first)."""


def _fact_json(f) -> dict:
    return {"id": f.id, "kind": f.kind, "text": f.line(when=False), "table": f.table, "at": f.at,
            "session": f.session, "turn": f.turn, "stale": f.stale}


@bp.get("/api/facts")
def list_facts():
    """The user's facts, newest first (or the best matches of ``q``), each with its line and whether it is stale."""
    user = current_user()
    view = service().analyst_for(current_owner()).facts(user)
    q = (request.args.get("q") or "").strip()[:200]
    found = view.search(q, limit=MAX_LISTED) if q else view.list(limit=MAX_LISTED)
    return jsonify({"ok": True, "facts": [_fact_json(f) for f in found]})


@bp.delete("/api/facts/<fact_id>")
def forget_fact(fact_id: str):
    """Forget one fact (404 when the user has no such fact)."""
    user = current_user()
    service().analyst_for(current_owner()).facts(user).forget(fact_id[:64])
    return jsonify({"ok": True})
