"""The running part of a session: its LM, its sandbox worker with the tables loaded, and its pipeline.

Started on the first question (or script) of a session and stopped by :meth:`SessionRunner.close`;
the session's tables and memory outlive it.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pandas as pd

from auto_analyst.settle import Settler

if TYPE_CHECKING:
    from auto_analyst.data.load import LoadedTable
    from auto_analyst.pipeline import Pipeline
    from auto_analyst.runtime import Runtime

__all__ = ["SessionRunner"]


class SessionRunner:
    """One session's LM, sandbox and pipeline, made from the runtime's factories.

    Args:
        runtime: the Analyst's :class:`~auto_analyst.runtime.Runtime`.
        folder: the session's folder (``work/``, ``figures/`` and the worker's ``tables/`` copies go there).
    """

    def __init__(self, runtime: Runtime, folder: Path):
        self.runtime, self.folder = runtime, folder
        self.sandbox: Any = None
        self.pipeline: Pipeline | None = None
        self._pushed: dict[str, pd.DataFrame] = {}  # table name -> the frame whose Parquet copy the worker has
        self._in_worker: set[str] = set()
        self.sql_source: Any = None  # the session's database: scripts' sql() queries run here (auto_analyst/sql_runs.py)
        self.settler = Settler()  # the after-answer work of the session's questions, one at a time

    @property
    def started(self) -> bool:
        return self.pipeline is not None

    def start(self, tables: Mapping[str, LoadedTable], active: str) -> Pipeline:
        """Build the LM, start the worker (their warm-ups overlap), load the tables; returns the pipeline.

        Raises:
            ModelConfigError: the configured model cannot be used.
        """
        if self.pipeline is not None:
            return self.pipeline
        from auto_analyst.memory.context.tokens import count_tokens
        from auto_analyst.pipeline import Pipeline

        program = self.runtime.program  # a bad program setting fails before any process starts
        lm = self.runtime.new_lm()
        if self.runtime.settings.duckdb_min_mb:  # the worker binds this folder only if it exists when it starts
            from auto_analyst.execution.duckns import FOLDER

            (self.folder / FOLDER).mkdir(mode=0o700, parents=True, exist_ok=True)
        from auto_analyst.sql_runs import SqlSandbox

        # every run goes through SqlSandbox: with a database connected, its sql() queries run here first
        self.sandbox = SqlSandbox(self.runtime.new_sandbox(self.folder / "work", self.folder / "figures"), self.sql_source)
        # the worker's warm-up (importing pandas, sklearn, plotly...) overlaps with ours (dspy, litellm)
        failed: list[BaseException] = []

        def start() -> None:
            try:
                self.sandbox.start()
            except BaseException as exc:  # noqa: BLE001 - raised in the asking thread, not printed by this one
                failed.append(exc)

        starter = threading.Thread(target=start, name="aa-worker-start", daemon=True)
        starter.start()
        count_tokens("warm up")
        starter.join()
        if failed:
            raise failed[0]
        self.push_tables(tables, active)
        self.pipeline = Pipeline(self.runtime.settings, lm, self.sandbox, self.runtime.agents, program)
        return self.pipeline

    def push_tables(self, tables: Mapping[str, LoadedTable], active: str) -> None:
        """Give the worker the tables as Parquet files (written once per table); DuckDB tables as their database file."""
        if self.sandbox is None or not tables:
            return
        if hasattr(self.sandbox, "source"):
            self.sandbox.source = self.sql_source
        tdir = self.folder / "tables"
        tdir.mkdir(parents=True, exist_ok=True)
        paths = {}
        for name, t in tables.items():
            if getattr(t, "source", None) is not None:  # a database table stays there: scripts read it with sql()
                continue
            if getattr(t, "database", None) is not None:  # a DuckDB table: the worker reads its file in place
                paths[name] = t.database
                continue
            p = tdir / f"{name}.parquet"
            if self._pushed.get(name) is not t.frame:
                # (re)written whole and renamed into place: a file left by an earlier process may hold other
                # data, and with a queue another web process serving this session may be reading it
                _to_parquet(t.frame, p)
                self._pushed[name] = t.frame
            paths[name] = p
        self._in_worker = set(paths)
        if paths:  # df stays the first file table when the active table is in the database
            self.sandbox.load_tables(paths, active if active in paths else next(iter(paths)))

    def set_active(self, name: str) -> None:
        if self.sandbox is not None and name in self._in_worker:  # a database table is not in the worker
            self.sandbox.set_active(name)

    def settle(self) -> None:
        """Wait for the after-answer work (summaries, error-fix memory) of earlier questions."""
        self.settler.settle()

    def close(self) -> None:
        """Finish the after-answer work, stop the worker and delete its copies of the tables (rebuilt on the next start)."""
        self.settler.close()
        if self.sandbox is not None:
            self.sandbox.close()
        self.sandbox, self.pipeline = None, None
        import shutil

        if not self.runtime.settings.queue_url:  # with a queue, other processes' sessions may still use them
            shutil.rmtree(self.folder / "tables", ignore_errors=True)
        self._pushed.clear()


def _to_parquet(frame: pd.DataFrame, path: Path) -> None:
    """Write a table for the worker; mixed-type object columns go as text (Parquet needs one type)."""
    import os

    out = frame.copy()
    out.columns = [str(c) for c in out.columns]
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        out.to_parquet(tmp, index=False)
    except Exception:  # noqa: BLE001 - pyarrow rejects mixed object columns
        for c in out.columns:
            if out[c].dtype == object:
                out[c] = out[c].astype("string")
        out.to_parquet(tmp, index=False)
    os.replace(tmp, path)
