"""The ``auto-analyst`` command: one click group; each command group lives in its own module.

Every command calls only the Python API (:mod:`auto_analyst.api`) and fails through one path
(:mod:`auto_analyst.cli.context`). Exit codes: 0 answered, 3 declined (the model cannot answer), 2 bad
input or usage, 1 any other failure (the table is ``auto_analyst.errors.ERROR_KINDS``).
"""

from __future__ import annotations

import os

import click

from auto_analyst.cli.ask import ask, chat
from auto_analyst.cli.context import CliContext, Group
from auto_analyst.cli.describe import describe
from auto_analyst.cli.doctor import doctor
from auto_analyst.cli.entities import entities
from auto_analyst.cli.eval import eval_group
from auto_analyst.cli.history import history
from auto_analyst.cli.memory import memory
from auto_analyst.cli.optimize import optimize
from auto_analyst.cli.profile import profile
from auto_analyst.cli.serve import serve
from auto_analyst.cli.stack import stack
from auto_analyst.cli.users import tokens, users
from auto_analyst.cli.worker import worker

__all__ = ["main", "cli"]


@click.group(cls=Group, context_settings={"help_option_names": ["-h", "--help"], "auto_envvar_prefix": "AUTO_ANALYST"})
@click.option("--model", default=None, help="Model string for dspy.LM/LiteLLM (e.g. openai/gpt-4o-mini). "
              "Default: the embedded offline model.")
@click.option("--user", default=None, help="User id (default: your login name).")
@click.version_option(package_name="auto-analyst")
@click.pass_context
def cli(ctx: click.Context, model: str | None, user: str | None) -> None:
    """Auto-Analyst: ask a table questions in plain language; answers come from code that really ran."""
    from auto_analyst.config import Settings

    settings = Settings.load({"model": model, "user": user})
    ctx.obj = CliContext(settings, user or settings.user)


for _command in (ask, chat, describe, memory, history, profile, entities, serve, worker, stack, doctor, eval_group,
                 optimize, users, tokens):
    cli.add_command(_command)


def main(argv: list[str] | None = None) -> None:
    """Console entry point."""
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    from auto_analyst.cli.startup import skip_notebook_imports

    skip_notebook_imports()  # dspy's IPython imports cost ~40% of importing dspy and serve notebooks only
    cli.main(args=argv, prog_name="auto-analyst", standalone_mode=True)
