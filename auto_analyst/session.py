"""A session: one conversation over a set of tables, with its own worker process and short-term memory."""

from __future__ import annotations

import json
import re
import secrets
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable

import pandas as pd

from auto_analyst.data.description import DatasetDescription, describe_tables
from auto_analyst.data.load import LoadedTable, LoadReport, load_all, table_name
from auto_analyst.errors import BadInputError
from auto_analyst.results import ProgressEvent, Result

if TYPE_CHECKING:
    from auto_analyst.api import Analyst

__all__ = ["Session"]


class Session:
    """One conversation over a set of tables, with its own worker process and short-term memory."""

    def __init__(self, analyst: Analyst, user: str, session_id: str | None = None):
        self.analyst = analyst
        self.settings = analyst.settings
        self.user = user
        self.id = session_id or secrets.token_urlsafe(12)
        self.tables: dict[str, LoadedTable] = {}
        self.active: str = ""
        self.dir = self.settings.home / "sessions" / _safe(user) / self.id
        self._lock = threading.Lock()
        self._lm = None
        self._sandbox = None
        self._pipeline = None
        self.turn = 0
        self.results: list[Result] = []
        from auto_analyst.memory.short_term import ShortTermMemory

        self.memory = ShortTermMemory(max_turns=self.settings.short_term_turns)

    # ----------------------------------------------------------------- tables
    def load(self, path: str | Path, name: str | None = None, sheet: str | None = None, **options: Any) -> list[LoadedTable]:
        """Load a file (every sheet of a workbook) and make its (first) table the active one.

        Raises:
            DataLoadError: the file cannot be read as a table (the message says why and what to do).
        """
        loaded = load_all(path, **({"max_file_mb": self.settings.max_file_mb} | options)) if sheet is None else None
        if loaded is None:
            from auto_analyst.data.load import load

            loaded = [load(path, sheet=sheet, max_file_mb=self.settings.max_file_mb, **options)]
        for i, t in enumerate(loaded):
            if name:
                t.name = table_name(name) if i == 0 else f"{table_name(name)}_{i + 1}"
            t.name = self._unique(t.name)
            self._add(t)
        self.active = loaded[0].name
        return loaded

    def add_frame(self, name: str, frame: pd.DataFrame) -> LoadedTable:
        """Add an in-memory DataFrame as a table (it becomes the active one)."""
        t = LoadedTable(self._unique(table_name(name)), frame, LoadReport(path=f"<DataFrame {name}>"))
        self._add(t)
        self.active = t.name
        return t

    def _unique(self, name: str) -> str:
        base, k = name, 2
        while name in self.tables:
            name, k = f"{base}_{k}", k + 1
        return name

    def _add(self, t: LoadedTable) -> None:
        self.tables[t.name] = t
        self._description = None
        if self._sandbox is not None:
            self._push_tables()

    def use(self, name: str) -> None:
        """Make table ``name`` the active one (bound to ``df``)."""
        if name not in self.tables:
            raise BadInputError(f"No table {name!r}; tables: {', '.join(self.tables) or 'none loaded'}.")
        self.active = name
        self._description = None
        if self._sandbox is not None:
            self._sandbox.set_active(name)

    @property
    def description(self) -> DatasetDescription:
        """The compact dataset description the agents get (built once per change of tables)."""
        if getattr(self, "_description", None) is None:
            self._description = describe_tables(self.tables, self.active)
        return self._description

    # ---------------------------------------------------------------- running
    def _ensure_runtime(self):
        if self._pipeline is not None:
            return self._pipeline
        from auto_analyst.execution.sandbox import Sandbox
        from auto_analyst.llm.providers import build_lm, check_model
        from auto_analyst.pipeline import Pipeline

        if self.analyst._lm is not None:
            self._lm = self.analyst._lm
        else:
            if not self.analyst._api_key:
                check_model(self.settings)
            self._lm = build_lm(self.settings, self.analyst._api_key)
        self._sandbox = Sandbox(self.settings, self.dir / "work", self.dir / "figures")
        # the worker's warm-up (importing pandas, sklearn, plotly...) overlaps with ours (dspy, litellm)
        starter = threading.Thread(target=self._sandbox.start, daemon=True)
        starter.start()
        from auto_analyst.memory.tokens import count_tokens

        count_tokens("warm up")
        starter.join()
        self._push_tables()
        self._pipeline = Pipeline(self.settings, self._lm, self._sandbox)
        return self._pipeline

    def _push_tables(self) -> None:
        if not self.tables:
            return
        tdir = self.dir / "tables"
        tdir.mkdir(parents=True, exist_ok=True)
        paths = {}
        for name, t in self.tables.items():
            p = tdir / f"{name}.parquet"
            if p.exists() and getattr(t, "_pushed", None) != str(p):
                p.unlink()  # a file left by an earlier process for this session id may hold other data
            if not p.exists():
                _to_parquet(t.frame, p)
                t._pushed = str(p)
            paths[name] = p
        self._sandbox.load_tables(paths, self.active)

    def ask(self, question: str, on_progress: Callable[[ProgressEvent], None] | None = None,
            cancel: threading.Event | None = None) -> Result:
        """Answer ``question`` from the session's tables (see :class:`~auto_analyst.results.Result`).

        Model and code failures come back as ``status='error'`` with ``error`` set; this raises only
        for bad input.

        Raises:
            BadInputError: empty question, or no table loaded.
        """
        question = (question or "").strip()
        if not question:
            raise BadInputError("The question is empty; type what you want to know about the data.")
        if not self.tables:
            raise BadInputError("No table is loaded; load a CSV, Excel, Parquet or JSON file first.")
        with self._lock:
            from auto_analyst.pipeline import TurnContext

            pipeline = self._ensure_runtime()
            self.turn += 1
            desc = self.description.to_prompt()
            services = self.analyst.memory
            prepared = services.prepare(self, question, desc)
            ctx = TurnContext(question=question, dataset_description=desc, short_term_memory=prepared.short_term_memory,
                              user_context=prepared.user_context, style=prepared.style,
                              variables=json.dumps(self._sandbox.variables()), known_fixes=prepared.known_fixes,
                              memory=_SessionMemory(self))
            result = pipeline.ask(ctx, on_progress=on_progress, cancel=cancel)
            result.session_id, result.turn = self.id, self.turn
            result.trace.context = prepared.sizes
            skipped = [f"{n}: {line}" for n, t in self.tables.items() if hasattr(t.report, "summary_lines")
                       for line in t.report.summary_lines() if "skipped" in line and "rows" in line]
            if skipped and result.status == "ok" and result.trace.source == "ran_code":
                # rows the loader left out change totals: say so with every answer computed from the data
                note = "; ".join(skipped)
                result.answer += f"\n\nNote from loading: {note} (see `auto-analyst describe`)."
                result.trace.assumptions.append(note)
            result.trace.memory_hits = prepared.hits + [h for h in result.trace.memory_hits if h not in prepared.hits]
            self._remember(question, result)
            self.results.append(result)
            services.record(self, question, result)
            self.save_state()
            return result

    def run_code(self, code: str, question: str | None = None, cancel: threading.Event | None = None) -> Result:
        """Run a script the user wrote or edited (e.g. a corrected failing script) in the session's worker.

        The result has no answer text; ``stdout``, ``tables`` and ``figures`` hold what the script showed.
        """
        if not (code or "").strip():
            raise BadInputError("The script is empty.")
        with self._lock:
            self._ensure_runtime()
            run = self._sandbox.run(code, cancel=cancel)
            self.turn += 1
            from auto_analyst.results import Attempt

            result = Result(question=question or "(edited script)", status="ok" if run.ok else "error", code=code,
                            stdout=run.stdout, tables=run.tables, figures=run.figures, error=run.error,
                            attempts=[Attempt(code=code, error=run.error)], session_id=self.id, turn=self.turn)
            result.trace.source = "ran_code"
            result.answer = "The script ran." if run.ok else f"The script failed: {run.error.message}"
            failed = next((r for r in reversed(self.results) if r.attempts), None)
            if run.ok and failed is not None and failed.status == "error" and failed.attempts[-1].error is not None:
                self._store_human_fix(failed, code)
            self.results.append(result)
            self.analyst.memory.record(self, result.question, result)
            self.save_state()
            return result

    def _store_human_fix(self, failed: Result, code: str) -> None:
        """A correction the user made by hand to a failed script: remembered like a fix, marked human."""
        err = failed.attempts[-1].error
        summary = f"{err.kind}: {err.message}"
        correction = "Corrected by hand: " + "; ".join(
            ln.strip() for ln in code.splitlines() if ln.strip() and ln not in failed.code.splitlines())[:600]
        try:
            self.analyst.memory.remember_fix(self, failed.code, summary, code, "human", summary, correction, human=True)
        except Exception:  # noqa: BLE001 - the user's run stands even if the memory cannot be written
            pass

    def save_state(self) -> None:
        """Keep what ``chat --resume`` needs: table sources, short-term memory, turn counter."""
        state = {"tables": {n: {"path": t.report.path, "sheet": getattr(t.report, "sheet", None)}
                            for n, t in self.tables.items()}, "active": self.active,
                 "memory": self.memory.to_json(), "turn": self.turn}
        self.analyst.memory.history.save_session_state(self.user, self.id, state)

    @classmethod
    def resume(cls, analyst: "Analyst", user: str, session_id: str | None = None) -> "Session":
        """Reopen a saved session (the user's last one by default): its tables, short-term memory and turns.

        Raises:
            BadInputError: the user has no such (or no) saved session.
        """
        history = analyst.memory.history
        if session_id is None:
            last = history.last_session(user)
            if last is None:
                raise BadInputError("There is no earlier session to resume; start one with `auto-analyst chat FILE`.")
            session_id = last.session_id
        state = history.load_session_state(user, session_id)
        if not state:
            raise BadInputError(f"No saved session {session_id!r} for user {user!r}; see `auto-analyst history sessions`.")
        if isinstance(state, str):
            state = json.loads(state)
        s = cls(analyst, user, session_id)
        for name, source in state.get("tables", {}).items():
            path, sheet = (source, None) if isinstance(source, str) else (source["path"], source.get("sheet"))
            if Path(path).exists():
                s.load(path, name=name, sheet=sheet)  # one sheet of a workbook, not all of them again
        if state.get("active") in s.tables:
            s.active = state["active"]
        from auto_analyst.memory.short_term import ShortTermMemory

        if state.get("memory"):
            s.memory = ShortTermMemory.from_json(state["memory"])
        s.turn = int(state.get("turn", 0))
        with analyst._lock:
            analyst._sessions[s.id] = s
        return s

    def _remember(self, question: str, result: Result) -> None:
        from auto_analyst.memory.short_term import MemoryItem

        if result.status != "ok" or result.trace.source != "ran_code":
            return  # only analyses are built upon by follow-ups; other turns stay in the history
        summary = result.trace.summary or " ".join(result.answer.split())[:300]
        self.memory.add(MemoryItem(turn=self.turn, question=question,
                                   standalone_question=result.trace.standalone_question, summary=summary,
                                   answer=result.answer[:600], result_names=[t.name for t in result.tables][:8]))

    def reset_memory(self) -> None:
        """Forget the conversation so far (short-term memory); tables, history and the worker stay."""
        from auto_analyst.memory.short_term import ShortTermMemory

        self.memory = ShortTermMemory(max_turns=self.settings.short_term_turns)

    def close(self) -> None:
        """Stop the session's worker and delete its copies of the tables; tables and memory stay in this object.

        (The worker's Parquet copies are rebuilt from the sources on the next question or on resume.)
        """
        if self._sandbox is not None:
            self._sandbox.close()
            self._sandbox, self._pipeline = None, None
        import shutil

        shutil.rmtree(self.dir / "tables", ignore_errors=True)
        for t in self.tables.values():
            t._pushed = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


