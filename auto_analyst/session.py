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
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pandas as pd

from auto_analyst.data.description import DatasetDescription, describe_tables
from auto_analyst.data.load import LoadedTable, LoadReport, load, load_all, table_name
from auto_analyst.errors import BadInputError
from auto_analyst.memory.scope import Scope
from auto_analyst.memory.short_term import MemoryItem, ShortTermMemory
from auto_analyst.question_text import addressed_agent
from auto_analyst.results import ProgressEvent, Result
from auto_analyst.session_runner import SessionRunner
from auto_analyst.session_state import saved_state, snapshot, table_sources

if TYPE_CHECKING:
    from auto_analyst.runtime import Runtime

__all__ = ["Session", "SessionDescription"]


@dataclass
class SessionDescription:
    """What :meth:`Session.describe` returns: the loaded tables (with their load reports) and the description.

    ``to_dict()`` is the JSON of ``auto-analyst describe --json`` (documented in docs/describe.md).
    """

    tables: list[LoadedTable]
    description: DatasetDescription

    def to_dict(self) -> dict[str, Any]:
        return {"tables": [{"name": t.name, "report": t.report.to_dict()} for t in self.tables],
                "description": self.description.model_dump(mode="json")}


class Session:
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
        self.id = session_id or secrets.token_urlsafe(12)
        self.tables: dict[str, LoadedTable] = {}
        self.active: str = ""
        self.dir = self.settings.home / "sessions" / _safe(user) / self.id
        self._lock = threading.Lock()
        self._runner = SessionRunner(runtime, self.dir)
        self._description: DatasetDescription | None = None
        self.turn = 0
        self.results: list[Result] = []
        self.memory = ShortTermMemory(max_turns=self.settings.short_term_turns)

    # ----------------------------------------------------------------- tables
    def load(self, path: str | Path, name: str | None = None, sheet: str | None = None, **options: Any) -> list[LoadedTable]:
        """Load a file (every sheet of a workbook) and make its (first) table the active one.

        Args:
            path: a CSV, TSV, Excel, Parquet or JSON file.
            name: the table name (default from the file name; a workbook's later sheets get ``_2``, ``_3``...).
            sheet: load only this sheet of a workbook.
            **options: the loader's options (encoding, delimiter, decimal, ..., ``max_file_mb``; see
                :func:`auto_analyst.data.load.load`).

        Raises:
            DataLoadError: the file cannot be read as a table (the message says why and what to do).
        """
        options = {"max_file_mb": self.settings.max_file_mb} | options
        loaded = load_all(path, **options) if sheet is None else [load(path, sheet=sheet, **options)]
        for i, t in enumerate(loaded):
            if name:
                t.name = table_name(name) if i == 0 else f"{table_name(name)}_{i + 1}"
            t.name = self._unique(t.name)
            self.tables[t.name] = t
        self._changed(loaded[0].name)
        return loaded

    def add_frame(self, name: str, frame: pd.DataFrame) -> LoadedTable:
        """Add an in-memory DataFrame as a table (it becomes the active one)."""
        t = LoadedTable(self._unique(table_name(name)), frame, LoadReport(path=f"<DataFrame {name}>"))
        self.tables[t.name] = t
        self._changed(t.name)
        return t

    def drop(self, name: str) -> None:
        """Remove table ``name`` (the next table becomes active if it was).

        Raises:
            BadInputError: no such table.
        """
        self._check_table(name)
        del self.tables[name]
        self._changed(self.active if self.active != name else next(iter(self.tables), ""))

    def _unique(self, name: str) -> str:
        base, k = name, 2
        while name in self.tables:
            name, k = f"{base}_{k}", k + 1
        return name

    def _changed(self, active: str) -> None:
        """The tables or the active one changed: a new description, and the running worker gets them."""
        self.active = active
        self._description = None
        self._runner.push_tables(self.tables, active)

    def _check_table(self, name: str) -> None:
        if name not in self.tables:
            raise BadInputError(f"No table {name!r}; tables: {', '.join(self.tables) or 'none loaded'}.")

    def use(self, name: str) -> None:
        """Make table ``name`` the active one (bound to ``df``).

        Raises:
            BadInputError: no such table.
        """
        self._check_table(name)
        self.active = name
        self._description = None
        self._runner.set_active(name)

    @property
    def description(self) -> DatasetDescription:
        """The compact dataset description the agents get (built once per change of tables)."""
        if self._description is None:
            self._description = describe_tables(self.tables, self.active)
        return self._description

    def describe(self) -> SessionDescription:
        """The loaded tables with their load reports, and the dataset description the agents get."""
        return SessionDescription(list(self.tables.values()), self.description)

    def _scope(self) -> Scope:
        return Scope(user=self.user, session_id=self.id, description=self.description if self.tables else None,
                     frames={n: t.frame for n, t in self.tables.items()},
                     sources=tuple(str(t.report.path) for t in self.tables.values() if getattr(t.report, "path", "")))

    # ---------------------------------------------------------------- running
    def ask(self, question: str, on_progress: Callable[[ProgressEvent], None] | None = None,
            cancel: threading.Event | None = None) -> Result:
        """Answer ``question`` from the session's tables (see :class:`~auto_analyst.results.Result`).

        A question starting with ``@name`` (a registered agent) goes to that agent directly, without the
        planner's choice. Model and code failures come back as ``status='error'`` with ``error`` set; this
        raises only for bad input.

        Raises:
            BadInputError: empty question, or no table loaded.
            NotFoundError: ``@name`` names no registered agent (close names are suggested).
        """
        question = (question or "").strip()
        if not question:
            raise BadInputError("The question is empty; type what you want to know about the data.")
        if not self.tables:
            raise BadInputError("No table is loaded; load a CSV, Excel, Parquet or JSON file first.")
        agent, _ = addressed_agent(question)
        if agent is not None:
            self.runtime.agents.agent(agent)
        with self._lock:
            from auto_analyst.pipeline import TurnContext

            pipeline = self._runner.start(self.tables, self.active)
            self.turn += 1
            desc = self.description.to_prompt()
            scope = self._scope()
            services = self.runtime.memory
            prepared = services.prepare(scope, question, desc, self.memory)
            ctx = TurnContext(question=question, dataset_description=desc, short_term_memory=prepared.short_term_memory,
                              user_context=prepared.user_context, style=prepared.style,
                              variables=json.dumps(self._runner.sandbox.variables()), known_fixes=prepared.known_fixes,
                              memory=services.port(scope), session_id=self.id, turn=self.turn,
                              context=prepared.sizes, memory_hits=prepared.hits, load_notes=self._load_notes())
            result = pipeline.ask(ctx, on_progress=on_progress, cancel=cancel)
            self._remember(question, result)
            self._keep(scope, result)
            return result

    def run_code(self, code: str, question: str | None = None, cancel: threading.Event | None = None) -> Result:
        """Run a script the user wrote or edited (e.g. a corrected failing script) in the session's worker.

        The result has no answer text; ``stdout``, ``tables`` and ``figures`` hold what the script showed.
        When it runs and the session's last analysis failed, the correction is remembered as a human fix.

        Raises:
            BadInputError: the script is empty.
        """
        if not (code or "").strip():
            raise BadInputError("The script is empty.")
        with self._lock:
            from auto_analyst.pipeline import TurnContext

            pipeline = self._runner.start(self.tables, self.active)
            self.turn += 1
            scope = self._scope()
            failed = next((r for r in reversed(self.results) if r.attempts), None)
            ctx = TurnContext(question=question or "(edited script)", dataset_description="",
                              memory=self.runtime.memory.port(scope), session_id=self.id, turn=self.turn)
            result = pipeline.run_script(ctx, code, failed=failed, cancel=cancel)
            self._keep(scope, result)
            return result

    def _keep(self, scope: Scope, result: Result) -> None:
        self.results.append(result)
        self.runtime.memory.record(scope, result.question, result)
        self.save_state()

    def _load_notes(self) -> list[str]:
        """Rows the loader left out (they change totals: every answer computed from the data says so)."""
        return [f"{n}: {line}" for n, t in self.tables.items() if hasattr(t.report, "summary_lines")
                for line in t.report.summary_lines() if "skipped" in line and "rows" in line]

    def _remember(self, question: str, result: Result) -> None:
        if result.status != "ok" or result.trace.source != "ran_code":
            return  # only analyses are built upon by follow-ups; other turns stay in the history
        summary = result.trace.summary or " ".join(result.answer.split())[:300]
        self.memory.add(MemoryItem(turn=self.turn, question=question,
                                   standalone_question=result.trace.standalone_question, summary=summary,
                                   answer=result.answer[:600], result_names=[t.name for t in result.tables][:8]))

    # ------------------------------------------------------------- persistence
    def save_state(self) -> None:
        """Keep what ``chat --resume`` needs: table sources, short-term memory, turn counter."""
        self.runtime.memory.save_state(Scope(self.user, self.id), snapshot(self.tables, self.active, self.memory,
                                                                           self.turn))

    @classmethod
    def resume(cls, runtime: Runtime, user: str, session_id: str | None = None) -> Session:
        """Reopen a saved session (the user's last one by default): its tables, short-term memory and turns.

        Tables whose source file is gone are left out.

        Raises:
            BadInputError: the user has no saved session.
            NotFoundError: the user has no saved session ``session_id``.
        """
        session_id, state = saved_state(runtime.memory, user, session_id)
        s = cls(runtime, user, session_id)
        for name, path, sheet in table_sources(state):
            if Path(path).exists():
                s.load(path, name=name, sheet=sheet)  # one sheet of a workbook, not all of them again
        if state.get("active") in s.tables:
            s.active = state["active"]
        if state.get("memory"):
            s.memory = ShortTermMemory.from_json(state["memory"])
        s.turn = int(state.get("turn", 0))
        return s

    def reset_memory(self) -> None:
        """Forget the conversation so far (short-term memory); tables, history and the worker stay."""
        self.memory = ShortTermMemory(max_turns=self.settings.short_term_turns)

    def close(self) -> None:
        """Stop the session's worker and delete its copies of the tables; tables and memory stay in this object.

        (The worker's Parquet copies are rebuilt from the tables on the next question or on resume.)
        """
        self._runner.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def _safe(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]", "_", name)[:64] or "user"
