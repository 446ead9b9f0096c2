"""What one question is asked with: the session's view of it for the pipeline (:class:`TurnContext`) and what the
pipeline asks of memory (:class:`MemoryPort`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol

from auto_analyst.results import ContextPart, MemoryHit

__all__ = ["MemoryPort", "TurnContext"]


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
