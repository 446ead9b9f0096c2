"""``serve``: the web page, in one process with a thread per request, or ``--processes N`` under gunicorn."""

from __future__ import annotations

import errno
import ipaddress
import logging
import re
import secrets
import signal
import sys

import click

from auto_analyst.cli.context import CliContext, Command
from auto_analyst.cli.stack_health import check_port_free
from auto_analyst.errors import BadInputError

__all__ = ["serve"]

THREADS_PER_PROCESS = 16
"""Request threads of each gunicorn process: a page holds one open event stream per running question, and
the runs themselves wait on the queue's workers, so threads mostly wait (gthread workers)."""


@click.command("serve", cls=Command)
@click.option("--host", default=None, help="Interface to bind (default: the host setting, 127.0.0.1).")
@click.option("--port", default=None, type=int, help="Port (default: the port setting, 8765).")
@click.option("--processes", default=1, show_default=True, type=click.IntRange(1, 64),
              help="Web processes (gunicorn). Above 1 the processes share the database, the Chroma server "
                   "and the queue: set queue_url (and database_url, chroma_url past one machine).")
@click.option("--debug", is_flag=True, help="Flask debug mode (tracebacks in the page; never on a shared host).")
@click.option("--no-auth", is_flag=True, help="No sign-in at all (every local client is let in); loopback only.")
@click.pass_context
def serve(ctx: click.Context, host: str | None, port: int | None, processes: int, debug: bool, no_auth: bool) -> None:
    """Serve the chat page: upload a file, ask questions, watch the work, export a notebook.

    Sign-in (docs/team.md): with accounts (`auto-analyst users add`), a login page; with a trusted proxy
    (setting trusted_proxies), the proxy's user header; with neither, on loopback only, a one-time token link.
    """
    settings = CliContext.of(ctx).settings
    host, port = host or settings.host, port or settings.port
    auth = _auth_plan(settings, host, no_auth)
    # Said before anything loads: gunicorn would only log its bind failure, and the page would never come up.
    check_port_free("The web page", host, port)
    if processes > 1:
        if not settings.queue_url:
            raise BadInputError("--processes above 1 needs a queue: set AUTO_ANALYST_QUEUE_URL (Redis) and start "
                                "`auto-analyst worker` processes (see docs/scale.md), or serve with one process.")
        _serve_gunicorn(settings, host, port, processes, auth)
        return
    from werkzeug.serving import make_server

    from auto_analyst.web import create_app

    from auto_analyst.cli.doctor import prepare

    prepare(settings)  # the notice, and the worker warming up
    app = create_app({"SETTINGS": settings, "DEBUG": debug, **auth})
    logging.getLogger("werkzeug").addFilter(_RedactToken())  # the sign-in link's token stays out of the log
    try:
        server = make_server(host, port, app, threaded=True)
    except OSError as exc:  # taken since the check above
        if exc.errno != errno.EADDRINUSE:
            raise
        check_port_free("The web page", host, port)
        raise
    click.echo(f"Auto-Analyst is serving on http://{host}:{server.server_port}/  (model: {settings.model}; Ctrl+C stops)")
    _say_how_to_sign_in(host, server.server_port, auth)
    # SIGTERM (systemd, docker stop) ends the loop like Ctrl+C, so the workers are stopped cleanly.
    signal.signal(signal.SIGTERM, _stop)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
        app.extensions["auto_analyst"].close()


def _stop(signum, frame):
    raise KeyboardInterrupt


class _RedactToken(logging.Filter):
    """Blanks the ``token=`` query argument in request log lines (werkzeug logs each request's path)."""

    _TOKEN = re.compile(r"([?&]token=)[^&\s\"]+")

    def filter(self, record: logging.LogRecord) -> bool:
        if record.args:
            record.args = tuple(self._TOKEN.sub(r"\1[hidden]", a) if isinstance(a, str) else a
                                for a in record.args)
        record.msg = self._TOKEN.sub(r"\1[hidden]", str(record.msg))
        return True


def _is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def _auth_plan(settings, host: str, no_auth: bool) -> dict:
    """The app's sign-in config: ``AUTH`` and, in the loopback-token mode, ``AUTH_TOKEN``.

    Raises:
        BadInputError: ``--no-auth`` off loopback, or another interface with neither accounts nor a trusted proxy.
    """
    from auto_analyst.web import AccountStore

    loopback = _is_loopback(host)
    if no_auth:
        if not loopback:
            raise BadInputError(f"--no-auth is for loopback only; bind to 127.0.0.1, or drop --no-auth to serve {host} "
                                "with sign-in (docs/team.md).")
        return {"AUTH": "none"}
    if AccountStore(settings=settings).count() or settings.trusted_proxies:
        return {"AUTH": "auto"}
    if not loopback:
        raise BadInputError(f"Serving on {host} needs sign-in: add an account (`auto-analyst users add NAME --role admin`) "
                            "or set AUTO_ANALYST_TRUSTED_PROXIES to your login proxy's address (docs/team.md).")
    return {"AUTH": "auto", "AUTH_TOKEN": settings.web_token or secrets.token_urlsafe(24)}


def _say_how_to_sign_in(host: str, port: int, auth: dict) -> None:
    if auth.get("AUTH") == "none":
        click.secho("Sign-in is off (--no-auth): every program on this machine can use the server.", fg="yellow")
    elif auth.get("AUTH_TOKEN"):
        shown = f"[{host}]" if ":" in host else host
        click.secho(f"No accounts yet: open this link to sign in (valid until the server stops):\n"
                    f"    http://{shown}:{port}/?token={auth['AUTH_TOKEN']}", bold=True)
    else:
        click.echo("Sign in with an account (`auto-analyst users list`) or through your login proxy.")
    sys.stdout.flush()  # a log file (stack up) sees the link at once


def _serve_gunicorn(settings, host: str, port: int, processes: int, auth: dict) -> None:
    """gunicorn's master with ``processes`` gthread workers, each building its own app (no preload: every
    process opens its own database engine and Redis connections after the fork)."""
    from auto_analyst.extras import require

    BaseApplication = require("gunicorn.app.base", "serve --processes above 1").BaseApplication

    from auto_analyst.web import load_secret_key

    # made once, before the fork, so every process signs cookies with the same key
    secret = load_secret_key(settings.home / "web" / "secret_key")

    class App(BaseApplication):
        def load_config(self):
            for key, value in {"bind": f"{host}:{port}", "workers": processes, "worker_class": "gthread",
                               "threads": THREADS_PER_PROCESS, "timeout": 120, "graceful_timeout": 30,
                               "worker_exit": _worker_exit, "accesslog": None, "errorlog": "-",
                               "loglevel": "warning", "proc_name": "auto-analyst-web"}.items():
                self.cfg.set(key, value)

        def load(self):
            from auto_analyst.web import create_app

            return create_app({"SETTINGS": settings, "SECRET_KEY": secret, **auth})

    click.echo(f"Auto-Analyst is serving on http://{host}:{port}/ with {processes} processes "
               f"(model: {settings.model}; Ctrl+C stops)")
    _say_how_to_sign_in(host, port, auth)
    App().run()


def _worker_exit(server, worker) -> None:
    app = getattr(worker, "wsgi", None)
    service = getattr(app, "extensions", {}).get("auto_analyst") if app is not None else None
    if service is not None:
        service.close()
