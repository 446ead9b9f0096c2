"""A session: one conversation over a set of tables, with its own worker process and short-term memory.

A session is given a :class:`~auto_analyst.runtime.Runtime` (settings, memory services, agents,
LM and sandbox factories) and nothing else of the Analyst that opened it. Its running part (LM,
worker, pipeline) is a :class:`~auto_analyst.session_runner.SessionRunner`; what it keeps between
processes is in :mod:`auto_analyst.session_state`; the Result of a question is assembled by the
pipeline.
"""

from __future__ import annotations

import difflib
import json
import re
import secrets
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pandas as pd

from auto_analyst.data.catalog import describe_session, for_question
from auto_analyst.data.description import DatasetDescription
from auto_analyst.data.dictionary import DataDictionary, is_dictionary_file
from auto_analyst.data.duck import is_duck, load_duckdb, use_duckdb
from auto_analyst.data.sql_source import is_sql, is_sql_url
from auto_analyst.data.sql_url import unknown_url_scheme
from auto_analyst.data.load import LoadedTable, LoadReport, load, load_all, table_name
from auto_analyst.errors import BadInputError
from auto_analyst.memory.scope import Scope
from auto_analyst.memory.context.short_term import MemoryItem, ShortTermMemory
from auto_analyst.question_text import addressed_agent
from auto_analyst.results import ProgressEvent, Result, Usage
from auto_analyst.session_runner import SessionRunner
from auto_analyst.session_sources import SourceMethods
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


