"""``ask`` (one question) and ``chat`` (a conversation; one question per line when stdin is piped)."""

from __future__ import annotations

import sys

import click

from auto_analyst.cli.output import exit_code, print_result

__all__ = ["ask", "chat"]


def _open_session(ctx: click.Context, files: tuple[str, ...], model: str | None, user: str | None,
                  resume: str | None = None):
    from auto_analyst.api import Analyst

    obj = ctx.obj or {}
    settings = obj.get("settings")
    analyst = Analyst(model=model, settings=settings, user=user or obj.get("user"))
    if resume is not None:
        session = analyst.resume(None if resume == "last" else resume)
        click.secho(f"Resumed session {session.id}: {len(session.tables)} table(s), {session.turn} turn(s).", err=True)
    else:
        session = analyst.session()
    from pathlib import Path

    loaded = {str(Path(t.report.path).resolve()) for t in session.tables.values()}
    for f in files:
        if str(Path(f).resolve()) not in loaded:  # a resumed session already has it
            session.load(f)
    return analyst, session


def _progress(enabled: bool):
    if not enabled:
        return None

    def show(event):
        if event.stage != "done":
            step = f" ({event.step}/{event.total})" if event.total else ""
            click.secho(f"… {event.message}{step}", err=True, dim=True)
    return show


def _common(f):
    f = click.option("--model", default=None, help="Model string (e.g. openai/gpt-4o-mini); default offline.")(f)
    f = click.option("--user", default=None, help="User id (default: your login name).")(f)
    f = click.option("--json", "as_json", is_flag=True, help="Print the result as one JSON object (a line each).")(f)
    f = click.option("--trace", is_flag=True, help="Print why the answer was given (intent, memory, context, timings).")(f)
    f = click.option("--no-code", is_flag=True, help="Do not print the script and its output.")(f)
    return f


def _fail(exc: Exception) -> None:
    from auto_analyst.errors import AutoAnalystError

    if isinstance(exc, AutoAnalystError):
        click.secho(f"Error: {exc}", fg="red", err=True)
        sys.exit(exc.exit_code)
    raise exc


@click.command("ask")
@click.argument("file", type=click.Path(dir_okay=False))
@click.argument("question")
@_common
@click.pass_context
def ask(ctx, file, question, model, user, as_json, trace, no_code):
    """Ask one QUESTION about FILE (CSV, TSV, Excel, Parquet, JSON) and print the answer."""
    try:
        analyst, session = _open_session(ctx, (file,), model, user)
    except Exception as exc:  # noqa: BLE001 - bad files/models become one sentence
        _fail(exc)
    with analyst:
        try:
            result = session.ask(question, on_progress=_progress(not as_json and sys.stderr.isatty()))
        except Exception as exc:  # noqa: BLE001
            _fail(exc)
        print_result(result, as_json=as_json, show_trace=trace, show_code=not no_code)
    sys.exit(exit_code(result))


@click.command("chat")
@click.argument("files", nargs=-1, type=click.Path(dir_okay=False))
@click.option("--resume", is_flag=False, flag_value="last", default=None, metavar="[SESSION]",
              help="Continue your last session (or SESSION): its tables, memory and turns.")
@_common
@click.pass_context
def chat(ctx, files, resume, model, user, as_json, trace, no_code):
    """A conversation over FILES: follow-ups work. Reads one question per line when input is piped.

    Commands inside: /load FILE, /tables, /use NAME, /reset (forget the conversation so far), /quit.
    """
    try:
        analyst, session = _open_session(ctx, files, model, user, resume)
    except Exception as exc:  # noqa: BLE001
        _fail(exc)
    interactive = sys.stdin.isatty()
    worst = 0
    with analyst:
        while True:
            try:
                line = input("you> ") if interactive else sys.stdin.readline()
            except (EOFError, KeyboardInterrupt):
                break
            if not interactive and line == "":
                break
            line = line.strip()
            if not line:
                continue
            if line in ("/quit", "/exit"):
                break
            try:
                if line.startswith("/load "):
                    loaded = session.load(line[6:].strip())
                    click.echo("Loaded: " + ", ".join(f"{t.name} ({len(t.frame)} rows)" for t in loaded))
                    continue
                if line == "/tables":
                    click.echo(", ".join(f"{n}{' (active)' if n == session.active else ''}" for n in session.tables) or "none")
                    continue
                if line.startswith("/use "):
                    session.use(line[5:].strip())
                    continue
                if line == "/reset":
                    session.reset_memory()
                    continue
                result = session.ask(line, on_progress=_progress(interactive and not as_json))
            except Exception as exc:  # noqa: BLE001 - one bad line must not end the conversation
                from auto_analyst.errors import AutoAnalystError

                if not isinstance(exc, AutoAnalystError):
                    raise
                click.secho(f"Error: {exc}", fg="red", err=True)
                worst = max(worst, exc.exit_code)
                continue
            if not as_json and not interactive:
                click.secho(f"\n>>> {line}", bold=True)
            print_result(result, as_json=as_json, show_trace=trace, show_code=not no_code)
            if not as_json:
                click.echo("")
    sys.exit(2 if worst == 2 else 0)
