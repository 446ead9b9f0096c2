"""The login page, logout, the user's own page (API tokens) and the JSON the page and scripts use.

``POST /login`` is rate-limited against password guessing: after ``LOGIN_RATE`` (default ``10/minute``)
failed attempts from one client address, every attempt from it is refused with 429 and ``Retry-After``
until the window has passed (successful logins do not count).
"""

from __future__ import annotations

import datetime as _dt
import hmac
import math

import flask_login
from flask import Blueprint, current_app, jsonify, redirect, render_template, request, session, url_for

from auto_analyst.errors import AutoAnalystError
from auto_analyst.web.auth import auth_state, browser_login_required, safe_next, sign_in, sign_out
from auto_analyst.web.errors import ApiError
from auto_analyst.web.security import csrf_token, current_user

__all__ = ["bp"]

bp = Blueprint("auth", __name__)


def _is_json() -> bool:
    return request.is_json


def _login_page(status: int = 200, error: str = ""):
    state = auth_state()
    return render_template("login.html", csrf_token=csrf_token(), token_mode=state.token_mode, error=error,
                           next=safe_next(request.values.get("next"))), status


@bp.get("/login")
def login():
    """The login form (a token field when the server runs without accounts)."""
    if flask_login.current_user.is_authenticated:
        return redirect(safe_next(request.args.get("next")))
    return _login_page()


@bp.post("/login")
def login_post():
    """Check a name and password (or the loopback token); on success redirect to ``next`` (JSON: 200)."""
    state = auth_state()
    # Only failed attempts count: a team behind one proxy or NAT address may all log in at 9 o'clock.
    rate, client = current_app.config.get("LOGIN_RATE", "10/minute"), request.remote_addr or "?"
    wait = state.over(rate, "login-failures", client)
    if wait:
        seconds = math.ceil(wait)
        raise ApiError(429, "rate_limit", f"Too many login attempts from this address; try again in {seconds} s.",
                       headers={"Retry-After": str(seconds)})
    data = request.get_json(silent=True) if _is_json() else request.form
    data = data if isinstance(data, dict) or hasattr(data, "get") else {}
    if state.token_mode:
        token = str(data.get("token") or "")
        if token and hmac.compare_digest(token, state.loopback_token):
            session["tok"] = state.token_fingerprint()
            return jsonify({"ok": True}) if _is_json() else redirect(safe_next(data.get("next")))
        message = "Wrong token; use the link `auto-analyst serve` printed."
    else:
        account = state.store.verify(str(data.get("name") or "").strip(), str(data.get("password") or ""))
        if account is not None:
            sign_in(account, current_app.config.get("LOGIN_LIFETIME", _dt.timedelta(days=7)))
            if _is_json():
                return jsonify({"ok": True, "user": account.name, "role": account.role,
                                "csrf_token": session["csrf"]})
            return redirect(safe_next(data.get("next")))
        message = "Wrong name or password."
    state.hit(rate, "login-failures", client)
    if _is_json():
        raise ApiError(401, "auth", message)
    return _login_page(401, message)


@bp.post("/logout")
def logout():
    """End the login on this browser and on the server (CSRF-checked like every state change)."""
    sign_out()
    return jsonify({"ok": True}) if _is_json() else redirect(url_for("auth.login"))


@bp.get("/api/me")
def me():
    """Who is signed in, how, their role, today's spending and cap."""
    user = flask_login.current_user
    state = auth_state()
    account = state.store.get(user.name)
    return jsonify({"ok": True, "user": user.name, "role": user.role, "via": user.via,
                    "daily_cost_usd": account.daily_cost_usd if account else None,
                    "rate_per_minute": account.rate_per_minute if account else None,
                    "spent_today_usd": state.store.spent_today(user.name)})


def _token_json(t) -> dict:
    return {"id": t.id, "label": t.label, "created_at": t.created_at, "last_used_at": t.last_used_at}


def _own_account():
    account = auth_state().store.get(current_user())
    if account is None:
        raise ApiError(400, "bad_input", "API tokens belong to accounts; create one with `auto-analyst users add NAME` "
                                         "and log in with it.")
    return account


@bp.get("/api/tokens")
def list_tokens():
    """The user's API tokens (from a browser login only: 403 with an API token)."""
    browser_login_required()
    return jsonify({"ok": True, "tokens": [_token_json(t) for t in auth_state().store.tokens(current_user())]})


@bp.post("/api/tokens")
def create_token():
    """A new API token; the token itself is in this response only (it is stored hashed).
    From a browser login only: 403 with an API token (a leaked token must not mint a spare)."""
    browser_login_required()
    data = request.get_json(silent=True) or {}
    record, token = auth_state().store.create_token(_own_account().name, str(data.get("label") or ""))
    return jsonify({"ok": True, "token": token, "record": _token_json(record)}), 201


@bp.delete("/api/tokens/<token_id>")
def revoke_token(token_id: str):
    """Revoke one of the user's tokens; an API token may revoke only itself (others: 403)."""
    if getattr(flask_login.current_user, "token_id", "") != token_id:
        browser_login_required()
    try:
        auth_state().store.revoke_token(token_id, user=current_user())
    except AutoAnalystError:
        raise ApiError(404, "not_found", "No such token of yours.") from None
    return jsonify({"ok": True})


@bp.get("/account")
def account_page():
    """The user's page: who they are, today's usage, their API tokens (create and revoke without JavaScript)."""
    browser_login_required()
    return _account_page()


def _account_page(new_token: str = "", status: int = 200):
    state = auth_state()
    user = flask_login.current_user
    return render_template("account.html", csrf_token=csrf_token(), user=user, account=state.store.get(user.name),
                           tokens=state.store.tokens(user.name), new_token=new_token,
                           spent=state.store.spent_today(user.name)), status


@bp.post("/account/tokens")
def account_create_token():
    browser_login_required()
    _, token = auth_state().store.create_token(_own_account().name, request.form.get("label", ""))
    return _account_page(new_token=token, status=201)


@bp.post("/account/tokens/<token_id>/revoke")
def account_revoke_token(token_id: str):
    revoke_token(token_id)
    return redirect(url_for("auth.account_page"))
