"""Printing a Result for people (text) or programs (one JSON object per line)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import click

from auto_analyst.errors import ERROR_KINDS, EXIT_DECLINED, EXIT_OK
from auto_analyst.errors import exit_code as exit_code_of_kind

from auto_analyst.cli.terminal_text import ascii_json, escape_result

if TYPE_CHECKING:
    from auto_analyst.results import Result

__all__ = ["print_result", "exit_code", "usage_text"]


def usage_text(usage) -> str:
    """'3 LM calls, 3388 (2048 cached)+214 tokens, $0.0012' (cost 'unknown' when the model has no LiteLLM price;
    the cached part only when the provider reported a prompt-cache hit)."""
    cost = "cost unknown (set cost_model)" if usage.cost_usd is None else f"${usage.cost_usd:.4f}"
    cached = f" ({usage.cached_prompt_tokens} cached)" if getattr(usage, "cached_prompt_tokens", 0) else ""
    return f"{usage.lm_calls} LM calls, {usage.prompt_tokens}{cached}+{usage.completion_tokens} tokens, {cost}"


def exit_code(result: Result) -> int:
    """0 ok, 3 declined, else the exit code of the error's kind (2 bad input, 1 any other error)."""
    if result.status == "ok":
        return EXIT_OK
    if result.status == "declined":
        return EXIT_DECLINED
    return exit_code_of_kind(result.error.kind if result.error else "internal")


def print_result(result: Result, as_json: bool = False, show_trace: bool = False, show_code: bool = True,
                 open_charts: bool = False) -> None:
    """Print ``result``; each chart as a clickable ``file://`` link to a page a browser opens (``open_charts``:
    opened in the browser too, see :mod:`auto_analyst.cli.charts`)."""
    if as_json:
        click.echo(ascii_json(result.model_dump_json()))
        return
    result = escape_result(result)  # a script's escape sequences are shown, not obeyed by the terminal
    if result.status == "error" and result.error:
        kind = result.error.kind
        run = result.attempts[-1].error if result.attempts else None
        if run is not None and run.message and result.error.message.startswith(run.message):
            # a failed run ('internal', 'sandbox'): its own kind, a Python class name ('LookupError') or a limit
            # ('timeout'), says nothing to a user, and "LookupError: No rows ..." names it already: the message only
            # (with what to do for a budget, run_errors.REMEDIES)
            click.secho(f"Error: {result.error.message.removeprefix(run.kind + ': ')}", fg="red", err=False)
        else:
            message = result.error.message.removeprefix(kind + ': ')
            click.secho(f"Error ({kind}): {message}" if kind in ERROR_KINDS else f"Error: {message}", fg="red", err=False)
    else:
        click.echo(result.answer)
    unchecked = result.trace.unsupported_numbers
    if unchecked:  # said beside the answer: a number the run never produced may be the model's own
        click.secho(f"Check this answer: {', '.join(unchecked)} {'are' if len(unchecked) > 1 else 'is'} not in anything "
                    "the run printed or showed.", fg="yellow")
    for t in result.tables:
        if t.columns == ["value"] or t.n_rows <= 0:
            continue  # single values are in the answer text
        _print_table(t)
    if show_code and result.code:
        click.secho("\n── script " + "─" * 50, dim=True)
        click.echo(result.code)
    if show_code and result.stdout.strip():
        click.secho("── printed " + "─" * 49, dim=True)
        click.echo(result.stdout.rstrip())
    _print_charts(result.figures, open_charts)
    if show_code and result.warnings:
        click.secho("warnings: " + "; ".join(result.warnings), dim=True)
    if len(result.attempts) > 1:
        click.secho(f"({len(result.attempts) - 1} fix attempt(s) were needed)", dim=True)
    if result.usage.cost_usd != 0 and not show_trace:
        click.secho(f"({usage_text(result.usage)})", dim=True)
    if show_trace:
        t = result.trace
        click.secho("── trace " + "─" * 51, dim=True)
        click.echo(f"intent: {t.intent}   source: {t.source}   usage: {usage_text(result.usage)}")
        click.echo(f"standalone question: {t.standalone_question}")
        if t.assumptions:
            click.echo("assumptions: " + "; ".join(t.assumptions))
        click.echo("context: " + ", ".join(f"{c.part}={c.tokens} tokens" for c in t.context))
        if t.memory_hits:
            click.echo("memory hits: " + ", ".join(f"{h.kind}:{h.id}" for h in t.memory_hits))
        click.echo("timings: " + ", ".join(f"{k}={v:.2f}s" for k, v in result.timings.items()))


def _print_charts(figures, open_charts: bool) -> None:
    from auto_analyst.cli.charts import chart_files, open_in_browser

    for f in figures:
        files = chart_files(f.kind, f.path)
        click.echo(f"Chart: {files.best.absolute().as_uri()}" + (f"  — {f.title}" if f.title else ""))
        if files.png is not None and files.png != files.best:
            click.echo(f"       {files.png.absolute().as_uri()}")
        if open_charts and not open_in_browser(files.best):
            click.secho("No browser could be opened here; open the link above on a machine with one.", fg="yellow",
                        err=True)


def _print_table(t, max_rows: int = 15) -> None:
    """A result table as aligned text (at most ``max_rows`` rows; the full count is said)."""
    import pandas as pd

    frame = pd.DataFrame(t.rows[:max_rows], columns=t.columns)
    click.secho(f"\n{t.name}" + (f"  (first {len(frame)} of {t.n_rows} rows)" if t.n_rows > len(frame) else ""), bold=True)
    click.echo(frame.to_string(index=False))
