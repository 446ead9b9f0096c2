"""``worker``: a process that runs the queued scripts of web and CLI sessions (needs ``queue_url``)."""

from __future__ import annotations

import click

from auto_analyst.cli.context import CliContext, Command

__all__ = ["worker"]


@click.command("worker", cls=Command)
@click.option("--queue-url", default=None, help="Redis URL of the queue (default: the queue_url setting).")
@click.option("--name", default=None, help="Worker id (default: host-pid-random).")
@click.option("--burst", is_flag=True, help="Exit when the queue is empty (tests, batch runs).")
@click.pass_context
def worker(ctx: click.Context, queue_url: str | None, name: str | None, burst: bool) -> None:
    """Run queued scripts: this process owns the sandboxes of the sessions routed to it (see docs/scale.md)."""
    from auto_analyst.queue import run_worker

    settings = CliContext.of(ctx).settings
    if queue_url:
        settings = settings.replace(queue_url=queue_url)
    if settings.queue_url:  # said before the banner, which would suggest the worker runs
        from auto_analyst.extras import require

        for package in ("redis", "rq"):
            require(package, "auto-analyst worker")
    # RQ's own handlers make SIGTERM and Ctrl+C a warm shutdown: the current run finishes first.
    click.echo(f"Auto-Analyst worker on {settings.queue_url.split('@')[-1]} (Ctrl+C stops)", err=True)
    try:
        run_worker(settings, worker_id=name, burst=burst)
    except KeyboardInterrupt:
        pass
