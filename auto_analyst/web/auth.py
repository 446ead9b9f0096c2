"""Who may use the server: every request is checked here before any view runs.

Four ways in, tried in this order (docs/team.md):

1. ``Authorization: Bearer aa_...``: an API token (scripts, notebooks); no CSRF token needed, since
   a browser never adds that header on its own.
2. A trusted proxy's header (setting ``trusted_proxies``, header ``proxy_user_header``): believed only
   when the request comes from one of the proxy's addresses; the named user gets a member account
   on first sight so roles, caps and usage apply.
3. A password login (``/login``): flask-login keeps ``name:login-id`` in the signed cookie; the login id
   names a server-side row (``web_sessions``) that logout deletes, and a password change or removing
   the account deletes all of the account's, so a copy of an old cookie never works again. The login
   also ends after ``LOGIN_LIFETIME``.
4. With no password accounts and no proxy: the one-time token ``serve`` prints (``/?token=...``, as
   Jupyter does); the browser holding it is the server's owner (admin). ``AUTH="none"`` (loopback
   only, see ``serve --no-auth``) lets every local client in, as before logins existed.

Anything else gets 401 (JSON for the API) or a redirect to ``/login`` (pages), except the login
page and static files.
"""

from __future__ import annotations

import dataclasses
import datetime as _dt
import functools
import hmac
import ipaddress
import logging
import secrets
import threading
import time
from dataclasses import dataclass
from typing import Any, Callable
from urllib.parse import urlencode, urlsplit

import flask_login
from flask import Flask, current_app, g, redirect, request, session, url_for

from auto_analyst.web.accounts import Account, AccountStore
from auto_analyst.web.errors import ApiError, error_response

__all__ = ["AuthState", "WebUser", "admin_required", "auth_state", "browser_login_required", "init_app",
           "is_admin", "login_required", "sign_in", "sign_out"]

log = logging.getLogger(__name__)

PUBLIC_ENDPOINTS = {"auth.login", "auth.login_post", "static"}
"""Endpoints an anonymous client may reach: the login page and the static files (CSS, scripts)."""


@dataclass
class WebUser(flask_login.UserMixin):
    """The signed-in user of a request. ``name`` is the user id data is stored under; ``via`` says how
    they signed in (``password``, ``token``, ``api_token``, ``proxy``, ``loopback_token``, ``none``)."""

    name: str
    role: str = "member"
    via: str = "password"
    login_id: str = ""
    """The browser login's random id (password logins only; see ``AccountStore.open_session``)."""
    token_id: str = ""
    """The id of the API token the request came with (``via == "api_token"`` only)."""
    account_id: str = ""
    """The account's id (``Account.id``; empty without an account): the server's memory is keyed by it."""
    account: Account | None = dataclasses.field(default=None, compare=False, repr=False)
    """The account row as this request's sign-in read it (caps, rate), so the request need not read it again."""

    def get_id(self) -> str:
        return f"{self.name}:{self.login_id}"

    @property
    def is_admin(self) -> bool:
        return self.role == "admin"


