"""``auto-analyst memory facts ...``: what your earlier analyses found (``Analyst.facts()``).

Commands: ``list``, ``search``, ``forget``. Each acts as the user given with its ``--user`` option,
else the main group's ``--user``, else settings.user or the login name.
"""

from __future__ import annotations

import json
from typing import Any

import click

from auto_analyst.cli.confirm import confirm_or_refuse
from auto_analyst.cli.context import CliContext, Group

__all__ = ["facts"]

_USER = click.option("--user", "-u", default=None, help="Act as this user (default: the configured user or login name).")
_JSON = click.option("--json", "as_json", is_flag=True, help="Print JSON instead of lines.")


def _view(ctx: click.Context, user: str | None):
    return CliContext.of(ctx).analyst(user=user).facts()


def _echo(found: list[Any], as_json: bool) -> None:
    if as_json:
        click.echo(json.dumps([f.model_dump(mode="json") for f in found], indent=2))
        return
    if not found:
        click.echo("No facts remembered yet.")
        return
    for f in found:
        click.echo(f"{f.id}  {f.kind:<12} {f.line()}")


@click.group("facts", cls=Group)
def facts() -> None:
    """What your earlier analyses found: numbers with their table, filter and when (stale when the table is gone)."""


@facts.command("list")
@_USER
@click.option("--limit", "-n", type=click.IntRange(min=1), default=50, show_default=True, help="How many, newest first.")
@click.option("--session", default=None, help="Only the facts of this session.")
@_JSON
@click.pass_context
def list_cmd(ctx: click.Context, user: str | None, limit: int, session: str | None, as_json: bool) -> None:
    """List your facts, newest first."""
    _echo(_view(ctx, user).list(limit=limit, session=session), as_json)


@facts.command("search")
@click.argument("text")
@_USER
@click.option("--limit", "-n", type=click.IntRange(min=1), default=20, show_default=True)
@_JSON
@click.pass_context
def search_cmd(ctx: click.Context, text: str, user: str | None, limit: int, as_json: bool) -> None:
    """Facts about what TEXT names (columns, values such as West, methods), best first, then facts containing it."""
    _echo(_view(ctx, user).search(text, limit=limit), as_json)


@facts.command("forget")
@click.argument("fact_id", required=False)
@click.option("--all", "everything", is_flag=True, help="Forget every fact of yours.")
@click.option("--yes", "-y", is_flag=True, help="Do not ask for confirmation (with --all; needed without a terminal).")
@_USER
@click.pass_context
def forget_cmd(ctx: click.Context, fact_id: str | None, everything: bool, yes: bool, user: str | None) -> None:
    """Forget fact FACT_ID, or with --all every fact of yours."""
    view = _view(ctx, user)
    if everything == bool(fact_id):
        raise click.UsageError("Give one FACT_ID (see `memory facts list`) or --all.")
    if everything:
        if not yes:
            confirm_or_refuse(f"Forget every fact of {view.user!r}?", f"Not forgetting the facts of {view.user!r}")
        click.echo(f"Forgot {view.clear()} facts.")
        return
    view.forget(fact_id)
    click.echo(f"Forgot {fact_id}.")
