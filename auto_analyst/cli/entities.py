"""``entities`` command: the columns, methods and concepts you work with most (Memary's knowledge store)."""

from __future__ import annotations

import json

import click

from auto_analyst.cli.history import settings_and_user
from auto_analyst.memory.entities import HALF_LIFE_HOURS, EntityMemory

__all__ = ["entities"]


@click.command("entities")
@click.option("--n", "n", type=click.IntRange(min=1), default=10, show_default=True, help="How many entities.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.pass_context
def entities(ctx: click.Context, n: int, as_json: bool) -> None:
    """List your top entities, ranked by count decayed by recency."""
    settings, user = settings_and_user(ctx)
    top = EntityMemory(settings).top(user, n=n)
    if as_json:
        click.echo(json.dumps([e.model_dump() for e in top], indent=2))
        return
    if not top:
        click.echo("No entities yet.")
        return
    click.echo(f"score = count x 0.5^(hours since last seen / {HALF_LIFE_HOURS:.1f})")
    for e in top:
        last = e.last_seen[:16].replace("T", " ")
        click.echo(f"{e.score:8.2f}  {e.count:>4}x  {e.kind:<8} {e.entity}  (last {last})")
