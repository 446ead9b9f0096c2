"""The ``auto-analyst`` command: one click group; each command group lives in its own module.

Exit codes: 0 answered, 3 declined (the model cannot answer), 2 bad input or usage, 1 internal failure.
"""

from __future__ import annotations

import os
import sys

import click

__all__ = ["main", "cli"]

EXIT_OK, EXIT_FAILURE, EXIT_BAD_INPUT, EXIT_DECLINED = 0, 1, 2, 3


@click.group(context_settings={"help_option_names": ["-h", "--help"], "auto_envvar_prefix": "AUTO_ANALYST"})
@click.option("--model", default=None, help="Model string for dspy.LM/LiteLLM (e.g. openai/gpt-4o-mini). "
              "Default: the embedded offline model.")
@click.option("--user", default=None, help="User id (default: your login name).")
@click.version_option(package_name="auto-analyst")
@click.pass_context
def cli(ctx: click.Context, model: str | None, user: str | None) -> None:
    """Auto-Analyst: ask a table questions in plain language; answers come from code that really ran."""
    from auto_analyst.config import Settings
    from auto_analyst.errors import AutoAnalystError

    try:
        settings = Settings.load({"model": model, "user": user})
    except AutoAnalystError as exc:
        raise click.UsageError(str(exc)) from None
    ctx.obj = {"settings": settings, "user": user or settings.user}


def _register() -> None:
    from auto_analyst.cli.ask import ask, chat
    from auto_analyst.cli.describe import describe
    from auto_analyst.cli.entities import entities
    from auto_analyst.cli.history import history
    from auto_analyst.cli.memory import memory
    from auto_analyst.cli.profile import profile

    for command in (ask, chat, describe, memory, history, profile, entities):
        cli.add_command(command)
    try:
        from auto_analyst.cli.serve import serve
    except ImportError:  # the web page is optional at import time
        return
    cli.add_command(serve)


def main(argv: list[str] | None = None) -> None:
    """Console entry point."""
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    _register()
    cli.main(args=argv, prog_name="auto-analyst", standalone_mode=True)


if "pytest" in sys.modules:  # CliRunner tests invoke `cli` directly
    _register()
