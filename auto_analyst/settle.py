"""Work that runs after an answer is delivered: the interaction summary and the error-fix memory entry.

Neither changes the answer, so neither is on its critical path. The pipeline returns an
:class:`AfterAnswer` value beside the Result (``pipeline.Answered``); the session hands it to its
:class:`Settler` (one worker thread per session), which runs it and gives the :class:`Settled` outcome
to the session to record (short-term memory, usage). The Result itself is never written to: the
caller holds it and the history database stored it when it was returned (``Result.seal``).

A session calls :meth:`Settler.settle` before it plans its next question (so its short-term memory
and the error-fix memory are complete), before it resets or closes, and the CLI closes its Analyst
(hence every session) before the process exits. The worker thread is not a daemon, so even a caller
that never closes waits for it at interpreter exit.
"""

from __future__ import annotations

import json
import logging
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, NamedTuple, Protocol

from auto_analyst.agents.modules import AGENT_VERSION
from auto_analyst.errors import AutoAnalystError
from auto_analyst.results import Result, Trace, Usage

if TYPE_CHECKING:
    import dspy

    from auto_analyst.agents.program import Program
    from auto_analyst.llm.usage import LMBudget

__all__ = ["AfterAnswer", "Answered", "FixRecord", "Settled", "Settler"]

log = logging.getLogger(__name__)


class ModuleCaller(Protocol):
    """How the after-answer step reaches the LM: ``pipeline.Pipeline`` (its ``call`` and ``program``); declared here
    so that this module and the pipeline do not import each other."""

    program: Program | None

    def call(self, budget: LMBudget, module: dspy.Module, trace: Trace, **kwargs: str) -> dspy.Prediction: ...


class FixMemory(Protocol):
    """The part of ``pipeline.MemoryPort`` the error-fix entry needs."""

    def remember_fix(self, bad_code: str, error: str, good_code: str, agent: str, summary: str,
                     correction: str, agent_version: str, human: bool = False) -> list[str]: ...


@dataclass
class FixRecord:
    """What the fix loop leaves for the error summarizer: each fix's explanation, and the script that then ran."""

    notes: list[str] = field(default_factory=list)
    good_code: str = ""
    entries: list[tuple[str, str]] = field(default_factory=list)  # each fix's (error_summary, correction_summary)


@dataclass(frozen=True)
class Settled:
    """What the after-answer step of one turn produced.

    Attributes:
        turn: the turn (``Result.turn``).
        summary: the turn's summary for short-term memory: the answer writer's (``Result.trace.summary``) when it
            wrote one, else the interaction summarizer's; empty when neither gave one (or the turn ran no code).
        usage: the question's whole usage, the after-answer calls included (``Result.usage`` counts only the calls
            made before the answer was returned).
        fix_remembered: an error-fix memory entry was written for this turn.
        raw_lm_output: model text of the after-answer calls that could not be parsed.
    """

    turn: int
    summary: str
    usage: Usage
    fix_remembered: bool = False
    raw_lm_output: tuple[str, ...] = ()


@dataclass(frozen=True)
class AfterAnswer:
    """The pending after-answer work of one turn: the interaction summary (when the answer writer gave none) and,
    after a successful fix, the error-fix memory entry. Made by the pipeline, run by :meth:`run` (the session's
    :class:`Settler` does it in its worker).

    Both calls count against the question's budget; when one fails the answer stands (short-term memory then keeps
    the answer itself, and the fix is not remembered).
    """

    result: Result
    budget: LMBudget
    fixed: FixRecord
    caller: ModuleCaller
    memory: FixMemory | None = None

    def run(self) -> Settled:
        """Make the summary and the error-fix entry; never raises for a model failure (the outcome says less)."""
        result = self.result
        scratch = Trace.model_validate(result.trace.model_dump())  # the LM call may note raw output in it
        summary = result.trace.summary
        if result.status == "ok" and result.trace.source == "ran_code" and not summary:
            response = json.dumps({"plan": [s.model_dump() for s in result.plan], "code": result.code,
                                   "answer": result.answer})
            try:
                summary = self.caller.call(self.budget, self.caller.program.summarizer, scratch,
                                           user_goal=result.trace.standalone_question,
                                           agent_response=response).summary
            except AutoAnalystError:
                summary = ""
        remembered = bool(self.fixed.good_code and self.memory is not None and self._remember_fix(scratch))
        return Settled(turn=result.turn, summary=summary or "", usage=self.budget.usage(), fix_remembered=remembered,
                       raw_lm_output=tuple(scratch.raw_lm_output[len(result.trace.raw_lm_output):]))

    def unsettled(self) -> Settled:
        """The outcome when :meth:`run` failed unexpectedly: the answer writer's summary, the usage so far."""
        return Settled(turn=self.result.turn, summary=self.result.trace.summary, usage=self.budget.usage())

    def _remember_fix(self, scratch: Trace) -> bool:
        """The entry from the first failing script and the fix (the fixer's own summaries when one fix did it, else
        the error summarizer's); the memory stores it."""
        result, fixed = self.result, self.fixed
        first = result.attempts[0]
        kind, message = (first.error.kind, first.error.message) if first.error else ("", "")
        agent = result.plan[-1].agent if result.plan else "statistics"
        meta = json.dumps({"error_type": kind, "error": message, "agent": agent, "agent_version": AGENT_VERSION,
                           "timestamp": time.time(), "user_query": result.question,
                           "repair": "; ".join(n for n in fixed.notes if n)})
        try:
            # one fix that worked: the fixer already wrote the entry (its error and its change), no call is needed
            if len(fixed.entries) == 1 and all(fixed.entries[0]):
                error_summary, correction_summary = fixed.entries[0]
            else:
                out = self.caller.call(self.budget, self.caller.program.error_summarizer, scratch,
                                       incorrect_code=first.code, error_metadata=meta, correction=fixed.good_code)
                error_summary, correction_summary = out.error_summary, out.correction_summary
            self.memory.remember_fix(first.code, f"{kind}: {message}" if kind else "", fixed.good_code, agent,
                                     error_summary, correction_summary, AGENT_VERSION)
        except AutoAnalystError:
            return False
        return True


class Settler:
    """A one-thread queue of the after-answer work of one session (run in the order submitted)."""

    def __init__(self):
        self._pool: ThreadPoolExecutor | None = None
        self._pending: list[Future] = []
        self._lock = threading.Lock()

    def submit(self, work: AfterAnswer, record: Callable[[Settled], None]) -> Future:
        """Run ``work`` in the worker, then give its :class:`Settled` outcome to ``record`` (also when it failed)."""
        with self._lock:
            if self._pool is None:
                self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="aa-settle")
            future = self._pool.submit(_settle, work, record)
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


def _settle(work: AfterAnswer, record: Callable[[Settled], None]) -> None:
    try:
        settled = work.run()
    except Exception:  # noqa: BLE001 - an after-answer job must never take the session down
        log.exception("after-answer work failed")
        settled = work.unsettled()
    try:
        record(settled)
    except Exception:  # noqa: BLE001
        log.exception("recording the after-answer work failed")


class Answered(NamedTuple):
    """What ``pipeline.Pipeline.ask`` returns: the Result (final) and the after-answer work still to run."""

    result: Result
    after: AfterAnswer
