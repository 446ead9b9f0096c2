"""What every command shares: one :class:`CliContext` (settings, user, the Analyst) and one failure path.

Every command and group is a :class:`Command` / :class:`Group`, whose ``invoke`` runs the command
inside :func:`failure_path`: an :class:`~auto_analyst.errors.AutoAnalystError` becomes a
:class:`CliError` (``Error: <message>`` on stderr, exit code from ``errors.ERROR_KINDS``), and any
other exception becomes one sentence with exit code 1, never a traceback. As in simonw/llm, setting
``AUTO_ANALYST_RAISE_ERRORS=1`` re-raises the original exception instead (for debugging and for tests
that want the traceback).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from auto_analyst.errors import AutoAnalystError
from auto_analyst.extras import explain

if TYPE_CHECKING:
    from auto_analyst.api import Analyst
    from auto_analyst.config import Settings

__all__ = ["CliContext", "CliError", "Command", "Group", "failure_path", "only_a_dictionary", "report",
           "RAISE_ERRORS"]

RAISE_ERRORS = "AUTO_ANALYST_RAISE_ERRORS"
"""Environment variable: when set (to anything but '' or 0), the CLI re-raises errors instead of printing them."""


class CliError(click.ClickException):
    """An error shown as ``Error: <message>`` on stderr, exiting with ``exit_code``."""

    def __init__(self, message: str, exit_code: int = 1):
        super().__init__(message)
        self.exit_code = exit_code

    def show(self, file: Any = None) -> None:
        click.secho(f"Error: {self.format_message()}", fg="red", err=True)


def only_a_dictionary(paths: list[str],
                      remedy: str = "load a table too (CSV, Excel, Parquet, JSON, or a database URL)") -> str:
    """The sentence for files that were all read as data dictionaries (``.md``, a ``notes.txt``...: no table), e.g.
    "notes.txt was read as a data dictionary, not a table; load a table too (CSV, Excel, Parquet...)."."""
    names = " and ".join(os.path.basename(p) or p for p in paths)
    return f"{names} {'was' if len(paths) == 1 else 'were'} read as a data dictionary, not a table; {remedy}."


def _raise_errors() -> bool:
    return os.environ.get(RAISE_ERRORS, "") not in ("", "0")


def _in_home(filename: str) -> bool:
    """Whether ``filename`` is the tool's home (AUTO_ANALYST_HOME, else the per-user default) or under it."""
    from auto_analyst.config import default_home

    home = Path(os.environ.get("AUTO_ANALYST_HOME") or default_home()).expanduser().absolute()
    path = Path(filename).expanduser().absolute()
    return path == home or home in path.parents


def to_cli_error(exc: Exception) -> CliError:
    """The :class:`CliError` for ``exc`` (re-raises ``exc`` itself when AUTO_ANALYST_RAISE_ERRORS is set)."""
    if _raise_errors():
        raise exc
    missing = explain(exc)  # a package of an extra, imported late by a library: say which extra to install
    if missing is not None:
        return CliError(str(missing), missing.exit_code)
    if isinstance(exc, AutoAnalystError):
        return CliError(str(exc), exc.exit_code)
    if isinstance(exc, PermissionError) and exc.filename:
        if _in_home(exc.filename):  # e.g. a state folder (a container's volume) owned by root
            return CliError(f"Cannot write {exc.filename}: permission denied for this user. Give the user that "
                            "folder, or set AUTO_ANALYST_HOME to a folder it owns.", 2)
        # any other path is the user's own (a file to read, a folder to save into): the home advice would mislead
        return CliError(f"Cannot use {exc.filename}: permission denied for this user (check its permissions).", 2)
    return CliError(f"Something went wrong inside Auto-Analyst ({type(exc).__name__}: {str(exc)[:200]}); "
                    f"run again with {RAISE_ERRORS}=1 to see the traceback.", 1)


@contextmanager
def failure_path() -> Iterator[None]:
    """Turn what a command raises into a :class:`CliError` (click's own exceptions pass through)."""
    try:
        yield
    except (click.ClickException, click.exceptions.Abort, click.exceptions.Exit):
        raise
    except KeyboardInterrupt:
        # Ctrl-C before a question runs (loading the table, the model); a running question is cancelled by the
        # command itself. click would print "Aborted!" and exit 1; a shell expects 128 + SIGINT.
        click.echo("\nStopped (Ctrl-C).", err=True)
        raise click.exceptions.Exit(130) from None
    except BrokenPipeError:
        # the reader went away (`... | head -1`): nothing to say to anyone. Point stdout at /dev/null so the
        # interpreter's flush at exit does not fail again (the Python docs' recipe, signal module, SIGPIPE).
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        raise click.exceptions.Exit(1) from None
    except Exception as exc:  # noqa: BLE001 - a user sees one sentence, never a traceback
        raise to_cli_error(exc) from None


def report(exc: Exception) -> int:
    """Show ``exc`` as a command would fail with it, without stopping (the chat loop); returns its exit code."""
    err = to_cli_error(exc)
    err.show()
    return err.exit_code


class Command(click.Command):
    """A command that fails through :func:`failure_path`."""

    def invoke(self, ctx: click.Context) -> Any:
        with failure_path():
            return super().invoke(ctx)


class Group(click.Group):
    """A group whose own callback and whose commands (and sub-groups) fail through :func:`failure_path`."""

    command_class = Command
    group_class = type  # sub-groups are Groups too

    def invoke(self, ctx: click.Context) -> Any:
        with failure_path():
            return super().invoke(ctx)


class CliContext:
    """One per invocation (``ctx.obj``): the settings, the user, and the :class:`~auto_analyst.api.Analyst`
    (made on first use and closed when the command ends).

    Args:
        settings: the settings (default ``Settings.load()`` on first use).
        user: the ``--user`` of the main group (default: settings.user, then the login name).
    """

    def __init__(self, settings: Settings | None = None, user: str | None = None):
        self._settings = settings
        self.user = user
        self._analysts: dict[tuple[str | None, str | None], Analyst] = {}

    @classmethod
    def of(cls, ctx: click.Context) -> CliContext:
        """The invocation's context (a new one when a command runs on its own, as in tests)."""
        return ctx.ensure_object(cls)

    @property
    def settings(self) -> Settings:
        if self._settings is None:
            from auto_analyst.config import Settings

            self._settings = Settings.load()
        return self._settings

    def analyst(self, model: str | None = None, user: str | None = None) -> Analyst:
        """The Analyst for ``model`` (default the settings' model) and ``user`` (default the group's user)."""
        key = (model, self.user if user is None else user)
        if key not in self._analysts:
            from auto_analyst.api import Analyst

            self._analysts[key] = Analyst(model=model, settings=self.settings, user=key[1])
            current = click.get_current_context(silent=True)
            if current is not None:  # closed with the command: stops session workers, releases the stores
                current.find_root().call_on_close(lambda: self._analysts.pop(key).close())
        return self._analysts[key]
