"""The admin's views: users, usage per user and day, and each user's daily cost cap and question rate.

Every view here is :func:`~auto_analyst.web.auth.admin_required` (members get 403).
"""

from __future__ import annotations

from datetime import timedelta

from flask import Blueprint, jsonify, redirect, render_template, request, url_for

from auto_analyst.errors import BadInputError
from auto_analyst.storage import utc_now
from auto_analyst.web.accounts import parse_day
from auto_analyst.web.auth import admin_required, auth_state
from auto_analyst.web.security import csrf_token

__all__ = ["bp"]

bp = Blueprint("admin", __name__)


def _account_json(a, spent: float) -> dict:
    return {"name": a.name, "role": a.role, "daily_cost_usd": a.daily_cost_usd, "rate_per_minute": a.rate_per_minute,
            "created_at": a.created_at, "spent_today_usd": spent}


def _since() -> str:
    raw = request.args.get("since")
    return parse_day(raw) if raw else (utc_now().date() - timedelta(days=30)).isoformat()


@bp.get("/api/admin/users")
@admin_required
def users():
    store = auth_state().store
    return jsonify({"ok": True, "users": [_account_json(a, store.spent_today(a.name)) for a in store.list()]})


@bp.get("/api/admin/usage")
@admin_required
def usage():
    """LM calls, tokens and cost per user and UTC day since ``?since=YYYY-MM-DD`` (default: 30 days)."""
    rows = auth_state().store.usage(since=_since())
    return jsonify({"ok": True, "usage": [r.__dict__ for r in rows]})


def _limits(data) -> dict:
    """The fields an admin may change, from JSON or a form (an empty value means no cap / no limit)."""
    out = {}
    for key, cast in (("daily_cost_usd", float), ("rate_per_minute", int)):
        if key in data:
            value = data.get(key)
            try:
                out[key] = None if value in (None, "") else cast(value)
            except (TypeError, ValueError):
                raise BadInputError(f"{key} must be a number, or empty for no limit.") from None
    if data.get("role"):
        out["role"] = str(data.get("role"))
    return out


@bp.post("/api/admin/users/<name>")
@admin_required
def set_limits(name: str):
    """Set ``daily_cost_usd`` (null = no cap), ``rate_per_minute`` (questions; null = no limit), ``role``."""
    data = request.get_json(silent=True)
    if not isinstance(data, dict):
        raise BadInputError("Send a JSON object with daily_cost_usd, rate_per_minute and/or role.")
    store = auth_state().store
    account = store.update(name, **_limits(data))
    return jsonify({"ok": True, "user": _account_json(account, store.spent_today(name))})


@bp.get("/admin")
@admin_required
def page():
    """Users with today's spending and their limits (editable), and usage per user and day."""
    store = auth_state().store
    accounts = store.list()
    return render_template("admin.html", csrf_token=csrf_token(), accounts=accounts,
                           spent={a.name: store.spent_today(a.name) for a in accounts},
                           usage=store.usage(since=_since()))


@bp.post("/admin/users/<name>")
@admin_required
def page_set_limits(name: str):
    auth_state().store.update(name, **_limits(request.form))
    return redirect(url_for("admin.page"))
