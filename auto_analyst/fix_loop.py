"""Run and fix: a script runs in the sandbox and, on a fault of its own, the fixer rewrites it (docs/architecture.md,
step 6). Errors that are not the script's fault (``run_errors.NOT_FIXABLE``) end the loop at once."""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass
from typing import Any, Callable

from auto_analyst.errors import CancelledError
from auto_analyst.settle import FixRecord
from auto_analyst.llm.usage import LMBudget
from auto_analyst.results import Attempt, MemoryHit, ProgressEvent, Result, RunResult
from auto_analyst.run_errors import fixable
from auto_analyst.turn_context import TurnContext

__all__ = ["FixLoop", "keep_run", "run_and_fix"]


@dataclass(frozen=True)
class FixLoop:
    """What the loop runs with: the session's sandbox (``run(code, cancel=)`` → RunResult), the pipeline's counted
    LM call (``Pipeline.call``), the fixer module and ``max_fix_attempts``."""

    sandbox: Any
    call: Callable[..., Any]
    fixer: Any
    max_attempts: int


def keep_run(result: Result, run: RunResult) -> None:
    """What a run showed goes into the Result at once, so a later failure (a cap, a model error) keeps it."""
    result.stdout, result.warnings, result.tables, result.figures = run.stdout, run.warnings, run.tables, run.figures


def run_and_fix(loop: FixLoop, ctx: TurnContext, script: str, env: str, budget: LMBudget, result: Result, emit,
                cancel: threading.Event | None, fixed: FixRecord) -> RunResult:
    """Run ``script`` and, on a fault of the script's own (``run_errors.fixable``), ask the fixer and run its script,
    at most ``loop.max_attempts`` times; never the same script twice, and not again after the same error.

    Each run is kept in ``result`` (attempts, code, what it showed) as it happens; ``fixed`` gets each fix's notes
    and, when a fix ran, the script that did.

    Raises:
        CancelledError: a run was cancelled.
        ModelError, BudgetError: from a fixer call (``Pipeline.call``).
    """
    timings = result.timings
    tried: set[str] = set()
    last_error = None
    run: RunResult | None = None
    memory_ids: list[str] = []
    for attempt in range(loop.max_attempts + 1):
        if script.strip() in tried:
            break  # never re-run unchanged code
        tried.add(script.strip())
        t = time.perf_counter()
        emit(ProgressEvent(stage="running" if attempt == 0 else "fixing",
                           message="Running the script" if attempt == 0 else f"Running fix {attempt}",
                           step=attempt, total=loop.max_attempts))
        run = loop.sandbox.run(script, cancel=cancel)
        timings["running"] = round(timings.get("running", 0) + time.perf_counter() - t, 4)
        result.attempts.append(Attempt(code=script, error=run.error, memory_hits=memory_ids))
        result.code = script
        keep_run(result, run)
        if run.ok:
            if attempt > 0:
                fixed.good_code = script
            return run
        if run.error and run.error.kind in ("cancelled",):
            raise CancelledError("Cancelled.")
        if run.error is not None and not fixable(run.error):
            break  # not the script's fault (run_errors.NOT_FIXABLE): no fixer call, the user gets the kind
        error_text = f"{run.error.message}\n{run.traceback[-1500:]}" if run.error else run.traceback
        if last_error is not None and run.error and run.error.message == last_error:
            break  # the same error again: the fixer is not getting anywhere
        last_error = run.error.message if run.error else None
        if attempt == loop.max_attempts:
            break
        t = time.perf_counter()
        emit(ProgressEvent(stage="fixing", message=f"Fixing attempt {attempt + 1} of {loop.max_attempts}",
                           step=attempt + 1, total=loop.max_attempts))
        fixes_text, memory_ids = ("", [])
        if ctx.memory is not None:
            fixes_text, memory_ids = ctx.memory.fixes_for_error(error_text)
            result.trace.memory_hits += [MemoryHit(kind="error_fix", id=i) for i in memory_ids
                                         if i not in {h.id for h in result.trace.memory_hits}]
        out = loop.call(budget, loop.fixer, result.trace, script=script, error=error_text,
                        dataset_description=ctx.dataset_description, environment=env,
                        remembered_fixes=fixes_text, goal=result.trace.standalone_question or ctx.question)
        timings["fixing"] = round(timings.get("fixing", 0) + time.perf_counter() - t, 4)
        fixed.notes.append(out.explanation or "")
        fixed.entries.append((out.error_summary, out.correction_summary))
        script = out.fixed_script or script
    assert run is not None
    return run
