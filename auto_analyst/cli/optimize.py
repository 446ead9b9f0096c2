"""``optimize``: compile the planner and the analysts over a train split (``evals.optimize``) and save the program."""

from __future__ import annotations

from pathlib import Path

import click

from auto_analyst.cli.context import CliContext, Command

__all__ = ["optimize"]


@click.command("optimize", cls=Command)
@click.option("--model", default=None, help="The model to tune (e.g. openai/gpt-4o-mini); default offline.")
@click.option("--trainset", "trainset", required=True, type=click.Path(file_okay=False, exists=True, path_type=Path),
              help="A train split in DABench's layout: questions.jsonl and tables/.")
@click.option("--name", default="default", show_default=True, help="Saved as AUTO_ANALYST_HOME/programs/NAME.json.")
@click.option("--limit", type=int, default=None, help="Only the first N training questions.")
@click.option("--demos", type=int, default=2, show_default=True, help="Demos per predictor at most.")
@click.pass_context
def optimize(ctx, model, trainset, name, limit, demos):
    """Compile the planner and the analysts with DSPy's BootstrapFewShot, scored by the benchmark's rule.

    Later sessions use the compiled program when the program setting names it (AUTO_ANALYST_PROGRAM=NAME).
    """
    from auto_analyst.evals.optimize import optimize_analyst

    done = optimize_analyst(CliContext.of(ctx).analyst(model=model), trainset, name=name, limit=limit, max_demos=demos)
    tuned = {k: v for k, v in done.demos.items() if v}
    click.echo(f"Compiled over {done.questions} question(s): " +
               (", ".join(f"{k} {v} demo(s)" for k, v in tuned.items()) or "no run was right, so no demos were kept"))
    click.echo(f"Saved {done.path}. Use it with AUTO_ANALYST_PROGRAM={name}.")
