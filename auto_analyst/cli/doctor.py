"""``doctor``: which protections the sandbox has on this machine, for this user."""

from __future__ import annotations

import json

import click

from auto_analyst.cli.context import CliContext, Command

__all__ = ["doctor", "notice", "prepare"]


def notice(settings) -> str | None:
    """Print, on stderr, the one-sentence notice when generated code would run without the OS sandbox (or not at all)."""
    from auto_analyst.api import sandbox_notice

    text = sandbox_notice(settings)
    if text:
        click.secho(text, fg="yellow", err=True)
    return text


def prepare(settings) -> None:
    """At the start of ``ask``/``chat``/``serve``: the notice, and the worker's zygote started in the background
    (its imports then overlap the model's; see docs/sandbox.md, "The first answer")."""
    from auto_analyst.api import prestart_sandbox

    notice(settings)
    prestart_sandbox(settings)


@click.command("doctor", cls=Command)
@click.option("--json", "as_json", is_flag=True, help="Print the protections as one JSON object.")
@click.pass_context
def doctor(ctx: click.Context, as_json: bool) -> None:
    """Show which protections are active for generated code here (sandbox, namespaces, limits)."""
    from auto_analyst.api import sandbox_protections

    settings = CliContext.of(ctx).settings
    items = sandbox_protections(settings)
    if as_json:
        click.echo(json.dumps({"protections": [{"name": p.name, "active": p.active, "detail": p.detail} for p in items]}))
        return
    for p in items:
        click.echo(f"[{'on ' if p.active else 'OFF'}] {p.name}: {p.detail}")
    notice(settings)
