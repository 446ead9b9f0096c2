"""Asking before a command deletes something: the question on a terminal, one sentence elsewhere.

``click.confirm`` reads its answer from standard input; in a script (a pipe, ``</dev/null``, cron) there is
nobody to answer, and click ends with a bare ``Aborted!`` and exit 1, which says neither why nor what to do.
Every command that asks first (``users remove``, ``history forget --all``, ``memory clear``, ``memory facts
forget --all``) asks through :func:`confirm_or_refuse`: without a terminal it deletes nothing and says, in one
sentence, to pass ``--yes`` (exit 2, a usage error: ``errors.ERROR_KINDS``).
"""

from __future__ import annotations

import sys

import click

from auto_analyst.errors import BadInputError

__all__ = ["confirm_or_refuse", "stdin_is_terminal"]


def stdin_is_terminal() -> bool:
    """True when standard input is a terminal a person can answer a question on."""
    return sys.stdin is not None and sys.stdin.isatty()


def confirm_or_refuse(question: str, refusal: str, how: str = "pass --yes to go ahead without asking") -> None:
    """Ask ``question`` (y/N) on a terminal; a 'no' aborts (click's ``Aborted!``, exit 1) and nothing is deleted.

    Args:
        question: what is about to be deleted, as a question.
        refusal: the sentence said without a terminal, e.g. ``"Not forgetting all history of 'bob'"``.
        how: what to add to the command instead, appended to ``refusal``.

    Raises:
        BadInputError: standard input is not a terminal (exit 2).
    """
    if not stdin_is_terminal():  # a script's stdin cannot answer: say how, not click's bare 'Aborted!'
        raise BadInputError(f"{refusal}: there is no terminal to confirm it on; {how}.")
    click.confirm(question, abort=True)
