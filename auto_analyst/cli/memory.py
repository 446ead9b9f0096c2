"""``auto-analyst memory ...``: inspect and maintain the error-fix memory.

Commands: ``list``, ``search``, ``forget``, ``clear``, ``reindex``, ``prune``. Settings come from the click
context (``ctx.obj["settings"]``) when the main CLI put them there, else from :meth:`Settings.load`.
Errors of Auto-Analyst are printed as one line and exit with their ``exit_code`` (2 bad input, 1 otherwise).
"""

from __future__ import annotations

import getpass
import json
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

import click

from auto_analyst.config import Settings
from auto_analyst.errors import AutoAnalystError

if TYPE_CHECKING:  # the store (and chromadb behind it) is imported only when a command runs
    from auto_analyst.memory.error_memory import ErrorFixEntry, ErrorMemory

__all__ = ["memory"]


def _settings(ctx: click.Context) -> Settings:
    """The settings of this invocation: ``ctx.obj["settings"]`` if present, else ``Settings.load()``."""
    obj = ctx.obj  # click hands a parent's obj down to sub-commands
    if isinstance(obj, dict) and isinstance(obj.get("settings"), Settings):
        return obj["settings"]
    return Settings.load()


def _default_user(settings: Settings, ctx: click.Context | None = None) -> str:
    """The user this command acts as: the group's --user, then settings.user, then the login name."""
    obj = ctx.obj if ctx is not None and isinstance(ctx.obj, dict) else {}
    return obj.get("user") or settings.user or getpass.getuser()


@contextmanager
def _memory(ctx: click.Context) -> Iterator[ErrorMemory]:
    from auto_analyst.memory.error_memory import ErrorMemory

    mem = ErrorMemory(_settings(ctx))
    try:
        yield mem
    except AutoAnalystError as exc:
        click.echo(f"Error: {exc}", err=True)
        ctx.exit(exc.exit_code)
    finally:
        mem.close()


def _summary_line(document: str, width: int = 70) -> str:
    first = document.splitlines()[0] if document else ""
    first = first.removeprefix("Error Summary:").strip()
    return first if len(first) <= width else first[: width - 1] + "…"


def _echo_entries(entries: list[ErrorFixEntry], as_json: bool) -> None:
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


@click.group("memory")
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
    with _memory(ctx) as mem:
        _echo_entries(mem.list(user=user or _default_user(mem.settings, ctx), scope=scope), as_json)


@memory.command("search")
@click.argument("text")
@click.option("--user", "-u", default=None, help="Search as this user (default: the configured user or login name).")
@click.option("--k", "-k", type=click.IntRange(min=1), default=None, help="Entries to show (default: error_memory_k).")
@click.option("--error-type", default=None, help="Only entries of this error type, e.g. ValueError.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON instead of a table.")
@click.pass_context
def search_cmd(ctx: click.Context, text: str, user: str | None, k: int | None, error_type: str | None, as_json: bool) -> None:
    """Show the entries most similar to TEXT (the user's own first, then global ones)."""
    with _memory(ctx) as mem:
        user = user or _default_user(mem.settings, ctx)
        _echo_entries(mem.search(text, user=user, k=k, error_type=error_type), as_json)


@memory.command("forget")
@click.argument("entry_id")
@click.option("--user", "-u", default=None, help="Act as this user (default: the configured user or login name).")
@click.pass_context
def forget_cmd(ctx: click.Context, entry_id: str, user: str | None) -> None:
    """Delete your entry ENTRY_ID (or a shared one)."""
    with _memory(ctx) as mem:
        user = user or _default_user(mem.settings, ctx)
        entry = mem.get(entry_id)
        if entry is not None and entry.user == "global":
            user = "global"  # shared entries can be removed by anyone who sees them
        if not mem.forget(entry_id, user=user):
            click.echo(f"Error: no entry {entry_id!r}" + (f" owned by {user!r}" if user else "") + ".", err=True)
            ctx.exit(1)
        click.echo(f"Forgot {entry_id}.")


@memory.command("clear")
@click.option("--user", "-u", required=True, help="The user whose entries to delete ('global' for shared ones).")
@click.option("--yes", "-y", is_flag=True, help="Do not ask for confirmation.")
@click.pass_context
def clear_cmd(ctx: click.Context, user: str, yes: bool) -> None:
    """Delete every entry of one user."""
    me = _default_user(_settings(ctx), ctx)
    if user not in (me, "global"):
        click.echo(f"Error: you are {me!r}; you can clear your own entries or the shared ones ('global'), "
                   f"not {user!r}'s. Use --user {me} or the global --user option.", err=True)
        ctx.exit(2)
    if not yes:
        click.confirm(f"Delete every error-fix entry of {user!r}?", abort=True)
    with _memory(ctx) as mem:
        click.echo(f"Deleted {mem.clear(user=user)} entries of {user!r}.")


@memory.command("reindex")
@click.pass_context
def reindex_cmd(ctx: click.Context) -> None:
    """Rebuild the search index from the SQLite store."""
    with _memory(ctx) as mem:
        click.echo(f"Indexed {mem.reindex()} entries.")


@memory.command("prune")
@click.pass_context
def prune_cmd(ctx: click.Context) -> None:
    """Delete entries unused for memory_retention_days, then the least recently used past memory_max_entries."""
    with _memory(ctx) as mem:
        click.echo(f"Pruned {mem.prune()} entries.")
