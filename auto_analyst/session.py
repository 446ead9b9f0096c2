"""A session: one conversation over a set of tables, with its own worker process and short-term memory.

A session is given a :class:`~auto_analyst.runtime.Runtime` (settings, memory services, agents,
LM and sandbox factories) and nothing else of the Analyst that opened it. Its running part (LM,
worker, pipeline) is a :class:`~auto_analyst.session_runner.SessionRunner`; what it keeps between
processes is in :mod:`auto_analyst.session_state`; the Result of a question is assembled by the
pipeline.
"""

from __future__ import annotations

import json
import re
import secrets
import threading
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

from auto_analyst.agents.merge import names_read
from auto_analyst.data.catalog import for_question
from auto_analyst.data.description import DatasetDescription
from auto_analyst.data.dictionary import DataDictionary
from auto_analyst.data.duck import is_duck
from auto_analyst.data.load import LoadedTable
from auto_analyst.data.sql_source import is_sql, is_sql_url
from auto_analyst.errors import BadInputError
from auto_analyst.memory.scope import Scope
from auto_analyst.memory.context.short_term import MemoryItem, ShortTermMemory
from auto_analyst.question_text import addressed_agent
from auto_analyst.results import ProgressEvent, Result, Usage
from auto_analyst.saved_sessions import stored_results
from auto_analyst.session_runner import SessionRunner
from auto_analyst.session_sources import SourceMethods
from auto_analyst.session_state import saved_state, sheet_named, snapshot, table_sources
from auto_analyst.session_tables import SessionDescription, TableMethods
from auto_analyst.settle import Settled

if TYPE_CHECKING:
    from auto_analyst.config import Settings
    from auto_analyst.runtime import Runtime

__all__ = ["Session", "SessionDescription", "session_folder"]


