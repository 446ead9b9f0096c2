"""Who the request is for, and proof that a state-changing request came from our page.

:mod:`auto_analyst.web.auth` signs every request in first and puts the user id in ``flask.g``; with
``AUTH="none"`` each browser keeps a random user id in Flask's signed session cookie (HttpOnly,
SameSite=Lax). The same cookie holds a CSRF token; the page reads it from a ``<meta>`` tag and
sends it back in the ``X-CSRF-Token`` header (or a ``csrf_token`` form field). A page on another
origin can make the browser send the cookie, but cannot read the token, so it cannot forge a request.
"""

from __future__ import annotations

import hmac
import secrets
import time
from pathlib import Path

from flask import Flask, g, request, session
from flask.sessions import SecureCookieSessionInterface
from itsdangerous import BadSignature

from auto_analyst.web.errors import ApiError

__all__ = ["CSRF_HEADER", "RESIGN_SECONDS", "SessionCookie", "csrf_token", "current_owner", "current_user", "init_app",
           "load_secret_key"]

CSRF_HEADER = "X-CSRF-Token"
_SAFE_METHODS = {"GET", "HEAD", "OPTIONS"}


def load_secret_key(path: Path) -> str:
    """The app's signing key, created once with mode 0600 so user ids survive a restart."""
    if path.exists():
        key = path.read_text().strip()
        if key:
            return key
    path.parent.mkdir(parents=True, exist_ok=True)
    key = secrets.token_hex(32)
    fd = path.open("w")
    try:
        path.chmod(0o600)
        fd.write(key)
    finally:
        fd.close()
    return key


def current_user() -> str:
    """The signed-in user's id (the account name), or, without logins, the browser's random cookie id."""
    signed_in = g.get("aa_user")
    if signed_in:
        return signed_in
    uid = session.get("uid")
    if not uid:
        uid = session["uid"] = secrets.token_urlsafe(16)
        session.permanent = True
    return uid


def current_owner():
    """The signed-in user as an :class:`~auto_analyst.web.conversations.Owner`: the key the server's memory of
    them is kept under (an account's id, which a new account of the same name does not share; else the cookie
    id) and the name their data is stored under."""
    from auto_analyst.web.conversations import Owner

    name = current_user()
    key = g.get("aa_key")
    return Owner(key, name, account=True) if key else Owner(name, name)


def csrf_token() -> str:
    """The CSRF token bound to this browser's cookie (created on first use)."""
    token = session.get("csrf")
    if not token:
        token = session["csrf"] = secrets.token_urlsafe(24)
    return token


def _check_csrf() -> None:
    if request.method in _SAFE_METHODS or g.get("aa_bearer"):
        return  # an API token comes in a header a browser never adds by itself: no forgery possible
    expected = session.get("csrf")
    sent = request.headers.get(CSRF_HEADER) or request.form.get("csrf_token", "")
    if not expected or not sent or not hmac.compare_digest(str(expected), str(sent)):
        raise ApiError(403, "csrf", "Missing or wrong CSRF token; reload the page and try again.")


RESIGN_SECONDS = 3600.0
"""An unchanged permanent cookie is signed and sent again once it is this old (seconds), not on every request."""


class SessionCookie(SecureCookieSessionInterface):
    """Flask's signed session cookie, sent again only when its content changed or it was signed over
    :data:`RESIGN_SECONDS` ago.

    Flask re-signs a permanent session on every response (``SESSION_REFRESH_EACH_REQUEST``) to slide its expiry;
    signing (JSON, zlib, HMAC) and the header cost about a tenth of a millisecond per request, twice per question
    (the ask and its event stream), for an expiry of a year that then moves by at most an hour. What the cookie
    proves is unchanged: it is verified on every request as before, and a login still ends at its own ``exp``.
    """

    def open_session(self, app: Flask, request):
        signer = self.get_signing_serializer(app)
        if signer is None:
            return None
        value = request.cookies.get(self.get_cookie_name(app))
        if not value:
            return self.session_class()
        try:
            data, signed = signer.loads(value, max_age=int(app.permanent_session_lifetime.total_seconds()),
                                        return_timestamp=True)
        except BadSignature:
            return self.session_class()
        opened = self.session_class(data)
        opened.signed_at = signed.timestamp()
        return opened

    def should_set_cookie(self, app: Flask, session) -> bool:
        if session.modified:
            return True
        if not (session.permanent and app.config["SESSION_REFRESH_EACH_REQUEST"]):
            return False
        return time.time() - getattr(session, "signed_at", 0.0) >= RESIGN_SECONDS


def init_app(app: Flask) -> None:
    """Check the CSRF token before every state-changing request, and set safe response headers."""
    app.session_interface = SessionCookie()
    app.before_request(_check_csrf)

    @app.after_request
    def _headers(resp):
        # A strict CSP is the second line of defence behind textContent: no inline script and no
        # foreign origin can run even if some markup slipped through. Plotly needs inline styles.
        resp.headers.setdefault(
            "Content-Security-Policy",
            "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; "
            "img-src 'self' data: blob:; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'")
        resp.headers.setdefault("X-Content-Type-Options", "nosniff")
        resp.headers.setdefault("Referrer-Policy", "same-origin")
        return resp