class AuthState:
    """Per-app authentication state (``app.extensions["aa_auth"]``).

    Args:
        store: the accounts, tokens and usage tables.
        mode: ``auto`` (accounts, proxy or the loopback token, whichever is configured) or ``none``.
        loopback_token: the one-time token of the no-accounts mode (made here when None).
        trusted_proxies: addresses or networks (``10.0.0.5``, ``10.0.0.0/24``) whose user header is believed.
        proxy_header: the header carrying the user name (e.g. ``X-Forwarded-User``, ``X-Auth-Request-Email``).
        rate_storage: a ``limits`` storage URI (``memory://``, or ``redis://...`` shared by every process).
    """

    def __init__(self, store: AccountStore, mode: str = "auto", loopback_token: str | None = None,
                 trusted_proxies: str = "", proxy_header: str = "X-Forwarded-User", rate_storage: str = "memory://"):
        from limits import storage, strategies

        from auto_analyst.web.quota import UsageMeter

        self.store, self.mode = store, mode
        self.meter = UsageMeter(store)
        self.loopback_token = loopback_token or secrets.token_urlsafe(24)
        self.proxies = _networks(trusted_proxies)
        self.proxy_header = proxy_header or "X-Forwarded-User"
        self.limiter = strategies.MovingWindowRateLimiter(storage.storage_from_string(rate_storage))
        self._count: tuple[float, int] = (0.0, 0)
        self._swept = float("-inf")
        self._sweeper: threading.Thread | None = None
        self._lock = threading.Lock()

    def has_accounts(self) -> bool:
        """True when some account can log in with a password (re-read at most every 2 s)."""
        with self._lock:
            at, n = self._count
            if time.monotonic() - at > 2.0:
                n = self.store.count()
                self._count = (time.monotonic(), n)
        return n > 0

    def sweep(self, service: Any, every_s: float) -> None:
        """At most every ``every_s`` seconds, let ``service`` drop what it holds of removed accounts (one query
        for the account ids; the dropping runs in a background thread). A removed account's cookies and tokens
        already fail on its next request (its login rows and tokens are deleted with it); this frees its open
        conversations, workers and model key in every server process, each sweeping on its own."""
        if service is None:
            return
        with self._lock:
            now = time.monotonic()
            if now - self._swept < every_s:
                return
            self._swept = now
        ids = self.store.ids()
        if service.removed_accounts(ids):  # stopping workers takes a while: not on the request's time
            threading.Thread(target=service.forget_removed, args=(ids,), daemon=True, name="aa-forget-accounts").start()

    def keep_sweeping(self, service: Any, every_s: float) -> None:
        """Run :meth:`sweep` every ``every_s`` seconds (at least 1) in a background thread too, started once (again
        if it stopped). Requests alone do not suffice: after ``users remove`` nobody signed in as the removed
        account makes one (its requests get 401 before any sweep), and its running question would go on calling
        the model until someone else's request came."""
        if service is None:
            return
        with self._lock:
            if self._sweeper is not None and self._sweeper.is_alive():
                return
            self._sweeper = threading.Thread(target=self._sweep_loop, args=(service, max(every_s, 1.0)), daemon=True,
                                             name="aa-account-sweep")
        self._sweeper.start()

    def _sweep_loop(self, service: Any, every_s: float) -> None:
        while not getattr(service, "closed", False):
            time.sleep(every_s)
            try:
                self.sweep(service, every_s * 0.9)  # at most as often as requests would
            except Exception:  # noqa: BLE001 - e.g. the database is away: the next request starts the loop again
                log.warning("the sweep of removed accounts stopped; the next request starts it again", exc_info=True)
                return

    def forget_count(self) -> None:
        with self._lock:
            self._count = (0.0, 0)

    @property
    def token_mode(self) -> bool:
        """True when the loopback token is the way in (no password accounts, no proxy, auth on)."""
        return self.mode != "none" and not self.proxies and not self.has_accounts()

    def token_fingerprint(self) -> str:
        """What a browser that opened the token link keeps in its signed cookie.

        Not derived from the token: as with Jupyter, the browser stays signed in when the server restarts
        with a new token (the cookie is signed with the key under ``home/web``; deleting it signs everyone out).
        """
        return "loopback-owner"

    def over(self, rate: str, *key: str) -> float:
        """0 while ``key`` is under ``rate`` (nothing is counted), else the seconds until it is again."""
        from limits import parse

        item = parse(rate)
        if self.limiter.test(item, *key):
            return 0.0
        return max(1.0, self.limiter.get_window_stats(item, *key).reset_time - time.time())

    def hit(self, rate: str, *key: str) -> float:
        """Count one event against ``rate`` (e.g. ``10/minute``) for ``key``; 0 if allowed, else the
        seconds until the next one is (for Retry-After)."""
        from limits import parse

        item = parse(rate)
        if self.limiter.hit(item, *key):
            return 0.0
        reset = self.limiter.get_window_stats(item, *key).reset_time
        return max(1.0, reset - time.time())

    def from_proxy(self) -> bool:
        if not self.proxies:
            return False
        try:
            addr = ipaddress.ip_address(request.remote_addr or "")
        except ValueError:
            return False
        return any(addr in net for net in self.proxies)


