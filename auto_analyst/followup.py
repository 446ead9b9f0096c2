"""Work that runs after an answer is delivered: the interaction summary and the error-fix memory entry.

Neither changes the answer, so neither is on its critical path: the pipeline returns the Result
after the answer writer and hands the rest to one :class:`Followups` worker per session. A
session calls :meth:`Followups.settle` before it plans its next question (so its short-term memory
and the error-fix memory are complete), before it resets or closes, and the CLI closes its
Analyst (hence every session) before the process exits. The worker thread is not a daemon, so
even a caller that never closes waits for it at interpreter exit.
"""

from __future__ import annotations

import json
import logging
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from auto_analyst.agents.modules import AGENT_VERSION
from auto_analyst.errors import AutoAnalystError

if TYPE_CHECKING:
    from auto_analyst.llm.usage import LMBudget
    from auto_analyst.results import Result

__all__ = ["Followups", "FixRecord", "after_answer"]

log = logging.getLogger(__name__)


class Followups:
    """A one-thread queue of after-answer jobs of one session (jobs run in the order they were submitted)."""

    def __init__(self):
        self._pool: ThreadPoolExecutor | None = None
        self._pending: list[Future] = []
        self._lock = threading.Lock()

    def submit(self, job: Callable[..., None], *args) -> Future:
        with self._lock:
            if self._pool is None:
                self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="aa-followup")
            future = self._pool.submit(_logged, job, *args)
            self._pending = [f for f in self._pending if not f.done()] + [future]
            return future

    def settle(self, timeout: float | None = None) -> None:
        """Wait until every submitted job has finished (their failures are logged, never raised)."""
        with self._lock:
            pending = list(self._pending)
        for f in pending:
            f.exception(timeout=timeout)
        with self._lock:
            self._pending = [f for f in self._pending if not f.done()]

    @property
    def busy(self) -> bool:
        with self._lock:
            return any(not f.done() for f in self._pending)

    def close(self) -> None:
        """Finish the pending jobs and stop the thread."""
        self.settle()
        with self._lock:
            pool, self._pool = self._pool, None
        if pool is not None:
            pool.shutdown(wait=True)


def _logged(job: Callable[..., None], *args) -> None:
    try:
        job(*args)
    except Exception:  # noqa: BLE001 - an after-answer job must never take the session down
        log.exception("after-answer job failed")


@dataclass
class FixRecord:
    """What the fix loop leaves for the error summarizer: each fix's explanation, and the script that then ran."""

    notes: list[str] = field(default_factory=list)
    good_code: str = ""
    entries: list[tuple[str, str]] = field(default_factory=list)  # each fix's (error_summary, correction_summary)


def after_answer(pipeline: Any, ctx: Any, result: Result, budget: LMBudget, fixed: FixRecord) -> None:
    """The interaction summary (when the answer writer gave none) and, after a successful fix, the error-fix memory
    entry; then ``ctx.after``.

    ``pipeline`` is the question's ``pipeline.Pipeline`` (its ``call`` and ``program``) and ``ctx`` its
    ``pipeline.TurnContext``; they are not imported here, so that this module and the pipeline do not
    import each other.

    Both calls count against the question's budget; when one fails the answer stands (short-term memory then
    keeps the answer itself, and the fix is not remembered).
    """
    try:
        if result.status == "ok" and result.trace.source == "ran_code" and not result.trace.summary:
            response = json.dumps({"plan": [s.model_dump() for s in result.plan], "code": result.code,
                                   "answer": result.answer})
            try:
                result.trace.summary = pipeline.call(budget, pipeline.program.summarizer, result.trace,
                                                     user_goal=result.trace.standalone_question,
                                                     agent_response=response).summary
            except AutoAnalystError:
                result.trace.summary = ""
        if fixed.good_code and ctx.memory is not None:
            _remember_fix(pipeline, ctx, result, budget, fixed)
    finally:
        if ctx.after is not None:
            ctx.after(result, budget.usage())


def _remember_fix(pipeline: Any, ctx: Any, result: Result, budget: LMBudget, fixed: FixRecord) -> None:
    """The entry from the first failing script and the fix (the fixer's own summaries when one fix did it, else the
    error summarizer's); the memory stores it."""
    first = result.attempts[0]
    kind, message = (first.error.kind, first.error.message) if first.error else ("", "")
    agent = result.plan[-1].agent if result.plan else "statistics"
    meta = json.dumps({"error_type": kind, "error": message, "agent": agent, "agent_version": AGENT_VERSION,
                       "timestamp": time.time(), "user_query": ctx.question,
                       "repair": "; ".join(n for n in fixed.notes if n)})
    try:
        # one fix that worked: the fixer already wrote the entry (its error and its change), no call is needed
        if len(fixed.entries) == 1 and all(fixed.entries[0]):
            error_summary, correction_summary = fixed.entries[0]
        else:
            out = pipeline.call(budget, pipeline.program.error_summarizer, result.trace, incorrect_code=first.code,
                                error_metadata=meta, correction=fixed.good_code)
            error_summary, correction_summary = out.error_summary, out.correction_summary
        ctx.memory.remember_fix(first.code, f"{kind}: {message}" if kind else "", fixed.good_code, agent,
                                error_summary, correction_summary, AGENT_VERSION)
    except AutoAnalystError:
        return
