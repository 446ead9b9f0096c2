"""Which failures of a script's run a changed script can fix, and what the user is told about the others.

The fix loop (:mod:`auto_analyst.pipeline`) calls the code fixer only for a run error that
:func:`fixable` accepts. A run that failed for a reason no script change can remove (no sandbox on
this machine, the wall refusing an operation by design, the time, memory or disk budget of a run, a
lost worker) ends at once with the error's kind and :func:`user_sentence`: calling the model would
cost a round trip and could only return a script that fails the same way (or, worse, one that
works around a limit that is there on purpose).

Kinds are ``ErrorInfo.kind`` as the sandbox reports them (``execution/run.py``, ``execution/sandbox.py``,
``execution/report.py``, ``queue/remote.py``); any other kind is the name of a Python exception the
script raised (``KeyError``, ``ValueError`` ...), which is the script's fault and fixable.

Example:
    >>> fixable(ErrorInfo(kind="KeyError", message="KeyError: 'Fare'"))
    True
    >>> fixable(ErrorInfo(kind="timeout", message="TimeoutError: ..."))
    False
"""

from __future__ import annotations

import re

from auto_analyst.errors import ERROR_KINDS
from auto_analyst.results import ErrorInfo

__all__ = ["NOT_FIXABLE", "REMEDIES", "WALL_REFUSAL", "fixable", "reported", "script_error_sentence", "user_sentence"]

REMEDIES: dict[str, str] = {
    "timeout": "ask for less at once (a sample, fewer groups) or raise run_timeout (AUTO_ANALYST_RUN_TIMEOUT)",
    "disk": "raise run_disk_mb (AUTO_ANALYST_RUN_DISK_MB) if the files are needed",
    "memory": "ask for less at once or raise run_memory_mb (AUTO_ANALYST_RUN_MEMORY_MB)",
    "killed": "ask for less at once or raise run_memory_mb (AUTO_ANALYST_RUN_MEMORY_MB)",
}
"""Run error kind (a budget of the run) → what the user can do about it; :func:`reported` adds it to the error's
message, so the terminal's error line, ``--json`` and the web API say it, not only the saved answer."""

NOT_FIXABLE: dict[str, str] = {
    "sandbox": "The script could not run here: the sandbox is missing or broke on this machine, which no change "
               "to the script can fix; see `auto-analyst doctor`.",
    "timeout": f"The script ran past its time budget (run_timeout) and was stopped; {REMEDIES['timeout']}.",
    "disk": f"The script wrote more than the run's disk budget (run_disk_mb) and was stopped; {REMEDIES['disk']}.",
    "memory": f"The script ran out of the run's memory budget (run_memory_mb); {REMEDIES['memory']}.",
    "killed": f"The script's process was killed (most likely out of memory); {REMEDIES['killed']}.",
    "worker_lost": "The worker running the script was lost; ask again (the next run starts a new worker).",
    "cancelled": "The run was cancelled.",
    "refused": "The sandbox refused an operation the script tried (network, processes, changing the data files), "
               "by design; an analysis of the loaded data does not need it.",
}
"""Run error kind → the one sentence the user gets; the fixer is never called for these kinds."""

WALL_REFUSAL = "the sandbox does not allow "
"""How the sandbox's audit hook words a refusal (``execution/guard.py``): a ``PermissionError`` saying this was the
wall, by design, and not the script's mistake."""


def _kind(error: ErrorInfo) -> str:
    if error.kind == "PermissionError" and WALL_REFUSAL in (error.message or ""):
        return "refused"
    return error.kind


def fixable(error: ErrorInfo | None) -> bool:
    """True when a changed script could make this run succeed (the error is the script's own)."""
    return error is not None and _kind(error) not in NOT_FIXABLE


def reported(error: ErrorInfo | None) -> ErrorInfo | None:
    """The error a Result reports for a failed run: its kind one of :data:`~auto_analyst.errors.ERROR_KINDS` (what
    ``ask --json`` and the web API show and the exit code and HTTP status come from), never a Python class name.

    ``cancelled`` stays; a run the sandbox stopped (a kind of :data:`NOT_FIXABLE`: its budgets, a lost worker, the
    wall's refusal) is ``sandbox``; the script's own failure (``KeyError``, ``output_limit``, a refused or failed
    SQL query) is ``internal``: the script is Auto-Analyst's own work. The message is kept, naming the exception's
    class, and the run's own kind stays in ``Result.attempts`` (what the fixer and the error-fix memory read). A
    budget's message gets its remedy (:data:`REMEDIES`) after a semicolon: one sentence saying what to do.
    """
    if error is None:
        return None
    kind = _kind(error)
    message = error.message
    remedy = REMEDIES.get(kind)
    if remedy and message and remedy not in message:
        message = f"{message.rstrip(' .')}; {remedy}."
    if kind not in ERROR_KINDS:
        kind = "sandbox" if kind in NOT_FIXABLE else "internal"
    return ErrorInfo(kind=kind, message=message)


def user_sentence(error: ErrorInfo) -> str:
    """What the user is told about a run that failed for a reason the script cannot fix: the kind and one sentence
    (with the sandbox's own message, which names the limit)."""
    kind = _kind(error)
    sentence = NOT_FIXABLE.get(kind, "")
    detail = (error.message or "").strip()
    return f"[{kind}] {sentence}" + (f" ({detail})" if detail and detail not in sentence else "")


def script_error_sentence(error: ErrorInfo | None) -> str:
    """What the user is told about a run whose script failed: its message without the Python class name
    ('LookupError: No rows match ...' -> 'No rows match ...'), which names nothing the user asked about."""
    if error is None:
        return "The analysis could not be completed."
    message = (error.message or "").strip().removeprefix(f"{error.kind}: ")
    message = re.sub(r"^[A-Za-z_][\w.]*(?:Error|Exception|Warning): ", "", message)
    return f"The analysis could not be completed: {message}" if message else "The analysis could not be completed."
