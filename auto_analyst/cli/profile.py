"""``profile`` commands: show, set and reset how answers sound for the current user (``Analyst.profile()``)."""

from __future__ import annotations

import click

from auto_analyst.cli.context import CliContext, Group

__all__ = ["profile"]


def _profile(ctx: click.Context):
    return CliContext.of(ctx).analyst().profile()


@click.group("profile", cls=Group)
def profile() -> None:
    """Show or change your answer profile (tone, style, persona, expertise, notes)."""


@profile.command("show")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.pass_context
def show(ctx: click.Context, as_json: bool) -> None:
    """Show your profile and the prompt text it adds."""
    view = _profile(ctx)
    p = view.get()
    if as_json:
        click.echo(p.model_dump_json(indent=2))
        return
    for key in view.fields:
        value = getattr(p, key)
        click.echo(f"{key:<10} {('; '.join(value) or '-') if isinstance(value, list) else value}")
    click.echo("\nPrompt text:\n" + view.prompt_text())


@profile.command("set")
@click.argument("key")
@click.argument("value")
@click.pass_context
def set_(ctx: click.Context, key: str, value: str) -> None:
    """Set KEY (tone, style, persona, expertise or notes) to VALUE (for notes: replaces all notes with VALUE)."""
    p = _profile(ctx).set(**{key: value})
    click.echo(f"{key} = {getattr(p, key)}")


@profile.command("reset")
@click.pass_context
def reset(ctx: click.Context) -> None:
    """Reset your profile to the defaults."""
    _profile(ctx).reset()
    click.echo("Profile reset to the defaults.")
