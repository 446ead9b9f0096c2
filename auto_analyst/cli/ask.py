"""``ask`` (one question) and ``chat`` (a conversation; one question per line when stdin is piped)."""

from __future__ import annotations

import sys
import threading
import time
from pathlib import Path

import click

from auto_analyst.cli.context import CliContext, Command, only_a_dictionary, report
from auto_analyst.cli.output import exit_code, print_result, usage_text
from auto_analyst.cli.prompt import read_line
from auto_analyst.errors import EXIT_DECLINED, EXIT_OK, AutoAnalystError, BadInputError

__all__ = ["ask", "chat"]


def _open_session(ctx: click.Context, files: tuple[str, ...], model: str | None, user: str | None,
                  resume: str | None = None, source: str | None = None, need_table: bool = True):
    analyst = CliContext.of(ctx).analyst(model=model, user=user)
    from auto_analyst.cli.doctor import prepare

    prepare(analyst.settings)  # the notice, and the worker warming up while the model loads
    if resume is not None:
        session = analyst.resume(None if resume == "last" else resume)
        click.secho(f"Resumed session {session.id}: {len(session.tables)} table(s), {session.turn} turn(s).", err=True)
    else:
        session = analyst.session()
    if source and session.source is None:  # a database's tables first: a resumed session is already connected
        session.connect(source)
    loaded = {str(Path(t.report.path).resolve()) for t in session.tables.values()}
    dictionaries = []
    for f in files:
        if str(Path(f).resolve()) not in loaded and session.load(f) == []:  # a resumed session already has it
            dictionaries.append(f)  # no table from it: it was read as a data dictionary
    if dictionaries and not session.tables and session.source is None:
        if not need_table:  # chat: a table can still come with /load; say now why there is none
            click.secho(only_a_dictionary(dictionaries, "/load a table (CSV, Excel, Parquet, JSON) or /connect a "
                                                        "database"), err=True)
        else:
            raise BadInputError(only_a_dictionary(dictionaries))
    return session


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
    f = click.option("--open", "open_charts", is_flag=True,
                     help="Open each chart in your browser (a self-contained HTML page beside the run's files).")(f)
    return f


@click.command("ask", cls=Command)
@click.argument("file", type=click.Path())
@click.argument("question")
@_common
@click.pass_context
def ask(ctx, file, question, model, user, as_json, trace, no_code, open_charts):
    """Ask one QUESTION about FILE (CSV, TSV, Excel, Parquet, JSON) or a database URL and print the answer.

    FILE may be a SQLAlchemy URL (postgresql://user@host/db, sqlite:///file.db, duckdb:///file.duckdb): its tables
    are read in the database, read-only; the password comes from the URL or the environment (PGPASSWORD).

    Start the question with @AGENT to send it to that agent directly.
    """
    session = _open_session(ctx, (file,), model, user)
    # Ctrl-C stops the question as in chat: the script is killed and the turn kept as cancelled (exit 1)
    result = _ask_cancellable(session, question, _progress(not as_json and sys.stderr.isatty()))
    print_result(result, as_json=as_json, show_trace=trace, show_code=not no_code, open_charts=open_charts)
    ctx.exit(exit_code(result))


@click.command("chat", cls=Command)
@click.argument("files", nargs=-1, type=click.Path())
@click.option("--resume", is_flag=False, flag_value="last", default=None, metavar="[SESSION]",
              help="Continue your last session (or SESSION): its tables, memory and turns.")
@click.option("--source", default=None, metavar="URL",
              help="A database to read (SQLAlchemy URL: postgresql://user@host/db, sqlite:///file.db); read-only.")
@_common
@click.pass_context
def chat(ctx, files, resume, source, model, user, as_json, trace, no_code, open_charts):
    """A conversation over FILES: follow-ups work. Reads one question per line when input is piped.

    Commands inside: /load FILE (a table, or a .md/.txt data dictionary), /connect URL (a database), /tables,
    /use NAME (a table's name, its sheet's name or the start of it), /reset (forget the conversation so far),
    /quit. A command that fails says why and the chat goes on.
    """
    session = _open_session(ctx, files, model, user, resume, source, need_table=False)
    interactive = sys.stdin.isatty()
    worst = 0
    while True:
        try:
            line = read_line("you> ") if interactive else sys.stdin.readline()
        except KeyboardInterrupt:  # Ctrl-C at an idle prompt ends the chat (a running question is cancelled instead)
            click.echo("", err=True)
            break
        if line == "":  # end of input (Ctrl-D on a terminal)
            if interactive:
                click.echo("", err=True)
            break
        line = line.strip()
        if not line:
            continue
        if line in ("/quit", "/exit"):
            break
        if line.startswith("/"):
            try:
                _command(session, line, to_stderr=as_json)  # --json keeps stdout to the results
            except AutoAnalystError as exc:  # a mistyped command is not a failed question: the exit code stays
                report(exc)
            continue
        try:
            result = _ask_cancellable(session, line, _progress(interactive and not as_json))
        except AutoAnalystError as exc:  # one bad line must not end the conversation
            worst = _worse(worst, report(exc))
            continue
        if result.error is not None and result.error.kind == "cancelled":
            click.secho("Cancelled: the question was stopped; the session goes on (Ctrl-C at the prompt ends it).",
                        fg="yellow", err=True)
            continue
        worst = _worse(worst, exit_code(result))
        if not as_json and not interactive:
            click.secho(f"\n>>> {line}", bold=True)
        print_result(result, as_json=as_json, show_trace=trace, show_code=not no_code, open_charts=open_charts)
        if not as_json:
            click.echo("")
    session.settle()
    if session.usage.lm_calls:
        click.secho(f"Session: {session.turn} turn(s), {usage_text(session.usage)}.", err=True, dim=True)
    ctx.exit(worst)


