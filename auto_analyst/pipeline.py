"""One question from plan to answer: planner → analysts (in parallel) → merge → sandbox ⇄ fixer → answer.

Every stage returns typed objects; the :class:`~auto_analyst.results.Result` of a question (or of a
script the user ran) is assembled here and nowhere else, from them and from the
:class:`TurnContext` the session gives. A one-step question that needs no fix makes two sequential
LM round trips before its Result is returned (the one-call planner's plan with its code, the answer:
the limit, one to write the code and one to read its output), a plan of several steps three (plan,
the analysts in parallel, answer), plus one per fix attempt, and only for a fault of the script
(:mod:`auto_analyst.run_errors`); the combiner is called only when the analysts' variables do not
line up (:mod:`auto_analyst.agents.merge`). The answer writer also writes the turn's summary, so the
interaction summarizer runs (afterwards, :mod:`auto_analyst.settle`) only when it gave none; the
error summary after a successful fix runs afterwards too. LM calls
are capped per question (``max_lm_calls``, ``max_cost_usd``, ``max_prompt_tokens``) and each has a
timeout (``lm_timeout``). A question starting with ``@name`` goes to that analyst directly.
"""

from __future__ import annotations

import contextvars
import json
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, Callable, Protocol

import dspy

from auto_analyst.agents.answer_format import lead_with_format
from auto_analyst.agents.environment import PRELOADED, script_environment
from auto_analyst.agents.merge import assigned_names, merge_blocks, shown_names
from auto_analyst.agents.modules import AGENT_VERSION
from auto_analyst.agents.program import Program
from auto_analyst.agents.registry import Registry
from auto_analyst.agents.run_view import tables_json as shown_tables
from auto_analyst.config import Settings
from auto_analyst.data.duck_sql import sql_decline
from auto_analyst.errors import AutoAnalystError, CancelledError, ModelError
from auto_analyst.settle import AfterAnswer, Answered, FixRecord
from auto_analyst.llm.adapter import adapter_for
from auto_analyst.llm.errors import model_error
from auto_analyst.llm.usage import LMBudget, call_usage
from auto_analyst.numbers_check import unsupported_numbers
from auto_analyst.question_text import addressed_agent
from auto_analyst.results import (Attempt, ContextPart, ErrorInfo, MemoryHit, PlanStep, ProgressEvent, Result,
                                  RunResult, Trace)
from auto_analyst.run_errors import fixable, user_sentence

__all__ = ["Pipeline", "TurnContext", "LMBudget", "plans_with_code"]

STDOUT_FOR_PROMPT = 6000


class MemoryPort(Protocol):
    """What the pipeline asks of memory (implemented over the stores by the session)."""

    def fixes_for_error(self, error_text: str) -> tuple[str, list[str]]: ...
    def history_for(self, question: str) -> tuple[str, list[MemoryHit]]: ...
    def apply_profile(self, instruction: str) -> str: ...

    def style(self) -> str: ...
    def remember_fix(self, bad_code: str, error: str, good_code: str, agent: str, summary: str,
                     correction: str, agent_version: str, human: bool = False) -> list[str]: ...


@dataclass
class TurnContext:
    """What one question is asked with: the data description and memory, already rendered for prompts.

    Attributes:
        tables, active: the session's table names and the one bound to ``df`` (for the code contract).
        variables: JSON name → type of the variables earlier turns created (their result names only).
        previous_result: JSON of the previous turn's question and key result, for the answer writer.
        session_id, turn: copied into the Result.
        context: sizes of the prompt's parts (``Trace.context``).
        memory_hits: memory items the context used (first in ``Trace.memory_hits``).
        load_notes: what loading left out (rows skipped); said with every answer computed from the data.
        duckdb_tables: the tables that are DuckDB relations (too big for pandas; the script gets ``con``).
        sql_source: the database the session reads (``DatasetDescription.source``: dialect, tables, row cap); its
            tables are read with ``sql("SELECT ...")`` (auto_analyst/sql_runs.py). Empty without one.
    """

    question: str
    dataset_description: str
    short_term_memory: str = "{}"
    user_context: str = ""
    style: str = ""
    variables: str = ""
    known_fixes: str = ""
    tables: list[str] = field(default_factory=list)
    active: str = ""
    previous_result: str = ""
    memory: MemoryPort | None = None
    session_id: str = ""
    turn: int = 0
    context: list[ContextPart] = field(default_factory=list)
    memory_hits: list[MemoryHit] = field(default_factory=list)
    load_notes: list[str] = field(default_factory=list)
    duckdb_tables: list[str] = field(default_factory=list)
    sql_source: dict[str, Any] = field(default_factory=dict)