def _networks(spec: str) -> list[Any]:
    out = []
    for part in (spec or "").replace(";", ",").split(","):
        part = part.strip()
        if part:
            out.append(ipaddress.ip_network(part, strict=False))
    return out


def auth_state() -> AuthState:
    return current_app.extensions["aa_auth"]


def _user(account: Account, via: str, login_id: str = "", token_id: str = "") -> WebUser:
    return WebUser(account.name, account.role, via, login_id, token_id, account.id, account)


def _load_session_user(user_id: str) -> WebUser | None:
    """flask-login's user loader: ``name:login-id`` from the cookie, valid while that login's row exists
    (not logged out, password unchanged, account not removed) and the cookie's expiry holds."""
    name, _, login_id = (user_id or "").rpartition(":")
    if float(session.get("exp", 0)) < time.time():
        return None
    account = auth_state().store.session_account(name, login_id)
    if account is None:
        return None
    return _user(account, "password", login_id)


def _load_request_user(req) -> WebUser | None:
    """flask-login's request loader: an API token, a trusted proxy's header, or the loopback token."""
    state = auth_state()
    header = req.headers.get("Authorization", "")
    if header[:7].lower() == "bearer ":
        token = header[7:].strip()
        account = state.store.check_token(token)
        if account is None:
            return None
        g.aa_bearer = True
        return _user(account, "api_token", token_id=token[len("aa_"):len("aa_") + 12])
    if state.from_proxy():
        name = _utf8(req.headers.get(state.proxy_header) or "").strip()
        if name:
            return _user(state.store.ensure(name), "proxy")
    if state.mode == "none":
        return WebUser(_cookie_uid(), "admin", "none")
    if state.token_mode and session.get("tok") == state.token_fingerprint():
        return WebUser(_cookie_uid(), "admin", "loopback_token")
    return None


def _utf8(value: str) -> str:
    """A header's text: WSGI hands headers over decoded as latin-1 (PEP 3333), while proxies send UTF-8 (an
    e-mail address with ``é``); undo that, keeping a value that is not UTF-8 as it came."""
    try:
        return value.encode("latin-1").decode("utf-8")
    except UnicodeError:
        return value


def _cookie_uid() -> str:
    uid = session.get("uid")
    if not uid:
        uid = session["uid"] = secrets.token_urlsafe(16)
        session.permanent = True
    return uid


def _wants_json() -> bool:
    return request.path.startswith("/api/") or request.method not in ("GET", "HEAD") \
        or request.accept_mimetypes.best == "application/json" or "Authorization" in request.headers


def unauthorized():
    """401 JSON for the API and scripts, a redirect to the login page for a browser's page request."""
    if _wants_json():
        resp = error_response(401, "auth", "Sign in first: log in on the page, or send an API token "
                                           "(Authorization: Bearer ...).")
        resp.headers["WWW-Authenticate"] = 'Bearer realm="auto-analyst"'
        return resp
    return redirect(url_for("auth.login", next=request.full_path.rstrip("?")))


