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
from typing import Any, Callable

import dspy

from auto_analyst.agents.answer_format import lead_with_format
from auto_analyst.agents.environment import PRELOADED, script_environment
from auto_analyst.agents.merge import assigned_names, merge_blocks, shown_names
from auto_analyst.agents.modules import AGENT_VERSION
from auto_analyst.agents.program import Program
from auto_analyst.agents.registry import Registry
from auto_analyst.agents.run_view import tables_json as shown_tables
from auto_analyst.config import Settings
from auto_analyst.declines import sql_decline
from auto_analyst.errors import AutoAnalystError, CancelledError, ModelError
from auto_analyst.fix_loop import FixLoop, keep_run, run_and_fix
from auto_analyst.settle import AfterAnswer, Answered, FixRecord
from auto_analyst.llm.adapter import adapter_for
from auto_analyst.llm.capabilities import capabilities_of
from auto_analyst.llm.errors import model_error
from auto_analyst.llm.usage import LMBudget, call_usage
from auto_analyst.numbers_check import unsupported_numbers
from auto_analyst.question_text import addressed_agent
from auto_analyst.results import Attempt, ErrorInfo, PlanStep, ProgressEvent, Result, RunResult, Trace
from auto_analyst.run_errors import fixable, reported, script_error_sentence, user_sentence
from auto_analyst.turn_context import MemoryPort, TurnContext

__all__ = ["Pipeline", "TurnContext", "MemoryPort", "LMBudget", "plans_with_code"]

STDOUT_FOR_PROMPT = 6000


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
        # what the LM can do, read once: which planner it gets, which scripts of it are declined
        self.capabilities = capabilities_of(self.lm)
        self.one_call = self.capabilities.plans_with_code

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
        result.status, result.code, result.error = ("ok" if run.ok else "error"), code, reported(run.error)
        keep_run(result, run)
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
        declined = declined or sql_decline(self.capabilities, script, ctx.duckdb_tables, ctx.active,
                                           ctx.sql_source.get("tables", []))
        if declined:
            result.status, result.answer = "declined", declined
            return
        check_cancel()
        result.code = script
        trace.source = "ran_code"
        run = run_and_fix(FixLoop(self.sandbox, self.call, self.program.fixer, self.settings.max_fix_attempts),
                          ctx, script, env, budget, result, emit, cancel, fixed)
        if not run.ok:
            result.status = "error"
            result.error = reported(run.error)  # a kind of the one table; the run's own stays in the attempts
            result.answer = (user_sentence(run.error) if run.error and not fixable(run.error) else
                             script_error_sentence(run.error))
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


def plans_with_code(lm: Any) -> bool:
    """Whether questions asked with ``lm`` go to the one-call planner (``Capabilities.plans_with_code``)."""
    return capabilities_of(lm).plans_with_code


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
