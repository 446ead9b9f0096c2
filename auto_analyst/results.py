"""Typed results: what one question returns, and the pieces it is made of.

These pydantic models are the wire format everywhere: the CLI prints ``Result.model_dump_json()``,
the web page renders the same JSON, and the history database stores it.
"""

from __future__ import annotations

import math
from typing import Any, Literal

from pydantic import BaseModel, Field, PrivateAttr

__all__ = [
    "PlanStep",
    "ErrorInfo",
    "TableOut",
    "display_cell",
    "display_rows",
    "FigureOut",
    "Attempt",
    "Usage",
    "ContextPart",
    "MemoryHit",
    "Trace",
    "Result",
    "RunResult",
    "ProgressEvent",
]

class PlanStep(BaseModel):
    """One step of a plan: which analyst does what, reading and creating which variables."""

    # the docstring and the field descriptions are prompt text (the planner sees this model's schema);
    # ``agent`` is any registered analyst's name: Registry.planner_signature narrows it to those names
    agent: str = Field(description="The analyst that writes this step's code.")
    instruction: str = Field(description="What this analyst must do, in one or two sentences.")
    uses: list[str] = Field(default_factory=list, description="Variables the step reads: tables and earlier results, by "
                            "variable name (not columns).")
    creates: list[str] = Field(default_factory=list, description="Variables the step creates for later steps (names "
                               "only); a table it changes in place is listed too.")
    types: dict[str, str] = Field(default_factory=dict, description="The type of each created variable, e.g. "
                                  "'DataFrame[region, revenue]', 'Series', 'float', 'plotly figure'.")


class ErrorInfo(BaseModel):
    """An error: ``kind`` is machine-readable, ``message`` is for people. A Result's own ``error.kind`` is one of
    ``errors.ERROR_KINDS`` (``internal``, ``model``, ...); a run's (``RunResult``, ``Attempt``) is the script's
    exception class or a limit (``KeyError``, ``timeout``), see ``run_errors.reported``."""

    kind: str
    message: str


class TableOut(BaseModel):
    """A table a script showed: at most ``max_table_rows`` rows are kept; ``n_rows`` is the full count."""

    name: str
    columns: list[str]
    rows: list[list[Any]]
    n_rows: int


EXACT_INTEGERS = 1e18
"""Below this magnitude an integral float is written as the integer it is (a 16-digit identifier read into a float
column, 1234567890123456.0, is 1234567890123456); above it Python's shortest round-trip form (``1e+20``) is as exact
and shorter."""


def display_cell(value: Any) -> Any:
    """A table cell as a person is shown it in a file (the CSV download): an integral float as the integer it is,
    every digit kept (1234567890123456.0 writes 1234567890123456, never 1234567890123460.0); another float with at most
    15 significant digits, which drops binary noise (0.1 + 0.2 = 0.30000000000000004 shows as 0.3) and keeps every
    digit a double holds for sure (C's DBL_DIG is 15), unless those 15 digits would make it integral (it keeps its
    shortest round-trip form, Python's ``repr``, the digits numpy's ``format_float_positional(unique=True)`` gives);
    anything else as it is. :func:`display_rows` keeps distinct values of a column distinct. The Result keeps the
    computed value.

    Example:
        >>> display_cell(0.1 + 0.2), display_cell(2 / 3), display_cell(1234567890123456.0), display_cell("0.1")
        (0.3, 0.666666666666667, 1234567890123456, '0.1')
    """
    if isinstance(value, float) and math.isfinite(value):
        if value.is_integer():
            return int(value) if abs(value) < EXACT_INTEGERS else value
        short = float(f"{value:.15g}")
        return value if short.is_integer() else short
    return value


def display_rows(rows: list[list[Any]]) -> list[list[Any]]:
    """``rows`` as :func:`display_cell` shows them, except a column in which two distinct floats would show the same
    (0.30000000000000004 beside 0.3): that column keeps each float's shortest round-trip form, so a file never makes
    two values of a column equal that the Result holds apart.

    Example:
        >>> display_rows([[0.1 + 0.2, 2.0], [0.3, 1 / 3]])
        [[0.30000000000000004, 2], [0.3, 0.333333333333333]]
    """
    width = max((len(r) for r in rows), default=0)
    merged = set()
    for j in range(width):
        floats = {r[j] for r in rows if j < len(r) and isinstance(r[j], float) and math.isfinite(r[j])}
        if len({display_cell(v) for v in floats}) < len(floats):
            merged.add(j)
    return [[v if j in merged and not (isinstance(v, float) and v.is_integer()) else display_cell(v)
             for j, v in enumerate(r)] for r in rows]


class FigureOut(BaseModel):
    """A chart a script made: plotly JSON or a PNG file, saved under the session's figure folder."""

    kind: Literal["plotly", "png"]
    path: str
    title: str = ""


class Attempt(BaseModel):
    """One run of a script (the first run or a fix); ``error`` is None when it ran cleanly."""

    code: str
    error: ErrorInfo | None = None
    memory_hits: list[str] = Field(default_factory=list, description="Error-fix memory entry ids the fix used.")


