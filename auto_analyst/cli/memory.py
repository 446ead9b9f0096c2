"""``auto-analyst memory ...``: inspect and maintain the error-fix memory (``Analyst.fix_memory()``).

Commands: ``list``, ``search``, ``forget``, ``clear``, ``reindex``, ``prune``; and the ``facts`` group
(:mod:`auto_analyst.cli.facts`) for what earlier analyses found. Each acts as the user
given with its ``--user`` option, else the main group's ``--user``, else settings.user or the login name.
"""

from __future__ import annotations

import json
from typing import Any

import click

from auto_analyst.cli.confirm import confirm_or_refuse
from auto_analyst.cli.context import CliContext, Group
from auto_analyst.cli.facts import facts

__all__ = ["memory"]


def _memory(ctx: click.Context, user: str | None = None):
    return CliContext.of(ctx).analyst(user=user).fix_memory()


def _summary_line(document: str, width: int = 70) -> str:
    first = document.splitlines()[0] if document else ""
    first = first.removeprefix("Error Summary:").strip()
    return first if len(first) <= width else first[: width - 1] + "…"


def _echo_entries(entries: list[Any], as_json: bool) -> None:
    if as_json:
        click.echo(json.dumps([e.model_dump(mode="json") for e in entries], indent=2))
        return
    if not entries:
        click.echo("No entries.")
        return
    for e in entries:
        score = f"{e.score:5.2f} " if e.score is not None else ""
        human = " human" if e.human else ""
        click.echo(f"{e.id}  {score}{e.user:<12} {e.error_type:<16} used {e.use_count:>3}x  "
                   f"{e.last_used_at:%Y-%m-%d}{human}  {_summary_line(e.document)}")


@click.group("memory", cls=Group)
def memory() -> None:
    """Inspect and maintain the error-fix memory (remembered errors and their corrections)."""


@memory.command("list")
@click.option("--user", "-u", default=None, help="Act as this user (default: the configured user or login name).")
@click.option("--scope", type=click.Choice(["all", "user", "global"]), default="all", show_default=True,
              help="'user': only your own entries; 'global': only shared ones; 'all': both.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON instead of a table.")
@click.pass_context
def list_cmd(ctx: click.Context, user: str | None, scope: str, as_json: bool) -> None:
    """List your entries and the shared ones, most recently used first (never another user's)."""
    _echo_entries(_memory(ctx, user).list(scope=scope), as_json)


@memory.command("search")
@click.argument("text")
@click.option("--user", "-u", default=None, help="Search as this user (default: the configured user or login name).")
@click.option("--k", "-k", type=click.IntRange(min=1), default=None, help="Entries to show (default: error_memory_k).")
@click.option("--error-type", default=None, help="Only entries of this error type, e.g. ValueError.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON instead of a table.")
@click.pass_context
def search_cmd(ctx: click.Context, text: str, user: str | None, k: int | None, error_type: str | None, as_json: bool) -> None:
    """Show the entries most similar to TEXT (the user's own first, then global ones)."""
    _echo_entries(_memory(ctx, user).search(text, k=k, error_type=error_type), as_json)


@memory.command("forget")
@click.argument("entry_id")
@click.option("--user", "-u", default=None, help="Act as this user (default: the configured user or login name).")
@click.pass_context
def forget_cmd(ctx: click.Context, entry_id: str, user: str | None) -> None:
    """Delete your entry ENTRY_ID (or a shared one)."""
    _memory(ctx, user).forget(entry_id)
    click.echo(f"Forgot {entry_id}.")


@memory.command("clear")
@click.option("--user", "-u", required=True, help="The user whose entries to delete ('global' for shared ones).")
@click.option("--yes", "-y", is_flag=True, help="Do not ask for confirmation (needed without a terminal).")
@click.pass_context
def clear_cmd(ctx: click.Context, user: str, yes: bool) -> None:
    """Delete every entry of one user: your own, or the shared ones ('global')."""
    mem = _memory(ctx)
    mem.check_clear(user)
    if not yes:
        confirm_or_refuse(f"Delete every error-fix entry of {user!r}?", f"Not deleting the error-fix entries of {user!r}")
    click.echo(f"Deleted {mem.clear(user)} entries of {user!r}.")


@memory.command("reindex")
@click.pass_context
def reindex_cmd(ctx: click.Context) -> None:
    """Rebuild the search index from the SQLite store."""
    click.echo(f"Indexed {_memory(ctx).reindex()} entries.")


@memory.command("prune")
@click.pass_context
def prune_cmd(ctx: click.Context) -> None:
    """Delete entries unused for memory_retention_days, then the least recently used past memory_max_entries."""
    click.echo(f"Pruned {_memory(ctx).prune()} entries.")


memory.add_command(facts)
