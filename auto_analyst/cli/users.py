"""``users`` and ``tokens``: the accounts of the team server and their API tokens (docs/team.md).

``users add NAME`` reads the password from standard input when it is not a terminal (one line), and
asks twice, hidden, when it is.
"""

from __future__ import annotations

import sys

import click

from auto_analyst.cli.confirm import confirm_or_refuse
from auto_analyst.cli.context import CliContext, Command, Group
from auto_analyst.errors import BadInputError

__all__ = ["users", "tokens"]


def _store(ctx: click.Context):
    from auto_analyst.web import AccountStore

    return AccountStore(settings=CliContext.of(ctx).settings)


def _read_password() -> str:
    if sys.stdin is None or not sys.stdin.isatty():
        line = sys.stdin.readline() if sys.stdin is not None else ""
        password = line.rstrip("\r\n")
        if not password:
            raise BadInputError("No password on standard input; pipe one line, e.g. `printf '%s\\n' \"$PW\" | "
                                "auto-analyst users add NAME`.")
        return password
    return click.prompt("Password", hide_input=True, confirmation_prompt=True)


def _limit(value: str | None, cast):
    if value is None:
        return ...
    if value.strip().lower() in ("", "none", "off"):
        return None
    try:
        return cast(value)
    except ValueError:
        raise BadInputError(f"{value!r} is not a number; give one, or 'none' for no limit.") from None


@click.group("users", cls=Group)
def users() -> None:
    """Accounts of the web server: add, list, remove, change a password, set limits."""


@users.command("add", cls=Command)
@click.argument("name")
@click.option("--role", type=click.Choice(["member", "admin"]), default="member", show_default=True)
@click.pass_context
def users_add(ctx, name: str, role: str) -> None:
    """Create the account NAME (password from standard input, or asked for on a terminal)."""
    account = _store(ctx).add(name, _read_password(), role=role)
    click.echo(f"Added {account.role} {account.name}.")


@users.command("list", cls=Command)
@click.pass_context
def users_list(ctx) -> None:
    """The accounts: name, role, daily cap, question rate, spent today."""
    store = _store(ctx)
    accounts = store.list()
    if not accounts:
        click.echo("No accounts; add one with `auto-analyst users add NAME --role admin`.")
        return
    for a in accounts:
        cap = "no cap" if a.daily_cost_usd is None else f"cap ${a.daily_cost_usd:g}/day"
        rate = "no rate limit" if a.rate_per_minute is None else f"{a.rate_per_minute} questions/min"
        click.echo(f"{a.name}\t{a.role}\t{cap}\t{rate}\tspent today ${store.spent_today(a.name):.4f}")


@users.command("remove", cls=Command)
@click.argument("name")
@click.option("--keep-data", is_flag=True, help="Keep NAME's conversations, facts, profile, error-fix entries and "
                                                 "files stored under the name (an account added again as NAME sees them).")
@click.option("--yes", "-y", is_flag=True, help="Do not ask for confirmation (needed without a terminal).")
@click.pass_context
def users_remove(ctx, name: str, keep_data: bool, yes: bool) -> None:
    """Delete the account NAME, its API tokens and browser logins, and its data unless --keep-data (asks first)."""
    store = _store(ctx)
    if store.get(name) is None:
        store.remove(name)  # raises the not-found sentence
    name = store.resolve(name)  # `users remove Carol` removes carol, and carol's data
    if keep_data:
        store.remove(name)
        click.echo(f"Removed {name}: its browser logins ended and its API tokens are revoked; its conversations, facts "
                   f"and files stay stored under the name {name!r} (an account added again as {name} sees them).")
        return
    from auto_analyst.web import count_user_data, delete_user_data

    context = CliContext.of(ctx)
    analyst = context.analyst(user=name)
    if not yes:
        found = count_user_data(analyst, context.settings, name)
        confirm_or_refuse(f"Remove the account {name} and delete its data: {found.sentence()}? "
                          "(`--keep-data` keeps the data)", f"Not removing {name} and its data ({found.sentence()})",
                          "pass --yes to remove without asking (or --keep-data to keep the data)")
    store.remove(name)  # first, so nothing signed in as NAME writes while its data goes
    gone = delete_user_data(analyst, context.settings, name)
    click.echo(f"Removed {name}: its browser logins ended, its API tokens are revoked and its data is deleted "
               f"({gone.sentence()}). Its usage per day stays in the admin's usage figures.")


@users.command("passwd", cls=Command)
@click.argument("name")
@click.pass_context
def users_passwd(ctx, name: str) -> None:
    """Change NAME's password (its browsers are signed out and its API tokens revoked)."""
    store = _store(ctx)
    revoked, name = (len(store.tokens(name)) if store.get(name) is not None else 0), store.resolve(name)
    store.set_password(name, _read_password())
    click.echo(f"Changed the password of {name}; its browsers are signed out and its {revoked} API token(s) "
               "revoked (make new ones on the account page or with `auto-analyst tokens create`).")


@users.command("set", cls=Command)
@click.argument("name")
@click.option("--role", type=click.Choice(["member", "admin"]), default=None)
@click.option("--daily-cost", default=None, metavar="USD", help="Daily cost cap in US dollars (UTC day); 'none' removes it.")
@click.option("--rate", default=None, metavar="N", help="Questions per minute; 'none' removes the limit.")
@click.pass_context
def users_set(ctx, name: str, role: str | None, daily_cost: str | None, rate: str | None) -> None:
    """Set NAME's role, daily cost cap or question rate."""
    changes = {k: v for k, v in (("role", role or ...), ("daily_cost_usd", _limit(daily_cost, float)),
                                 ("rate_per_minute", _limit(rate, int))) if v is not ...}
    a = _store(ctx).update(name, **changes)
    cap = "no cap" if a.daily_cost_usd is None else f"cap ${a.daily_cost_usd:g}/day"
    rate_text = "no rate limit" if a.rate_per_minute is None else f"{a.rate_per_minute} questions/min"
    click.echo(f"{a.name}: {a.role}, {cap}, {rate_text}.")


@click.group("tokens", cls=Group)
def tokens() -> None:
    """API tokens (Authorization: Bearer ...) for scripts and notebooks."""


@tokens.command("create", cls=Command)
@click.argument("name")
@click.option("--label", default="", help="What the token is for (shown in lists).")
@click.pass_context
def tokens_create(ctx, name: str, label: str) -> None:
    """Create a token for the account NAME and print it (only now: it is stored hashed)."""
    record, token = _store(ctx).create_token(name, label)
    click.echo(token)
    click.echo(f"Token {record.id} for {record.user}; send it as `Authorization: Bearer <token>`. It is not shown again.",
               err=True)


@tokens.command("list", cls=Command)
@click.argument("name", required=False)
@click.pass_context
def tokens_list(ctx, name: str | None) -> None:
    """The tokens of NAME (everyone's without NAME): id, user, label, created, last used."""
    found = _store(ctx).tokens(name)
    if not found:
        click.echo("No tokens.")
    for t in found:
        click.echo(f"{t.id}\t{t.user}\t{t.label}\tcreated {t.created_at[:16]}\tlast used {(t.last_used_at or 'never')[:16]}")


@tokens.command("revoke", cls=Command)
@click.argument("token_id")
@click.pass_context
def tokens_revoke(ctx, token_id: str) -> None:
    """Revoke the token TOKEN_ID (the id `tokens list` shows)."""
    _store(ctx).revoke_token(token_id)
    click.echo(f"Revoked {token_id}.")
