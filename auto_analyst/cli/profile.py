"""``profile`` commands: show, set and reset how answers sound for the current user."""

from __future__ import annotations

import click

from auto_analyst.cli.history import fail, settings_and_user
from auto_analyst.errors import BadInputError
from auto_analyst.memory.profile import FIELDS, ProfileStore, render

__all__ = ["profile"]


@click.group("profile")
def profile() -> None:
    """Show or change your answer profile (tone, style, persona, expertise, notes)."""


@profile.command("show")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.pass_context
def show(ctx: click.Context, as_json: bool) -> None:
    """Show your profile and the prompt text it adds."""
    settings, user = settings_and_user(ctx)
    p = ProfileStore(settings).get(user)
    if as_json:
        click.echo(p.model_dump_json(indent=2))
        return
    for key in FIELDS:
        value = getattr(p, key)
        click.echo(f"{key:<10} {('; '.join(value) or '-') if isinstance(value, list) else value}")
    click.echo("\nPrompt text:\n" + render(p))


@profile.command("set")
@click.argument("key", type=click.Choice(FIELDS))
@click.argument("value")
@click.pass_context
def set_(ctx: click.Context, key: str, value: str) -> None:
    """Set KEY to VALUE (for notes: replaces all notes with VALUE)."""
    settings, user = settings_and_user(ctx)
    try:
        p = ProfileStore(settings).set(user, **{key: value})
    except BadInputError as e:
        fail(str(e))
    click.echo(f"{key} = {getattr(p, key)}")


@profile.command("reset")
@click.pass_context
def reset(ctx: click.Context) -> None:
    """Reset your profile to the defaults."""
    settings, user = settings_and_user(ctx)
    ProfileStore(settings).reset(user)
    click.echo("Profile reset to the defaults.")
