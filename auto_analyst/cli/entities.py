"""``entities`` command: the columns, methods and concepts you work with most (``Analyst.entities()``)."""

from __future__ import annotations

import json

import click

from auto_analyst.cli.context import CliContext, Command

__all__ = ["entities"]


@click.command("entities", cls=Command)
@click.option("--n", "n", type=click.IntRange(min=1), default=10, show_default=True, help="How many entities.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.pass_context
def entities(ctx: click.Context, n: int, as_json: bool) -> None:
    """List your top entities, ranked by count decayed by recency."""
    view = CliContext.of(ctx).analyst().entities()
    top = view.top(n)
    if as_json:
        click.echo(json.dumps([e.model_dump() for e in top], indent=2))
        return
    if not top:
        click.echo("No entities yet.")
        return
    click.echo(f"score = count x 0.5^(hours since last seen / {view.half_life_hours:.1f})")
    for e in top:
        last = e.last_seen[:16].replace("T", " ")
        click.echo(f"{e.score:8.2f}  {e.count:>4}x  {e.kind:<8} {e.entity}  (last {last})")