class _SessionMemory:
    """The pipeline's view of memory for one session (see ``pipeline.MemoryPort``)."""

    def __init__(self, session: Session):
        self.session, self.services = session, session.analyst.memory

    def fixes_for_error(self, error_text: str):
        return self.services.fixes_for_error(self.session.user, error_text)

    def history_for(self, question: str):
        return self.services.history_for(self.session.user, question)

    def apply_profile(self, instruction: str) -> str:
        from auto_analyst.memory.profile import render

        profile, changed = self.services.profiles.apply_instruction(self.session.user, instruction)
        if not changed:
            return ("I did not find a change of style in that; try 'answer more briefly', 'be more detailed' or "
                    "'explain like I'm new to statistics'.")
        return "Noted. From now on: " + render(profile)

    def remember_fix(self, bad_code, error, good_code, agent, summary, correction):
        return self.services.remember_fix(self.session, bad_code, error, good_code, agent, summary, correction)


def _safe(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]", "_", name)[:64] or "user"


def _to_parquet(frame: pd.DataFrame, path: Path) -> None:
    """Write a table for the worker; mixed-type object columns go as text (Parquet needs one type)."""
    out = frame.copy()
    out.columns = [str(c) for c in out.columns]
    try:
        out.to_parquet(path, index=False)
    except Exception:  # noqa: BLE001 - pyarrow rejects mixed object columns
        for c in out.columns:
            if out[c].dtype == object:
                out[c] = out[c].astype("string")
        out.to_parquet(path, index=False)
