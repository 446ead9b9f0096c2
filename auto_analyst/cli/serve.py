"""``serve``: the web page, in one process with a thread per request."""

from __future__ import annotations

import signal

import click

from auto_analyst.cli.context import CliContext, Command

__all__ = ["serve"]


@click.command("serve", cls=Command)
@click.option("--host", default=None, help="Interface to bind (default: the host setting, 127.0.0.1).")
@click.option("--port", default=None, type=int, help="Port (default: the port setting, 8765).")
@click.option("--debug", is_flag=True, help="Flask debug mode (tracebacks in the page; never on a shared host).")
@click.pass_context
def serve(ctx: click.Context, host: str | None, port: int | None, debug: bool) -> None:
    """Serve the chat page: upload a file, ask questions, watch the work, export a notebook."""
    from werkzeug.serving import make_server

    from auto_analyst.web import create_app

    settings = CliContext.of(ctx).settings
    app = create_app({"SETTINGS": settings, "DEBUG": debug})
    host, port = host or settings.host, port or settings.port
    server = make_server(host, port, app, threaded=True)
    click.echo(f"Auto-Analyst is serving on http://{host}:{server.server_port}/  (model: {settings.model}; Ctrl+C stops)")
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