class Usage(BaseModel):
    """LM calls, tokens and estimated cost of one question (or, summed, of a session).

    Tokens are as the model reported them. ``cost_usd`` is estimated from LiteLLM's price list (its
    offline copy) for ``settings.cost_model`` or ``settings.model``; it is 0 for the embedded offline
    model and None when the model has no price there (see docs/models.md).
    """

    lm_calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cached_prompt_tokens: int = Field(default=0, description="Of prompt_tokens, those the provider served from its "
                                      "prompt cache (a repeated prefix), when it reports them; 0 otherwise.")
    cost_usd: float | None = 0.0

    @property
    def cached_share(self) -> float | None:
        """cached_prompt_tokens / prompt_tokens (None without prompt tokens)."""
        return round(self.cached_prompt_tokens / self.prompt_tokens, 4) if self.prompt_tokens else None

    def __add__(self, other: "Usage") -> "Usage":
        cost = None if self.cost_usd is None or other.cost_usd is None else round(self.cost_usd + other.cost_usd, 8)
        return Usage(lm_calls=self.lm_calls + other.lm_calls, prompt_tokens=self.prompt_tokens + other.prompt_tokens,
                     completion_tokens=self.completion_tokens + other.completion_tokens,
                     cached_prompt_tokens=self.cached_prompt_tokens + other.cached_prompt_tokens, cost_usd=cost)


class ContextPart(BaseModel):
    """One part of the prompt context (e.g. dataset, short_term_memory) and its size in tokens."""

    part: str
    tokens: int


class MemoryHit(BaseModel):
    """A memory item used for an answer: kind is history | error_fix | entity | short_term | fact (a remembered
    finding: ``id`` is the fact id, ``detail`` the fact as a line)."""

    kind: str
    id: str
    detail: str = ""


class _Sealable(BaseModel):
    """A model made read-only once it is handed out (:meth:`Result.seal`): assigning a field then raises TypeError.

    A copy (``model_copy``) can be changed again: what was handed out stays as it was.
    """

    _sealed: bool = PrivateAttr(default=False)

    def __setattr__(self, name: str, value: Any) -> None:
        if not name.startswith("_") and (self.__pydantic_private__ or {}).get("_sealed"):
            raise TypeError(f"This {type(self).__name__} was returned to its caller and does not change; change a copy "
                            f"(model_copy) instead of setting {name!r}.")
        super().__setattr__(name, value)

    def __eq__(self, other: object) -> bool:
        # by value: a sealed Result equals its unsealed copy (pydantic would compare the private flag too)
        if not isinstance(other, BaseModel):
            return NotImplemented
        return type(self) is type(other) and self.__dict__ == other.__dict__

    __hash__ = None  # type: ignore[assignment]  # mutable until sealed, as BaseModel

    def model_copy(self, *, update: dict[str, Any] | None = None, deep: bool = False):
        copied = super().model_copy(update=update, deep=deep)
        for model in ([copied, *(v for v in copied.__dict__.values() if isinstance(v, _Sealable))] if deep
                      else [copied]):
            model.__pydantic_private__["_sealed"] = False
        return copied


class Trace(_Sealable):
    """Why an answer was given: intent, memory used, context sizes, and where the answer came from."""

    intent: str = "analysis"
    memory_hits: list[MemoryHit] = Field(default_factory=list)
    context: list[ContextPart] = Field(default_factory=list)
    source: Literal["ran_code", "memory", "general_knowledge", "none"] = "none"
    standalone_question: str = ""
    summary: str = Field(default="", description="The turn's summary (the answer writer's, else the interaction summarizer's), kept in short-term memory.")
    assumptions: list[str] = Field(default_factory=list)
    result_names: list[str] = Field(default_factory=list, description="Variables this turn's script created that later "
                                    "turns may use: those it showed and those the plan created (no scratch variables).")
    unsupported_numbers: list[str] = Field(default_factory=list, description="Numbers in the answer text that the run's output does not contain.")
    raw_lm_output: list[str] = Field(default_factory=list, description="Raw model text that could not be parsed.")


class Result(_Sealable):
    """The answer to one question. ``status`` is ok, declined (the model cannot answer) or error.

    A Result a session returned is final (:meth:`seal`): the work after the answer (summaries, error-fix
    memory) gives its outcome beside it (``settle.Settled``), never into it.
    """

    question: str
    status: Literal["ok", "declined", "error"]
    answer: str = ""
    error: ErrorInfo | None = None
    code: str = ""
    stdout: str = ""
    warnings: list[str] = Field(default_factory=list, description="Warnings the script raised; kept apart from stdout.")
    tables: list[TableOut] = Field(default_factory=list)
    figures: list[FigureOut] = Field(default_factory=list)
    attempts: list[Attempt] = Field(default_factory=list)
    plan: list[PlanStep] = Field(default_factory=list)
    usage: Usage = Field(default_factory=Usage)
    timings: dict[str, float] = Field(default_factory=dict, description="Seconds per stage.")
    trace: Trace = Field(default_factory=Trace)
    session_id: str = ""
    turn: int = 0

    def seal(self) -> Result:
        """Make this Result and its trace read-only (setting a field raises TypeError); returns it."""
        self.__pydantic_private__["_sealed"] = True
        self.trace.__pydantic_private__["_sealed"] = True
        return self


class RunResult(BaseModel):
    """What one sandboxed run of a script produced."""

    ok: bool
    stdout: str = ""
    warnings: list[str] = Field(default_factory=list, description="Warnings raised (warnings.warn), not in stdout.")
    error: ErrorInfo | None = None
    traceback: str = ""
    tables: list[TableOut] = Field(default_factory=list)
    figures: list[FigureOut] = Field(default_factory=list)
    names: list[str] = Field(default_factory=list, description="Variable names defined after the run.")
    seconds: float = 0.0


class ProgressEvent(BaseModel):
    """A progress event: stage is preparing | planning | agent | combining | running | fixing | answering | done."""

    stage: str
    message: str
    step: int = 0
    total: int = 0
