"""The web page: a Flask app factory, blueprints by area, templates and static files served by the app.

Example:
    >>> from auto_analyst.web import create_app
    >>> app = create_app({"TESTING": True})        # doctest: +SKIP
    >>> app.test_client().get("/").status_code     # doctest: +SKIP
    200
"""

from __future__ import annotations

import datetime as _dt
from pathlib import Path
from typing import Any, Mapping

from flask import Flask, send_file

from auto_analyst.web.security import load_secret_key

from auto_analyst.web.accounts import AccountStore
from auto_analyst.web.auth import admin_required, login_required
from auto_analyst.web.user_data import count_user_data, delete_user_data

__all__ = ["AccountStore", "admin_required", "count_user_data", "create_app", "delete_user_data", "load_secret_key",
           "login_required"]

# Multipart framing adds a few hundred bytes per field; 1 MiB of slack keeps a file of exactly
# max_file_mb from being refused by werkzeug before the loader's own check can explain the limit.
_UPLOAD_SLACK = 1024 * 1024


def create_app(test_config: Mapping[str, Any] | None = None) -> Flask:
    """Build the app: settings, signed cookie, CSRF check, error shape, blueprints, the Analyst service.

    Args:
        test_config: Flask config overrides. Recognised keys besides Flask's own:
            ``SETTINGS`` (a :class:`~auto_analyst.config.Settings`; default ``Settings.load()``),
            ``CONVERSATION_INDEX`` (a :class:`~auto_analyst.web.conversations.ConversationIndex`),
            ``MAX_LIVE_WORKERS`` (int), ``JOB_TIMEOUT`` (seconds), ``AUTH`` (``auto``, the default: accounts,
            a trusted proxy or the loopback token; ``none``: no sign-in, for loopback only, see docs/team.md),
            ``AUTH_TOKEN`` (the loopback token; made when missing, read it from ``app.config``),
            ``LOGIN_RATE`` (``limits`` syntax, default ``10/minute`` per address) and
            ``LOGIN_LIFETIME`` (a timedelta, default 7 days) and ``ACCOUNT_SWEEP_SECONDS`` (default 10: how often a
            request checks for removed accounts whose conversations this process still holds, see docs/team.md).

    Returns:
        The app; its :class:`~auto_analyst.web.service.WebService` is ``app.extensions["auto_analyst"]``.
        Call ``app.extensions["auto_analyst"].close()`` when done to stop the workers.
    """
    from auto_analyst.config import Settings
    from auto_analyst.web import admin, auth, chat, errors, exports, facts, login, security, sources, uploads
    from auto_analyst.web.accounts import AccountStore
    from auto_analyst.web.service import WebService

    app = Flask(__name__)
    app.config.from_mapping(
        SESSION_COOKIE_NAME="aa_session", SESSION_COOKIE_HTTPONLY=True, SESSION_COOKIE_SAMESITE="Lax",
        PERMANENT_SESSION_LIFETIME=_dt.timedelta(days=365), MAX_LIVE_WORKERS=12, JOB_TIMEOUT=900.0,
        JSON_SORT_KEYS=False, AUTH="auto", LOGIN_RATE="10/minute", LOGIN_LIFETIME=_dt.timedelta(days=7))
    if test_config:
        app.config.from_mapping(dict(test_config))
    settings = app.config.get("SETTINGS") or Settings.load()
    app.config["SETTINGS"] = settings
    app.config["MAX_CONTENT_LENGTH"] = settings.max_file_mb * 1024 * 1024 + _UPLOAD_SLACK
    if not app.config.get("SECRET_KEY"):
        app.config["SECRET_KEY"] = security.load_secret_key(settings.home / "web" / "secret_key")

    app.extensions["auto_analyst"] = WebService(settings, index=app.config.get("CONVERSATION_INDEX"),
                                                max_live_workers=int(app.config["MAX_LIVE_WORKERS"]),
                                                job_timeout=float(app.config["JOB_TIMEOUT"]))
    state = auth.AuthState(AccountStore(settings=settings), mode=str(app.config["AUTH"]),
                           loopback_token=app.config.get("AUTH_TOKEN") or settings.web_token or None, trusted_proxies=settings.trusted_proxies,
                           proxy_header=settings.proxy_user_header, rate_storage=settings.queue_url or "memory://")
    app.config["AUTH_TOKEN"] = state.loopback_token
    errors.init_app(app)
    auth.init_app(app, state)  # before the CSRF check: an anonymous client gets 401/302, not a CSRF error
    security.init_app(app)
    for bp in (chat.bp, uploads.bp, exports.bp, facts.bp, sources.bp, login.bp, admin.bp):
        app.register_blueprint(bp)

    @app.get("/vendor/plotly.min.js")
    def plotly_js():
        """plotly.js from the installed plotly package: the page loads nothing from a CDN."""
        import plotly

        return send_file(Path(plotly.__file__).parent / "package_data" / "plotly.min.js",
                         mimetype="text/javascript", max_age=86400)

    return app