class Session(TableMethods, SourceMethods):
    """One conversation over a set of tables, with its own worker process and short-term memory.

    Args:
        runtime: what the session runs with (see :class:`~auto_analyst.runtime.Runtime`).
        user: the user id the session's memory belongs to.
        session_id: the id (a new random one when None).
    """

    def __init__(self, runtime: Runtime, user: str, session_id: str | None = None):
        self.runtime = runtime
        self.settings = runtime.settings
        self.user = user
        self.owner: str | None = None
        """The account id this session writes for (set by the team server): every stored write (turns, state,
        uploads, facts, profile) is made only while the account ``user`` still has this id
        (``storage.owners``), so a removed account's running question leaves nothing under its name."""
        self.store_cancelled = True
        """Store a cancelled turn (as cancelled) in the history: the command line's Ctrl-C does; the team server
        turns it off, since its cancels come from a user who stopped the question or from the account's removal."""
        self.id = session_id or secrets.token_urlsafe(12)
        self.tables: dict[str, LoadedTable] = {}
        self.active: str = ""
        self.dir = session_folder(self.settings, user, self.id)
        self._lock = threading.Lock()
        self._state_lock = threading.Lock()  # the after-answer worker saves the state too
        self._saved_state = ""  # the state this object last stored (JSON), for save_state(only_changed=True)
        self._runner = SessionRunner(runtime, self.dir)
        self._description: DatasetDescription | None = None
        self.dictionary: DataDictionary | None = None
        """The data dictionary loaded beside the tables (``.md``/``.txt``), if any (docs/sources.md)."""
        self.source: Any = None
        """The SQL database connected (:meth:`connect`), if any: a ``data.sql_source.SqlSource``."""
        self.turn = 0
        self.results: list[Result] = []
        self.memory = ShortTermMemory(max_turns=self.settings.short_term_turns)
        self.usage = Usage()
        """LM calls, tokens and cost of every question of this session so far, their after-answer summaries
        included (complete after :meth:`settle`)."""
        self.settled: list[Settled] = []
        """The after-answer outcome of each question (its summary, whole usage, error-fix entry), in order;
        complete after :meth:`settle`."""

    # ----------------------------------------------------------------- tables
    def _scope(self) -> Scope:
        return Scope(user=self.user, session_id=self.id, owner=self.owner, description=self.description if self.tables else None,
                     frames={n: t.frame.sample() if is_duck(t) or is_sql(t) else t.frame for n, t in self.tables.items()},
                     sources=tuple(str(t.report.path) for t in self.tables.values() if getattr(t.report, "path", "")),
                     paths={n: str(t.report.path) for n, t in self.tables.items() if getattr(t.report, "path", "")})

    # ---------------------------------------------------------------- running
    def ask(self, question: str, on_progress: Callable[[ProgressEvent], None] | None = None,
            cancel: threading.Event | None = None, asked_at: float | None = None) -> Result:
        """Answer ``question`` from the session's tables (see :class:`~auto_analyst.results.Result`).

        The question is planned against the active table (the others are named in the description); the
        short-term memory says which table each earlier turn read, so only a follow-up builds on that one.
        A question starting with ``@name`` (a registered agent) goes to that agent directly, without the
        planner's choice. Model and code failures come back as ``status='error'`` with ``error`` set; this
        raises only for bad input.

        Args:
            question: the user's words.
            on_progress: called with each :class:`~auto_analyst.results.ProgressEvent`.
            cancel: set it to stop the run.
            asked_at: when the user asked (``time.time()``, e.g. a web request's receipt); default the call.
                ``timings["waited"]`` of the Result is the seconds from then to the answer: what the user
                waited, the worker's start and the wait for a running question included.

        Raises:
            BadInputError: empty question, or no table loaded.
            NotFoundError: ``@name`` names no registered agent (close names are suggested).
        """
        asked_at = time.time() if asked_at is None else asked_at
        question = (question or "").strip()
        if not question:
            raise BadInputError("The question is empty; type what you want to know about the data.")
        if not self.tables:
            raise BadInputError("No table is loaded; load a CSV, Excel, Parquet or JSON file, or connect a database, first.")
        agent, _ = addressed_agent(question)
        if agent is not None:
            self.runtime.agents.agent(agent)
        if on_progress is not None:  # starting the worker and reading memory take seconds before planning starts
            on_progress(ProgressEvent(stage="preparing", message="Preparing the worker and memory"))
        with self._lock:
            from auto_analyst.pipeline import TurnContext

            pipeline = self._runner.start(self.tables, self.active)
            self._runner.settle()  # the previous question's summaries complete this one's memory
            self.turn += 1
            desc = for_question(self.description, question, self.dictionary).to_prompt()
            scope = self._scope()
            services = self.runtime.memory
            prepared = services.prepare(scope, question, desc, self.memory)
            ctx = TurnContext(question=question, dataset_description=desc, short_term_memory=prepared.short_term_memory,
                              user_context=prepared.user_context, style=prepared.style,
                              variables=json.dumps(self._result_variables()), known_fixes=prepared.known_fixes,
                              tables=list(self.tables), active=self.active, previous_result=prepared.previous_result,
                              duckdb_tables=[n for n, t in self.tables.items() if is_duck(t)],
                              sql_source=self.description.source,
                              memory=services.port(scope), session_id=self.id, turn=self.turn,
                              context=prepared.sizes, memory_hits=prepared.hits, load_notes=self._load_notes())
            result, after = pipeline.ask(ctx, on_progress=on_progress, cancel=cancel)
            read = self._tables_read(result, list(self.tables), self.active)
            self._runner.settler.submit(after, partial(self._after_turn, result, read))  # it only reads the Result
            result.timings["waited"] = round(max(time.time() - asked_at, 0.0), 3)
            self._keep(scope, result, cancelled=cancel is not None and cancel.is_set())
            return result

    def settle(self) -> None:
        """Wait until the after-answer work of earlier questions (summaries, error-fix memory) is done.

        :meth:`ask` does this itself before planning; call it to read ``memory`` or ``usage`` complete.
        """
        self._runner.settle()

    def _result_variables(self) -> dict[str, str]:
        """Variables of earlier turns that later code may use (their result names), with their types."""
        names = {n for item in self.memory.items for n in item.result_names}
        if not names:
            return {}
        return {k: v for k, v in self._runner.sandbox.variables().items() if k in names}

    def run_code(self, code: str, question: str | None = None, cancel: threading.Event | None = None,
                 asked_at: float | None = None) -> Result:
        """Run a script the user wrote or edited (e.g. a corrected failing script) in the session's worker.

        The result has no answer text; ``stdout``, ``tables`` and ``figures`` hold what the script showed.
        When it runs and the session's last analysis failed, the correction is remembered as a human fix.
        ``asked_at`` is as in :meth:`ask` (``timings["waited"]``).

        Raises:
            BadInputError: the script is empty.
        """
        asked_at = time.time() if asked_at is None else asked_at
        if not (code or "").strip():
            raise BadInputError("The script is empty.")
        with self._lock:
            from auto_analyst.pipeline import TurnContext

            pipeline = self._runner.start(self.tables, self.active)
            self._runner.settle()
            self.turn += 1
            scope = self._scope()
            failed = next((r for r in reversed(self.results) if r.attempts), None)
            ctx = TurnContext(question=question or "(edited script)", dataset_description="",
                              memory=self.runtime.memory.port(scope), session_id=self.id, turn=self.turn)
            result = pipeline.run_script(ctx, code, failed=failed, cancel=cancel)
            result.timings["waited"] = round(max(time.time() - asked_at, 0.0), 3)
            self._keep(scope, result, cancelled=cancel is not None and cancel.is_set())
            return result

    def _keep(self, scope: Scope, result: Result, cancelled: bool = False) -> None:
        """Seal the Result (it is final once returned), keep it in the session and store it in the history;
        a cancelled turn is kept in this object only unless ``store_cancelled``."""
        self.results.append(result.seal())
        if cancelled and not self.store_cancelled:
            return
        with self._state_lock:  # the state goes with the turn, in its write (as save_state: snapshot and write as one)
            state = self._state_json()
            if self.runtime.memory.record(scope, result.question, result, state=state):
                self._saved_state = state

    def _load_notes(self) -> list[str]:
        """Rows the loader left out (they change totals: every answer computed from the data says so)."""
        return [f"{n}: {line}" for n, t in self.tables.items() if hasattr(t.report, "summary_lines")
                for line in t.report.summary_lines() if "skipped" in line and "rows" in line]

    def _after_turn(self, result: Result, tables: list[str], settled: Settled) -> None:
        """Records a turn's after-answer outcome (run by the session's ``settle.Settler`` worker): the session's
        usage, and the turn in short-term memory with its summary. ``tables`` are the tables the turn read, found
        when it was answered. The Result is not changed."""
        question = result.question
        self.settled.append(settled)
        self.usage = self.usage + settled.usage
        if (result.status in ("declined", "error") and result.trace.intent == "analysis") or \
                (result.status == "ok" and result.trace.source == "memory"):
            # kept as no analysis to build on (declined, or stopped by an error): a follow-up of it ('same for Basic')
            # must not be read as a follow-up of the turn before it
            self.memory.add(MemoryItem.declined(question, result))
            self.save_state(only_changed=True)  # the web server's note of activity may have stored it already
            return
        if result.status != "ok" or result.trace.source != "ran_code":
            return  # only analyses are built upon by follow-ups; other turns stay in the history
        if settled.summary != result.trace.summary:  # the summarizer's, on a copy: the Result stays as returned
            result = result.model_copy(update={"trace": result.trace.model_copy(update={"summary": settled.summary})})
        self.memory.add(MemoryItem.from_result(question, result, tables=tables))
        self.save_state(only_changed=True)

    @staticmethod
    def _tables_read(result: Result, tables: list[str], active: str) -> list[str]:
        """The tables a turn read: those its script names (``df`` is ``active``), else those its plan's steps
        name, else ``active`` (``tables`` and ``active`` as they were when it was asked)."""
        from auto_analyst.sql_runs import tables_in_queries

        names = names_read(result.code) | tables_in_queries(result.code)  # a database table is read in sql()
        read = [n for n in tables if n in names]
        if "df" in names and active and active not in read:
            read.append(active)
        read = read or [u for step in result.plan for u in step.uses if u in tables]
        return list(dict.fromkeys(read)) or ([active] if active else [])

    # ------------------------------------------------------------- persistence
    def save_state(self, only_changed: bool = False) -> None:
        """Keep what ``chat --resume`` needs: table sources, short-term memory, turn counter.

        With ``only_changed``, nothing is written when the state is the one this object stored last (the web
        server notes activity after every job, and a question has stored its state already)."""
        with self._state_lock:  # snapshot and write as one, so the last write holds the newest memory
            text = self._state_json()
            if only_changed and text == self._saved_state:
                return
            if self.runtime.memory.save_state(Scope(self.user, self.id, owner=self.owner), text):
                self._saved_state = text

    def _state_json(self) -> str:
        state = snapshot(self.tables, self.active, self.memory, self.turn)
        if getattr(self, "dictionary_paths", None):
            state["dictionaries"] = list(self.dictionary_paths)
        return json.dumps(state, default=str)

    @classmethod
    def resume(cls, runtime: Runtime, user: str, session_id: str | None = None) -> Session:
        """Reopen a saved session (the user's last one by default): its tables, short-term memory, turn counter and
        the Results of its stored turns (``results``).

        Tables whose source file is gone are left out.

        Raises:
            BadInputError: the user has no saved session.
            NotFoundError: the user has no saved session ``session_id``.
        """
        session_id, state = saved_state(runtime.memory, user, session_id)
        s = cls(runtime, user, session_id)
        for name, path, sheet in table_sources(state):
            if not is_sql_url(path) and Path(path).exists():
                # one sheet of a workbook, not all of them again (also for a state saved without the sheets)
                s.load(path, name=name, sheet=sheet or sheet_named(path, name))
        s.reconnect(state)
        if state.get("active") in s.tables:
            s.active = state["active"]
        if state.get("memory"):
            s.memory = ShortTermMemory.from_json(state["memory"])
        s.turn = int(state.get("turn", 0))
        s.restore_results()
        return s

    def restore_results(self) -> None:
        """Take the Results of the session's stored turns as ``results`` (when it has none yet), and move the turn
        counter past them."""
        stored = stored_results(self.runtime.memory.history, self.user, self.id)
        if not self.results:
            self.results.extend(r.seal() for r in stored)
        self.turn = max([self.turn] + [r.turn for r in stored])

    def reset_memory(self) -> None:
        """Forget the conversation so far (short-term memory); tables, history and the worker stay."""
        self.settle()
        self.memory = ShortTermMemory(max_turns=self.settings.short_term_turns)

    def question_cost(self) -> Any:
        """The most one question of this session can spend on its model, known before it runs: a
        :class:`~auto_analyst.llm.cost_bound.QuestionCost` (``free`` for the offline model; ``usd`` None when the
        model has no price). The team server holds it against a user's daily cap (docs/team.md).

        Raises:
            ModelConfigError: the configured model cannot be used (no key, unknown model string).
        """
        return self.runtime.question_cost()

    def close(self) -> None:
        """Stop the session's worker and delete its copies of the tables; tables and memory stay in this object.

        (The worker's Parquet copies are rebuilt from the tables on the next question or on resume.)
        """
        self._runner.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def session_folder(settings: Settings, user: str, session_id: str) -> Path:
    """The folder of ``user``'s session ``session_id`` (the worker's tables and scripts, the figures).

    Raises:
        BadInputError: ``session_id`` is not of a session id's form ('..' would name every user's sessions).
    """
    from auto_analyst.saved_sessions import checked_session_id

    return settings.home / "sessions" / _safe(user) / checked_session_id(session_id)


def _safe(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]", "_", name)[:64] or "user"