class Session(SourceMethods):
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
        self._state_lock = threading.Lock()  # the after-answer worker saves the state too
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

    # ----------------------------------------------------------------- tables
    def load(self, path: str | Path, name: str | None = None, sheet: str | None = None, **options: Any) -> list[LoadedTable]:
        """Load a file (every sheet of a workbook) and make its (first) table the active one.

        Tables are named by :func:`auto_analyst.data.load.table_name` (the names ``/tables``, ``describe``
        and the page show): ``sales.csv`` is ``sales``, the sheets of ``econ.xlsx`` are ``econ_macrodata`` and
        ``econ_fair`` (a workbook with one sheet of data is ``econ``). A name already taken gets ``_2``.

        Args:
            path: a CSV, TSV, Excel, Parquet or JSON file.
            name: the name instead of the file's (a workbook's sheets are then ``name_sheet``; with ``sheet``
                given, the table is ``name``).
            sheet: load only this sheet of a workbook.
            **options: the loader's options (encoding, delimiter, decimal, ..., ``max_file_mb``; see
                :func:`auto_analyst.data.load.load`).

        Raises:
            DataLoadError: the file cannot be read as a table (the message says why and what to do).
        """
        if is_sql_url(str(path)):
            return self.connect(str(path))
        unknown_url_scheme(str(path))
        from auto_analyst.data.parquet_folder import folder_database, is_parquet_folder

        if is_parquet_folder(path):  # read by DuckDB in place, as a database (docs/sources.md)
            return self.connect(folder_database(path, self.dir / "sources", name or table_name(Path(path).name,
                                                                                              base=Path(path).name)))
        if is_dictionary_file(path):
            self.load_dictionary(path)
            return []
        options = {"max_file_mb": self.settings.max_file_mb} | options
        if use_duckdb(path, self.settings):  # past duckdb_min_mb: into DuckDB, never into pandas (docs/scale.md)
            from auto_analyst.execution.duckns import FOLDER

            loaded = [load_duckdb(path, self.dir / FOLDER, self.settings, sheet=sheet, **options)]
        else:
            loaded = load_all(path, **options) if sheet is None else [load(path, sheet=sheet, **options)]
        with self._lock:  # a question running in another thread keeps the tables it started with
            for t in loaded:
                if name:
                    by_sheet = sheet is None and len(loaded) > 1
                    t.name = table_name(path, t.report.sheet if by_sheet else None, base=name)
                t.name = self._unique(t.name)
                self.tables[t.name] = t
            self._changed(loaded[0].name)
        return loaded

    def add_frame(self, name: str, frame: pd.DataFrame) -> LoadedTable:
        """Add an in-memory DataFrame as a table (it becomes the active one)."""
        with self._lock:
            t = LoadedTable(self._unique(table_name(name, base=name)), frame, LoadReport(path=f"<DataFrame {name}>"))
            self.tables[t.name] = t
            self._changed(t.name)
        return t

    def drop(self, name: str) -> None:
        """Remove table ``name`` (the next table becomes active if it was).

        Raises:
            BadInputError: no such table, or ``name`` fits several (see :meth:`find_table`).
        """
        with self._lock:
            name = self.find_table(name)
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

    def find_table(self, text: str) -> str:
        """The table ``text`` names: its name, a sheet's name, or an unambiguous start of a name.

        ``econ_fair`` is found by ``econ_fair``, ``Econ Fair``, ``fair`` (its sheet) or ``econ_f``; a close
        misspelling is suggested, never picked.

        Raises:
            BadInputError: no table fits (close names are suggested), or several fit (they are listed).
        """
        text = (text or "").strip()
        if text in self.tables:
            return text
        key = table_name(text, base=text) if text else ""
        if key in self.tables:
            return key
        fits = [n for n, t in self.tables.items() if getattr(t.report, "sheet", None) is not None
                and table_name(text, base=t.report.sheet) == key]
        if not fits and key:
            fits = [n for n in self.tables if n.startswith(key)]
        if len(fits) == 1:
            return fits[0]
        names = ", ".join(self.tables) or "none loaded"
        if fits:
            raise BadInputError(f"{text!r} fits several tables ({', '.join(fits)}); type more of the name.")
        spoken = {n: n for n in self.tables} | {  # what a user may type for a table: its name or its sheet's
            table_name(n, base=t.report.sheet): n for n, t in self.tables.items()
            if getattr(t.report, "sheet", None) is not None}
        close = list(dict.fromkeys(spoken[c] for c in difflib.get_close_matches(key, list(spoken), n=3, cutoff=0.6)))
        hint = f" Did you mean {' or '.join(map(repr, close))}?" if close else ""
        raise BadInputError(f"No table {text!r}.{hint} Tables: {names}.")

    def use(self, name: str) -> str:
        """Make a table the active one (bound to ``df``); the next question is planned against it.

        Args:
            name: the table's name, its sheet's name or an unambiguous start of it (see :meth:`find_table`).

        Returns:
            The name of the table now active.

        Raises:
            BadInputError: no such table, or ``name`` fits several.
        """
        with self._lock:  # not in the middle of a question: it keeps the table it started with
            name = self.find_table(name)
            self.active = name
            self._description = None
            self._runner.set_active(name)
        return name

    @property
    def description(self) -> DatasetDescription:
        """The compact dataset description the agents get (built once per change of tables)."""
        if self._description is None:
            self._description = describe_session(self.tables, self.active, self.dictionary)
        return self._description

    def describe(self) -> SessionDescription:
        """The loaded tables with their load reports, and the dataset description the agents get."""
        return SessionDescription(list(self.tables.values()), self.description)

    def _scope(self) -> Scope:
        return Scope(user=self.user, session_id=self.id, description=self.description if self.tables else None,
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
                              context=prepared.sizes, memory_hits=prepared.hits, load_notes=self._load_notes(),
                              after=lambda r, usage, tables=list(self.tables), active=self.active: self._after_turn(
                                  question, r, usage, self._tables_read(r, tables, active)))
            result = pipeline.ask(ctx, on_progress=on_progress, cancel=cancel)
            result.timings["waited"] = round(max(time.time() - asked_at, 0.0), 3)
            self._keep(scope, result)
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

    def _after_turn(self, question: str, result: Result, usage: Usage, tables: list[str]) -> None:
        """Runs in the after-answer worker once the turn's summaries are written (see ``pipeline.TurnContext``);
        ``tables`` are the tables the turn read, found when it was answered."""
        self.usage = self.usage + usage
        if (result.status == "declined" and result.trace.intent == "analysis") or \
                (result.status == "ok" and result.trace.source == "memory"):
            # kept as no analysis to build on: a follow-up of it ('same for Basic') must not be read as a follow-up
            # of the turn before it
            self.memory.add(MemoryItem.declined(question, result))
            self.save_state()
            return
        if result.status != "ok" or result.trace.source != "ran_code":
            return  # only analyses are built upon by follow-ups; other turns stay in the history
        self.memory.add(MemoryItem.from_result(question, result, tables=tables))
        self.save_state()

    @staticmethod
    def _tables_read(result: Result, tables: list[str], active: str) -> list[str]:
        """The tables a turn read: those its script names (``df`` is ``active``), else those its plan's steps
        name, else ``active`` (``tables`` and ``active`` as they were when it was asked)."""
        from auto_analyst.sql_runs import tables_in_queries

        names = _names_read(result.code) | tables_in_queries(result.code)  # a database table is read in sql()
        read = [n for n in tables if n in names]
        if "df" in names and active and active not in read:
            read.append(active)
        read = read or [u for step in result.plan for u in step.uses if u in tables]
        return list(dict.fromkeys(read)) or ([active] if active else [])

    # ------------------------------------------------------------- persistence
    def save_state(self) -> None:
        """Keep what ``chat --resume`` needs: table sources, short-term memory, turn counter."""
        with self._state_lock:  # snapshot and write as one, so the last write holds the newest memory
            state = snapshot(self.tables, self.active, self.memory, self.turn)
            if getattr(self, "dictionary_paths", None):
                state["dictionaries"] = list(self.dictionary_paths)
            self.runtime.memory.save_state(Scope(self.user, self.id), state)

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
            if not is_sql_url(path) and Path(path).exists():
                s.load(path, name=name, sheet=sheet)  # one sheet of a workbook, not all of them again
        s.reconnect(state)
        if state.get("active") in s.tables:
            s.active = state["active"]
        if state.get("memory"):
            s.memory = ShortTermMemory.from_json(state["memory"])
        s.turn = int(state.get("turn", 0))
        return s

    def reset_memory(self) -> None:
        """Forget the conversation so far (short-term memory); tables, history and the worker stay."""
        self.settle()
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


def _names_read(code: str) -> set[str]:
    """The variable names a script reads, and the keys of ``tables[...]`` / ``tables.get(...)`` (the worker binds
    every table to a variable of its name, to ``tables[name]`` and the active one to ``df``)."""
    import ast

    try:
        tree = ast.parse(code or "")
    except SyntaxError:
        return set()
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            out.add(node.id)
        elif isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name) and node.value.id == "tables" \
                and isinstance(node.slice, ast.Constant) and isinstance(node.slice.value, str):
            out.add(node.slice.value)
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "get" \
                and isinstance(node.func.value, ast.Name) and node.func.value.id == "tables" and node.args \
                and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str):
            out.add(node.args[0].value)
    return out


def _safe(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]", "_", name)[:64] or "user"