_SEVERITY = {EXIT_OK: 0, EXIT_DECLINED: 1, 1: 2, 2: 3}
"""How bad each of ask's exit codes is, for chat's exit code (the worst of its questions'): bad input or usage (2)
over any other failure (1) over a declined question (3) over an answer (0)."""


def _worse(a: int, b: int) -> int:
    return max(a, b, key=lambda c: _SEVERITY.get(c, 2))


def _ask_cancellable(session, question: str, on_progress):
    """``session.ask`` in a thread, so Ctrl-C (SIGINT, delivered to the main thread) cancels this question only.

    The first Ctrl-C sets the question's cancel event: the pipeline stops at its next step and the sandbox kills
    a running script; the turn comes back (and is recorded) with error kind ``cancelled``. Further Ctrl-Cs
    while it stops are ignored, so the session is never left half-written.
    """
    cancel, done = threading.Event(), threading.Event()
    outcome: dict = {}

    def run() -> None:
        try:
            outcome["result"] = session.ask(question, on_progress=on_progress, cancel=cancel)
        except BaseException as exc:  # noqa: BLE001 - handed to the main thread, raised there
            outcome["error"] = exc
        finally:
            done.set()

    threading.Thread(target=run, name="chat-question", daemon=True).start()
    while not done.is_set():
        try:  # a plain sleep: an interrupted Thread.join can leave the thread looking stopped (CPython 3.11)
            time.sleep(0.05)
        except KeyboardInterrupt:
            if not cancel.is_set():
                cancel.set()
                click.secho("\nCancelling the question…", err=True, dim=True)
    if "error" in outcome:
        raise outcome["error"]
    return outcome["result"]


COMMANDS = "/load FILE, /connect URL, /tables, /use NAME, /reset, /quit"


def _command(session, line: str, to_stderr: bool = False) -> None:
    """Run one chat command (a line starting with '/'); what it says goes to stdout (stderr with ``to_stderr``).

    Raises:
        BadInputError: an unknown command, a command without its argument, or no such table.
        DataLoadError: /load of a file that is not a table.
    """
    from auto_analyst.errors import BadInputError

    command, _, arg = line.partition(" ")
    arg = arg.strip()

    def say(text: str) -> None:
        click.echo(text, err=to_stderr)

    if command in ("/load", "/connect") and arg:
        loaded = session.connect(arg) if command == "/connect" else session.load(arg)
        if loaded:
            say("Loaded: " + ", ".join(f"{t.name} ({len(t.frame)} rows)" for t in loaded) + f"; active: {session.active}")
        else:  # a data dictionary: no table, the columns' meanings
            described = sum(1 for t in session.description.tables for c in t.columns if c.meaning)
            say(f"Loaded the data dictionary {Path(arg).name}: {described} column(s) described by it.")
    elif command == "/tables" and not arg:
        say(tables_text(session))
    elif command == "/use" and arg:
        say(f"Active table: {session.use(arg)}")
    elif command == "/reset" and not arg:
        session.reset_memory()
        say("The conversation so far is forgotten; the tables stay.")
    elif command in ("/load", "/use", "/connect"):
        what = {"/load": ("a file", "FILE"), "/use": ("a table name", "NAME"), "/connect": ("a database URL", "URL")}
        raise BadInputError(f"{command} needs {what[command][0]}: {command} {what[command][1]}. Tables: "
                            f"{', '.join(session.tables) or 'none loaded'}.")
    else:
        raise BadInputError(f"Unknown command {line!r}; commands: {COMMANDS}.")


def tables_text(session) -> str:
    """One line per table: its name (the one /use, the page's tabs and describe show), source and size."""
    if not session.tables:
        return "No table is loaded; /load FILE."
    lines = []
    for name, t in session.tables.items():
        source = str(t.report.path) if getattr(t, "source", None) is not None else Path(str(t.report.path)).name
        sheet = getattr(t.report, "sheet", None)
        where = f"{source}, sheet {sheet!r}" if sheet is not None else source
        mark = "  (active)" if name == session.active else ""
        lines.append(f"{name}: {where}, {len(t.frame)} rows x {t.frame.shape[1]} columns{mark}")
    return "\n".join(lines)