def _guard():
    """Runs before every view (and before the CSRF check): sign the request in or refuse it."""
    state = auth_state()
    token = request.args.get("token")
    if token and request.method == "GET" and state.token_mode:
        if hmac.compare_digest(token, state.loopback_token):
            session["tok"] = state.token_fingerprint()
            _cookie_uid()
            args = [(k, v) for k, v in request.args.items(multi=True) if k != "token"]
            return redirect(request.path + ("?" + urlencode(args) if args else ""))  # the token leaves the address bar
    if request.endpoint in PUBLIC_ENDPOINTS:
        return None
    user = flask_login.current_user
    if not user.is_authenticated:
        return unauthorized()
    g.aa_user, g.aa_role, g.aa_key = user.name, user.role, user.account_id
    every = float(current_app.config.get("ACCOUNT_SWEEP_SECONDS", 10))
    state.sweep(current_app.extensions.get("auto_analyst"), every)
    if g.aa_key:  # accounts are in use: removed ones are dropped even when no request comes
        state.keep_sweeping(current_app.extensions.get("auto_analyst"), every)
    return None


def is_admin() -> bool:
    return getattr(flask_login.current_user, "role", None) == "admin"


def login_required(view: Callable) -> Callable:
    """Refuse an anonymous client (every view already is behind :func:`_guard`; this states it at the view)."""

    @functools.wraps(view)
    def wrapped(*args, **kwargs):
        if not flask_login.current_user.is_authenticated:
            return unauthorized()
        return view(*args, **kwargs)

    return wrapped


def admin_required(view: Callable) -> Callable:
    """Let only admins run ``view``; others get 403 (anonymous clients 401/302 first)."""

    @functools.wraps(view)
    def wrapped(*args, **kwargs):
        if not flask_login.current_user.is_authenticated:
            return unauthorized()
        if not is_admin():
            raise ApiError(403, "forbidden", "Only an admin can do this; ask one of your server's admins.")
        return view(*args, **kwargs)

    return wrapped


def safe_next(target: str | None) -> str:
    """``target`` when it is a path on this site, else ``/`` (no open redirect to another host)."""
    target = target or "/"
    parts = urlsplit(target)
    if parts.scheme or parts.netloc or not target.startswith("/") or target.startswith("//") or "\\" in target:
        return "/"
    return target


def sign_in(account: Account, lifetime: _dt.timedelta) -> None:
    """Log ``account`` in on this browser: claim the browser's cookie-only data, new CSRF token, expiry."""
    from auto_analyst.web.claim import claim_user_rows

    old = session.get("uid")
    if old and not session.get("claimed") and old != account.name:
        claim_user_rows(auth_state().store.engine, old, account.name)
    csrf = secrets.token_urlsafe(24)
    previous = getattr(flask_login.current_user, "login_id", "")
    if previous:  # a second login on this browser replaces the first
        auth_state().store.close_session(previous)
    session.clear()  # nothing from before the login carries over (session fixation)
    login_id = auth_state().store.open_session(account.name, lifetime.total_seconds())
    flask_login.login_user(_user(account, "password", login_id))
    session.update({"uid": account.name, "claimed": True, "csrf": csrf,
                    "exp": time.time() + lifetime.total_seconds()})
    session.permanent = True


def sign_out() -> None:
    """End this browser's login on the server too (a saved copy of the cookie stops working), then forget it."""
    login_id = getattr(flask_login.current_user, "login_id", "")
    if login_id:
        auth_state().store.close_session(login_id)
    flask_login.logout_user()
    session.clear()


def browser_login_required() -> None:
    """Refuse a request signed in with an API token (403): a leaked token must not mint, list or revoke
    other tokens, so whoever revokes it is rid of it.

    Raises:
        ApiError: 403 ``forbidden`` for an API token.
    """
    if getattr(flask_login.current_user, "via", "") == "api_token":
        raise ApiError(403, "forbidden", "API tokens are made, listed and revoked from a signed-in browser (your "
                                         "account page) or with `auto-analyst tokens`, not with an API token.")


def init_app(app: Flask, state: AuthState) -> None:
    """Install the login manager and the guard; must run before the CSRF check is registered."""
    app.extensions["aa_auth"] = state
    manager = flask_login.LoginManager()
    manager.session_protection = "basic"
    manager.user_loader(_load_session_user)
    manager.request_loader(_load_request_user)
    manager.unauthorized_handler(unauthorized)
    manager.init_app(app)
    app.before_request(_guard)
