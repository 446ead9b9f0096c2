"""``eval dabench``: the benchmark from the CLI, in its own prompt format and scoring rule (``evals.dabench``)."""

from __future__ import annotations

import collections
import json
import re
from pathlib import Path

import click

from auto_analyst.cli.context import CliContext, Group
from auto_analyst.cli.output import usage_text
from auto_analyst.errors import BadInputError

__all__ = ["eval_group"]


def _default_split() -> Path:
    for base in (Path.cwd(), *Path.cwd().parents[:2]):
        candidate = base / "shared" / "bench" / "dabench-dev"
        if (candidate / "questions.jsonl").is_file():
            return candidate
    raise BadInputError("No DABench split found beside this folder; give one with --split DIR "
                        "(a folder with questions.jsonl and tables/).")


def _shard(ctx, param, value):
    if value is None:
        return None
    m = re.fullmatch(r"\s*(\d+)\s*/\s*(\d+)\s*", value)
    if not m or not 1 <= int(m[1]) <= int(m[2]):
        raise click.BadParameter(f"{value!r} is not K/N with 1 <= K <= N (e.g. 2/3, the second of three shards).")
    return int(m[1]), int(m[2])


@click.group("eval", cls=Group)
def eval_group() -> None:
    """Measure answers against a benchmark."""


@eval_group.command("dabench")
@click.option("--model", default=None, help="Model string (e.g. openai/gpt-4o-mini); default offline.")
@click.option("--split", "split", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="A DABench split: questions.jsonl and tables/ (default: shared/bench/dabench-dev nearby).")
@click.option("--limit", type=int, default=None, help="Only the first N questions (of the shard, with --shard).")
@click.option("--shard", default=None, metavar="K/N",
              callback=_shard, help="Only shard K of N: the questions at positions i with i % N == K-1 (e.g. 2/3).")
@click.option("--mode", type=click.Choice(["benchmark", "simplified"]), default="benchmark", show_default=True,
              help="benchmark: question, constraints and format, as DABench poses them; simplified: no constraints.")
@click.option("--out", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Write every question's row (verdict, answer, usage) as JSON here.")
@click.option("--json", "as_json", is_flag=True, help="Print the report as one JSON object.")
@click.pass_context
def dabench(ctx, model, split, limit, shard, mode, out, as_json):
    """Ask every question of a DABench split and score it by the benchmark's rule: right / wrong / declined."""
    split = split or _default_split()
    analyst = CliContext.of(ctx).analyst(model=model)

    def progress(row):
        if not as_json:
            click.secho(f"  #{row['id']:<4} {row['verdict']:<8} {row['answer'][:90]!r}", err=True, dim=True)

    from auto_analyst.evals.dabench import evaluate

    report = evaluate(analyst, split, limit=limit, mode=mode, on_row=progress, shard=shard)
    if out:
        out.write_text(json.dumps(report.rows, indent=1))
    if as_json:
        click.echo(json.dumps(report.to_dict()))
        return
    c, n = report.counts, max(len(report.rows), 1)
    click.echo(f"DABench ({split.name}{', shard %d/%d' % shard if shard else ''}, {mode}): {len(report.rows)} questions in {report.seconds:.0f} s, "
               f"model {analyst.settings.model}")
    click.echo(f"  right {c['right']} ({100 * c['right'] / n:.1f}%)   wrong {c['wrong']} ({100 * c['wrong'] / n:.1f}%)"
               f"   declined {c['declined']} ({100 * c['declined'] / n:.1f}%)")
    click.echo(f"  usage: {usage_text(report.usage)}")
    per = report.per_question
    click.echo(f"  per question: {per['lm_calls']} LM calls and {per['round_trips']} sequential round trips until the "
               "answer (the after-answer summaries not counted)")
    levels: dict[str, collections.Counter] = collections.defaultdict(collections.Counter)
    for r in report.rows:
        levels[r["level"]][r["verdict"]] += 1
    for level, lc in sorted(levels.items()):
        click.echo(f"  {level or '?':<8} right {lc['right']:>3}  wrong {lc['wrong']:>3}  declined {lc['declined']:>3}")
