"""``history`` commands: list, show and forget the turns stored for the current user (``Analyst.history()``)."""

from __future__ import annotations

import json

import click

from auto_analyst.cli.confirm import confirm_or_refuse
from auto_analyst.cli.context import CliContext, Group
from auto_analyst.errors import BadInputError

__all__ = ["history"]


def _history(ctx: click.Context):
    return CliContext.of(ctx).analyst().history()


def _one_line(text: str, width: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= width else text[: width - 1] + "…"


@click.group("history", cls=Group)
def history() -> None:
    """Show or forget your past questions and answers."""


@history.command("list")
@click.option("--session", "session", default=None, help="Only this session's turns.")
@click.option("--limit", type=click.IntRange(min=1), default=50, show_default=True, help="Most recent turns shown.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.pass_context
def list_turns(ctx: click.Context, session: str | None, limit: int, as_json: bool) -> None:
    """List your most recent turns, oldest first."""
    rows = _history(ctx).turns(session=session, limit=limit)
    if as_json:
        keys = ("id", "session", "turn", "created_at", "intent", "question")
        click.echo(json.dumps([{k: getattr(r, k) for k in keys} for r in rows], indent=2))
        return
    if not rows:
        click.echo("No history." if session is None else f"No turns in session {session!r}.")
        return
    for r in rows:
        when = r.created_at[:19].replace("T", " ")
        click.echo(f"{r.id:>5}  {when}  {r.session}#{r.turn}  {_one_line(r.question, 70)}")


@history.command("sessions")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.pass_context
def list_sessions(ctx: click.Context, as_json: bool) -> None:
    """List your sessions, most recently active first."""
    found = _history(ctx).sessions()
    if as_json:
        click.echo(json.dumps([s._asdict() for s in found], indent=2))
        return
    if not found:
        click.echo("No sessions.")
    for s in found:
        tables = f"  [{', '.join(s.tables)}]" if s.tables else ""
        when = s.started[:19].replace("T", " ")
        click.echo(f"{s.session_id}  {when}  {s.n_turns:>3} turns  {_one_line(s.title, 50)}{tables}")


@history.command("show")
@click.argument("turn_id", type=int)
@click.option("--json", "as_json", is_flag=True, help="Print the stored record as JSON.")
@click.pass_context
def show(ctx: click.Context, turn_id: int, as_json: bool) -> None:
    """Show one turn: question, answer and code."""
    turn = _history(ctx).turn(turn_id)
    if as_json:
        click.echo(turn.model_dump_json(indent=2))
        return
    click.echo(f"Turn {turn.id}  session {turn.session} #{turn.turn}  {turn.created_at}")
    click.echo(f"Intent: {turn.intent or '-'}   Model: {turn.model or '-'}")
    click.echo(f"\nQuestion:\n{turn.question}\n\nAnswer:\n{turn.answer or _no_answer(turn.result_json)}")
    if turn.code.strip():
        click.echo(f"\nCode:\n{turn.code}")


def _no_answer(result_json: str | None) -> str:
    """What a turn without an answer ended with (cancelled, declined, failed), from its stored Result."""
    try:
        error = (json.loads(result_json or "{}") or {}).get("error") or {}
    except ValueError:
        error = {}
    return f"- ({error.get('kind', 'error')}: {error.get('message', '')})" if error else "-"


@history.command("forget")
@click.argument("turn_id", type=int, required=False)
@click.option("--session", "session", default=None, help="Forget a whole session.")
@click.option("--all", "forget_all", is_flag=True, help="Forget all your history.")
@click.option("--yes", "-y", is_flag=True, help="Do not ask for confirmation (with --all; needed without a terminal).")
@click.pass_context
def forget(ctx: click.Context, turn_id: int | None, session: str | None, forget_all: bool, yes: bool) -> None:
    """Forget one turn (ID), a session (--session S) or everything (--all)."""
    if sum([turn_id is not None, session is not None, forget_all]) != 1:
        raise BadInputError("Give exactly one of: a turn ID, --session S, or --all.")
    store = _history(ctx)
    if turn_id is not None:
        store.forget_turn(turn_id)
        click.echo(f"Forgot turn {turn_id}.")
    elif session is not None:
        n = store.forget_session(session)
        click.echo(f"Forgot session {session} ({n} turns).")
    else:
        if not yes:
            confirm_or_refuse(f"Forget all history of user {store.user!r}?", f"Not forgetting the history of {store.user!r}")
        n = store.forget_all()
        click.echo(f"Forgot all history ({n} turns).")