@dataclass
class Pipeline:
    """Runs questions for one session: its LM, its sandbox, its settings, the Analyst's agents and program."""

    settings: Settings
    lm: Any
    sandbox: Any
    agents: Registry
    program: Program | None = None

    def __post_init__(self):
        if self.program is None:
            self.program = Program(self.agents)
        self.one_call = plans_with_code(self.lm)

    def call(self, budget: LMBudget, module: dspy.Module, trace: Trace, **kwargs):
        """One module call inside this session's LM context, counted (calls, tokens, cost).

        Raises:
            BudgetError: the question is past a cap (``max_cost_usd``, ``max_prompt_tokens``).
            ModelError: the call failed; the subclass says how (``llm.errors.model_error``), and a reply that
                could not be parsed is kept in ``trace.raw_lm_output``.
        """
        budget.reserve()
        try:
            with dspy.context(lm=self.lm, track_usage=True, adapter=adapter_for(self.lm)):
                out = module(**kwargs)
        except AutoAnalystError:
            raise
        except Exception as exc:  # noqa: BLE001 - every provider/adapter failure reaches the user as one sentence
            error = model_error(exc)
            if getattr(error, "raw", ""):
                trace.raw_lm_output.append(error.raw[:2000])
            raise error from exc
        budget.add(*call_usage(out))
        return out

    def budget(self) -> LMBudget:
        """A new per-question budget, priced for this session's model."""
        model = None if self.settings.is_offline else self.settings.model
        return LMBudget(self.settings, model or getattr(self.lm, "model", None))

    def _new_result(self, ctx: TurnContext) -> Result:
        return Result(question=ctx.question, status="error", session_id=ctx.session_id, turn=ctx.turn)

    def ask(self, ctx: TurnContext, on_progress: Callable[[ProgressEvent], None] | None = None,
            cancel: threading.Event | None = None) -> Answered:
        """Answer ``ctx.question``; never raises for model or code failures (they become ``status='error'``).

        Returns the Result as soon as the answer is written (``result.usage`` counts the calls made until then)
        and, beside it, the :class:`~auto_analyst.settle.AfterAnswer` work (summaries, error-fix memory) the
        session runs afterwards; its outcome has the question's whole usage.
        """
        result = self._new_result(ctx)
        budget = self.budget()
        emit = on_progress or (lambda e: None)
        fixed = FixRecord()
        t_start = time.perf_counter()
        try:
            self._ask(ctx, result, budget, emit, cancel, fixed)
        except CancelledError:
            result.status, result.error = "error", ErrorInfo(kind="cancelled", message="Cancelled.")
        except AutoAnalystError as exc:
            result.status, result.error = "error", ErrorInfo(kind=exc.kind, message=str(exc))
        result.usage = budget.usage()
        result.timings["total"] = round(time.perf_counter() - t_start, 4)
        self._add_context(ctx, result)
        emit(ProgressEvent(stage="done", message=result.status))
        return Answered(result, AfterAnswer(result, budget, fixed, self, ctx.memory))

    def _add_context(self, ctx: TurnContext, result: Result) -> None:
        """What the session's context says about this answer: prompt sizes, memory used, rows loading left out."""
        result.trace.context = ctx.context
        result.trace.memory_hits = ctx.memory_hits + [h for h in result.trace.memory_hits if h not in ctx.memory_hits]
        if ctx.load_notes and result.status == "ok" and result.trace.source == "ran_code":
            note = "; ".join(ctx.load_notes)
            result.answer += f"\n\nNote from loading: {note} (see `auto-analyst describe`)."
            result.trace.assumptions.append(note)

    def run_script(self, ctx: TurnContext, code: str, failed: Result | None = None,
                   cancel: threading.Event | None = None) -> Result:
        """Run a script the user wrote or edited; no LM call. The Result has no answer text beyond ran/failed.

        When it runs and ``failed`` (the session's last result with attempts) ended in an error, the change
        is remembered in the error-fix memory as a human fix.
        """
        run = self.sandbox.run(code, cancel=cancel)
        result = self._new_result(ctx)
        result.status, result.code, result.error = ("ok" if run.ok else "error"), code, run.error
        self._keep_run(result, run)
        result.attempts = [Attempt(code=code, error=run.error)]
        result.trace.source = "ran_code"
        result.answer = "The script ran." if run.ok else f"The script failed: {run.error.message}"
        if run.ok and failed is not None and failed.status == "error" and failed.attempts[-1].error is not None:
            self._remember_human_fix(ctx, failed, code)
        return result

    def _remember_human_fix(self, ctx: TurnContext, failed: Result, code: str) -> None:
        """A correction the user made by hand to a failed script: remembered like a fix, marked human."""
        err = failed.attempts[-1].error
        summary = f"{err.kind}: {err.message}"
        correction = "Corrected by hand: " + "; ".join(
            ln.strip() for ln in code.splitlines() if ln.strip() and ln not in failed.code.splitlines())[:600]
        try:
            ctx.memory.remember_fix(failed.code, summary, code, "human", summary, correction, AGENT_VERSION, human=True)
        except Exception:  # noqa: BLE001 - the user's run stands even if the memory cannot be written
            pass

    @staticmethod
    def _keep_run(result: Result, run: RunResult) -> None:
        """What a run showed goes into the Result at once, so a later failure (a cap, a model error) keeps it."""
        result.stdout, result.warnings, result.tables, result.figures = run.stdout, run.warnings, run.tables, run.figures

    def _ask(self, ctx: TurnContext, result: Result, budget: LMBudget, emit, cancel, fixed: FixRecord) -> None:
        trace, timings = result.trace, result.timings

        def check_cancel():
            if cancel is not None and cancel.is_set():
                raise CancelledError("Cancelled.")

        t = time.perf_counter()
        emit(ProgressEvent(stage="planning", message="Planning"))
        env = script_environment(ctx.tables, ctx.active, ctx.duckdb_tables, ctx.sql_source)
        plan = self._plan(ctx, env, budget, trace)
        timings["planning"] = round(time.perf_counter() - t, 4)
        steps = [s if isinstance(s, PlanStep) else PlanStep.model_validate(s) for s in (plan.plan or [])]
        result.plan = steps
        trace.intent = plan.intent or "analysis"
        trace.standalone_question = plan.standalone_question or ctx.question
        trace.assumptions = list(plan.assumptions or [])
        if trace.intent != "analysis" and not steps:
            self._other_intent(ctx, plan, result, budget)
            return
        if trace.intent == "config_change" and ctx.memory is not None:
            # a style change beside a question: kept in the profile, and this answer is already written in it
            ctx.memory.apply_profile(ctx.question)
            ctx.style = ctx.memory.style()
        if not steps:
            result.status, result.answer = "declined", plan.decline_reason or "I can't answer that from the data."
            return
        check_cancel()
        goal = trace.standalone_question
        planned_code = getattr(plan, "code", "") or ""
        if len(steps) == 1 and planned_code.strip():
            script, declined = planned_code, ""  # the one-call planner wrote it: no analyst round trip
        else:
            script, declined = self._write_code(ctx, goal, env, steps, budget, trace, timings, emit)
        declined = declined or sql_decline(self.lm, script, ctx.duckdb_tables, ctx.active,
                                           ctx.sql_source.get("tables", []))
        if declined:
            result.status, result.answer = "declined", declined
            return
        check_cancel()
        result.code = script
        trace.source = "ran_code"
        run = self._run_and_fix(ctx, script, env, budget, result, emit, cancel, fixed)
        if not run.ok:
            result.status = "error"
            result.error = run.error
            result.answer = (user_sentence(run.error) if run.error and not fixable(run.error) else
                             f"The analysis could not be completed: {run.error.message if run.error else 'unknown error'}")
            return
        trace.result_names = _result_names(result.code, steps, run.names)
        check_cancel()
        self._answer(ctx, plan, run, budget, result, emit, [n for n in fixed.notes if n])

    def _answer(self, ctx: TurnContext, plan, run: RunResult, budget: LMBudget, result: Result, emit,
                fixes: list[str] = ()) -> None:
        trace = result.trace
        t = time.perf_counter()
        emit(ProgressEvent(stage="answering", message="Writing the answer"))
        tables_json = shown_tables(run.tables)
        figures = json.dumps([{"kind": f.kind, "title": f.title} for f in run.figures])
        out = self.call(budget, self.program.writer, trace, question=ctx.question,
                        resolved_question=trace.standalone_question, previous_result=ctx.previous_result,
                        stdout=run.stdout[:STDOUT_FOR_PROMPT], tables=tables_json, figures=figures,
                        assumptions=json.dumps(trace.assumptions), fixes=json.dumps(list(fixes)),
                        unanswered=plan.decline_reason or "", style=ctx.style)
        result.timings["answering"] = round(time.perf_counter() - t, 4)
        result.status, result.answer = "ok", lead_with_format(ctx.question, (out.answer or "").strip())
        # the turn's summary came with the answer: the after-answer worker calls the summarizer only without one
        trace.summary = (getattr(out, "summary", "") or "").strip()
        trace.unsupported_numbers = unsupported_numbers(
            result.answer, [run.stdout, tables_json, ctx.question, json.dumps(trace.assumptions),
                            plan.decline_reason or "", " ".join(f.title for f in run.figures), ctx.previous_result])

    def _plan(self, ctx: TurnContext, env: str, budget: LMBudget, trace: Trace) -> dspy.Prediction:
        """The planner's plan; for ``@name question``, one step for that agent instead (no LM call).

        With an LM that :func:`plans_with_code`, the one-call planner also returns the code of a one-step plan
        (``code``), so such a question takes two round trips (plan and code, answer) instead of three.
        """
        agent, rest = addressed_agent(ctx.question)
        if agent is not None:
            step = PlanStep(agent=self.agents.agent(agent).name, instruction=rest, uses=[], creates=[])
            return dspy.Prediction(intent="analysis", standalone_question=rest, plan=[step], assumptions=[],
                                   decline_reason="")
        return self.call(budget, self.program.planner_for(with_code=self.one_call), trace, goal=ctx.question,
                         dataset_description=ctx.dataset_description, short_term_memory=ctx.short_term_memory,
                         user_context=ctx.user_context, environment=env, available_variables=ctx.variables,
                         known_fixes=ctx.known_fixes)

    def _other_intent(self, ctx: TurnContext, plan, result: Result, budget: LMBudget) -> None:
        """Questions that need no code: about earlier turns, about how to answer, or not about the data."""
        trace = result.trace
        if trace.intent == "memory_query" and ctx.memory is not None:
            history, hits = ctx.memory.history_for(ctx.question)
            out = self.call(budget, self.program.memory_answerer, trace, question=ctx.question, history=history)
            used = {str(u) for u in (getattr(out, "used_turns", None) or [])}
            # the trace points at the turns the answer quotes (all that were looked at when it names none);
            # remembered facts found for the question are always kept
            facts = [h for h in hits if h.kind == "fact"]
            quoted = [h for h in hits if h.kind != "fact" and h.id in used]
            trace.memory_hits += (facts + quoted) if quoted else hits
            result.status, result.answer, trace.source = "ok", out.answer, "memory"
            return
        if trace.intent == "config_change" and ctx.memory is not None:
            result.status, result.answer = "ok", ctx.memory.apply_profile(ctx.question)
            if plan.decline_reason:  # the message asked something beside the style that was not answered
                result.answer += "\n\nThe rest of your message was not answered: " + plan.decline_reason
            return
        result.status = "declined"
        result.answer = plan.decline_reason or {
            "new_data": "Load a file with `/load FILE` in chat, the upload button on the page, or session.load().",
            "qa": "I answer questions about the loaded data; ask for a statistic, a table or a chart of its columns.",
        }.get(trace.intent, "This message does not ask for an analysis of the data.")

    def _write_code(self, ctx, goal, env, steps, budget, trace, timings, emit) -> tuple[str, str]:
        """(the script, '') or, when no agent wrote code but some said why, ('', their reasons).

        The analysts write in parallel, each seeing the plan's earlier steps (their instructions and the typed
        variables they create). Their blocks are joined as they are when every name lines up; only otherwise
        does the combiner (an LM call) merge them.
        """
        t = time.perf_counter()
        n = len(steps)

        def one(k: int) -> dict:
            step = steps[k]
            emit(ProgressEvent(stage="agent", message=f"{step.agent} agent", step=k + 1, total=n))
            out = self.call(budget, self.program.analyst(step.agent), trace, goal=goal,
                            dataset_description=ctx.dataset_description, step=step,
                            short_term_memory=ctx.short_term_memory, available_variables=ctx.variables,
                            known_fixes=ctx.known_fixes, environment=env, earlier_steps=steps[:k])
            return {"agent": step.agent, "code": out.code, "summary": out.summary}

        if n == 1:
            written = [one(0)]
        else:  # each thread runs in a copy of this context, so DSPy's settings (an optimizer's trace) reach it
            with ThreadPoolExecutor(max_workers=min(4, n)) as pool:
                written = list(pool.map(lambda k: contextvars.copy_context().run(one, k), range(n)))
        blocks = [{"agent": b["agent"], "code": b["code"]} for b in written if b["code"].strip()]
        timings["agents"] = round(time.perf_counter() - t, 4)
        if not blocks:
            reasons = " ".join(dict.fromkeys(b["summary"].strip() for b in written if b["summary"].strip()))
            if reasons:
                return "", reasons  # an agent that writes no code and says why has declined its step
            raise ModelError("The agents wrote no code for this plan.")
        if len(blocks) == 1:
            return blocks[0]["code"], ""
        known = set(PRELOADED) | set(ctx.tables) | set(_names(ctx.variables)) | ({"con"} if ctx.duckdb_tables else set()) | ({"sql"} if ctx.sql_source else set())
        merged = merge_blocks([b["code"] for b in blocks], known)
        if merged.ok:
            return merged.script, ""
        t = time.perf_counter()
        emit(ProgressEvent(stage="combining", message="Combining the agents' code"))
        script = self.call(budget, self.program.combiner, trace, goal=goal, environment=env, blocks=blocks,
                           missing_names=merged.missing).script
        timings["combining"] = round(time.perf_counter() - t, 4)
        return script, ""

    def _run_and_fix(self, ctx: TurnContext, script: str, env: str, budget: LMBudget, result: Result, emit, cancel,
                     fixed: FixRecord) -> RunResult:
        timings = result.timings
        tried: set[str] = set()
        last_error = None
        run: RunResult | None = None
        memory_ids: list[str] = []
        for attempt in range(self.settings.max_fix_attempts + 1):
            if script.strip() in tried:
                break  # never re-run unchanged code
            tried.add(script.strip())
            t = time.perf_counter()
            emit(ProgressEvent(stage="running" if attempt == 0 else "fixing",
                               message="Running the script" if attempt == 0 else f"Running fix {attempt}",
                               step=attempt, total=self.settings.max_fix_attempts))
            run = self.sandbox.run(script, cancel=cancel)
            timings["running"] = round(timings.get("running", 0) + time.perf_counter() - t, 4)
            result.attempts.append(Attempt(code=script, error=run.error, memory_hits=memory_ids))
            result.code = script
            self._keep_run(result, run)
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
            if attempt == self.settings.max_fix_attempts:
                break
            t = time.perf_counter()
            emit(ProgressEvent(stage="fixing", message=f"Fixing attempt {attempt + 1} of {self.settings.max_fix_attempts}",
                               step=attempt + 1, total=self.settings.max_fix_attempts))
            fixes_text, memory_ids = ("", [])
            if ctx.memory is not None:
                fixes_text, memory_ids = ctx.memory.fixes_for_error(error_text)
                result.trace.memory_hits += [MemoryHit(kind="error_fix", id=i) for i in memory_ids
                                             if i not in {h.id for h in result.trace.memory_hits}]
            out = self.call(budget, self.program.fixer, result.trace, script=script, error=error_text,
                            dataset_description=ctx.dataset_description, environment=env,
                            remembered_fixes=fixes_text, goal=result.trace.standalone_question or ctx.question)
            timings["fixing"] = round(timings.get("fixing", 0) + time.perf_counter() - t, 4)
            fixed.notes.append(out.explanation or "")
            fixed.entries.append((out.error_summary, out.correction_summary))
            script = out.fixed_script or script
        assert run is not None
        return run


def plans_with_code(lm: Any) -> bool:
    """Whether questions asked with ``lm`` go to the one-call planner (plan and, for one step, its code).

    A capability of the LM, decided once per session: its ``plan_with_code`` attribute, True when it has none
    (a hosted model writes both in one reply). The embedded offline model and the replay of a transcript
    recorded before the one-call planner set it False and keep the planner → analyst route.
    """
    return bool(getattr(lm, "plan_with_code", True))


def _names(variables_json: str) -> list[str]:
    try:
        value = json.loads(variables_json or "{}")
    except ValueError:
        return []
    return list(value) if isinstance(value, (dict, list)) else []


def _result_names(code: str, steps: list[PlanStep], defined: list[str]) -> list[str]:
    """The variables later turns may build on: those the script showed or the plan created, if the script made them."""
    made = set(assigned_names(code)) & set(defined)
    wanted = shown_names(code) + [n for s in steps for n in s.creates]
    return [n for n in dict.fromkeys(wanted) if n in made][:8]
