"""DABench through the Python API: the benchmark's prompt format and scoring rule, one implementation.

A split is a folder with ``questions.jsonl`` (id, question, constraints, format, file_name, level,
concepts, labels) and ``tables/`` (the layout of InfiAgent-DABench's validation split).
A question is sent as the benchmark poses it: question, constraints, answer format, on one line
(:func:`prompt`), each in a fresh session for a user of its own (:func:`run`). Scoring is the
benchmark's own rule (the split's README): a sub-answer ``@name[value]`` is right when the strings are equal or both parse as numbers differing by less
than 1e-6, and a question is right only when all its labelled sub-answers are (:func:`score`). A
question is *declined* when the status is "declined" or the answer gives none of the requested
values and says so; any other answer that is not right is *wrong*.

``auto-analyst eval dabench`` and ``benchmarks/bench_dabench.py`` both call :func:`run`.
"""

from __future__ import annotations

import collections
import json
import re
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from auto_analyst.errors import BadInputError
from auto_analyst.results import Result, Usage

__all__ = ["Question", "Report", "load_split", "prompt", "same", "score", "round_trips", "run", "evaluate", "MODES"]

ANSWER = re.compile(r"@(\w+)\[(.*?)\]")
MODES = ("benchmark", "simplified")


@dataclass
class Question:
    """One benchmark question (a row of ``questions.jsonl``)."""

    id: int
    question: str
    format: str
    file_name: str
    labels: list[list[str]]
    constraints: str = ""
    level: str = ""
    concepts: list[str] = field(default_factory=list)


def load_split(folder: Path, limit: int | None = None, shard: tuple[int, int] | None = None) -> list[Question]:
    """The questions of a split folder, in file order: shard ``(K, N)`` of them, then the first ``limit``.

    Shard ``K`` of ``N`` holds the questions at positions ``i`` (0-based, in file order) with
    ``i % N == K - 1``: deterministic, the ``N`` shards are disjoint and together the whole split,
    and each gets a like mix of tables and levels (the file is grouped by table).

    Raises:
        BadInputError: no ``questions.jsonl`` or ``tables/`` in ``folder``, a line that is not a
            question, or a shard that is not ``1 <= K <= N``.
    """
    folder = Path(folder)
    path = folder / "questions.jsonl"
    if not path.is_file() or not (folder / "tables").is_dir():
        raise BadInputError(f"{folder} is not a DABench split: it needs questions.jsonl and a tables/ folder.")
    out = []
    for n, line in enumerate(path.read_text().splitlines(), 1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
            out.append(Question(**{k: row[k] for k in Question.__dataclass_fields__ if k in row}))
        except (ValueError, TypeError) as exc:
            raise BadInputError(f"{path}:{n} is not a benchmark question ({exc}).") from None
    if shard is not None:
        k, n_shards = shard
        if not 1 <= k <= n_shards:
            raise BadInputError(f"Shard {k}/{n_shards} does not exist: K must be between 1 and N.")
        out = [q for i, q in enumerate(out) if i % n_shards == k - 1]
    return out[:limit] if limit else out


def prompt(q: Question, mode: str = "benchmark") -> str:
    """The text sent for ``q``: question, constraints (benchmark mode only), answer format; on one line."""
    parts = [q.question, q.constraints] if mode == "benchmark" else [q.question]
    return re.sub(r"\s+", " ", " ".join(p for p in parts + [q.format] if p)).strip()


def same(got: str, want: str) -> bool:
    """The benchmark's rule: equal strings, or numbers within 1e-6."""
    got, want = got.strip(), want.strip()
    if got == want:
        return True
    try:
        return abs(float(got) - float(want)) < 1e-6
    except ValueError:
        return False


def score(status: str, answer: str, labels: list[list[str]]) -> str:
    """'right', 'wrong' or 'declined' for one answer (see the module docstring)."""
    if status == "declined":
        return "declined"
    given = dict(ANSWER.findall(answer or ""))
    if all(name in given and same(given[name], value) for name, value in labels):
        return "right"
    if status == "ok" and "No value matched" in (answer or "") and not given:
        return "declined"
    return "wrong"


@dataclass
class Report:
    """What :func:`run` measured: one row per question, the verdict counts and the usage (summaries included)."""

    rows: list[dict[str, Any]] = field(default_factory=list)
    usage: Usage = field(default_factory=Usage)
    seconds: float = 0.0

    @property
    def counts(self) -> collections.Counter:
        return collections.Counter(r["verdict"] for r in self.rows)

    @property
    def per_question(self) -> dict[str, float]:
        """Means over the questions: LM calls until the answer (``lm_calls``) and sequential ``round_trips``."""
        n = max(len(self.rows), 1)
        return {"lm_calls": round(sum(r["usage"]["lm_calls"] for r in self.rows) / n, 2),
                "round_trips": round(sum(r.get("round_trips", 0) for r in self.rows) / n, 2)}

    def to_dict(self) -> dict[str, Any]:
        c = self.counts
        return {"questions": len(self.rows), "right": c["right"], "wrong": c["wrong"], "declined": c["declined"],
                "usage": self.usage.model_dump(), "per_question": self.per_question, "seconds": round(self.seconds, 1),
                "rows": self.rows}


def run(analyst: Any, split: Path, questions: list[Question], mode: str = "benchmark",
        on_row: Callable[[dict[str, Any]], None] | None = None) -> Report:
    """Ask every question through ``analyst``, each in a session of its own for a user of its own.

    Each question stands alone, as in the benchmark: nothing one question did reaches another. A session
    per question means no short-term memory and no variables or in-place table changes left in the
    worker by an earlier script; a user per question (``dabench-<id>``) means no remembered facts or
    entities of earlier questions in the planner's ``user_context`` (an earlier question's finding is
    often a later question's answer).

    Args:
        analyst: an :class:`~auto_analyst.api.Analyst` (its model is the one evaluated).
        split: the split folder (its ``tables/`` hold the files).
        questions: from :func:`load_split`.
        mode: ``benchmark`` (question, constraints, format) or ``simplified`` (no constraints).
        on_row: called with each row as it is scored (for progress output).
    """
    report, t0 = Report(), time.perf_counter()
    for q in questions:
        session = analyst.session(user=f"dabench-{q.id}")
        try:
            session.load(Path(split) / "tables" / q.file_name)
        except Exception as exc:  # noqa: BLE001 - a table that does not load makes its question an error, not a crash
            r = _failed(q, f"{type(exc).__name__}: {exc}")
        else:
            r = session.ask(prompt(q, mode))
        session.settle()
        report.usage = report.usage + session.usage
        analyst.forget(session.id)
        row = {"id": q.id, "level": q.level, "concepts": q.concepts, "labels": q.labels,
               "verdict": score(r.status, r.answer, q.labels), "status": r.status, "answer": r.answer[:400],
               "error": r.error.model_dump() if r.error else None, "usage": r.usage.model_dump(),
               "attempts": len(r.attempts), "plan_steps": len(r.plan), "round_trips": round_trips(r)}
        report.rows.append(row)
        if on_row is not None:
            on_row(row)
    report.seconds = time.perf_counter() - t0
    return report


def round_trips(r: Result) -> int:
    """Sequential LM round trips until the answer: the planner, the analysts (at once: one), the combiner, each
    fix that ran, the answer writer (or the memory answerer), as the stages' timings show them."""
    stages = sum(k in r.timings for k in ("planning", "agents", "combining", "answering"))
    return stages + max(len(r.attempts) - 1, 0) + (r.trace.source == "memory")


def _failed(q: Question, message: str) -> Result:
    from auto_analyst.results import ErrorInfo

    return Result(question=q.question, status="error", error=ErrorInfo(kind="data_load", message=message))


def evaluate(analyst: Any, split: str | Path, limit: int | None = None, mode: str = "benchmark",
             on_row: Callable[[dict[str, Any]], None] | None = None, shard: tuple[int, int] | None = None) -> Report:
    """Ask every question of a DABench split with ``analyst`` (an ``api.Analyst``) and score it by the benchmark's
    rule (docs/models.md). ``shard=(K, N)`` asks only the questions at positions ``i % N == K - 1``
    (:func:`load_split`).

    Raises:
        BadInputError: ``split`` is not a DABench split (questions.jsonl and tables/), or a bad shard.
    """
    return run(analyst, Path(split), load_split(Path(split), limit, shard=shard), mode=mode, on_row=on_row)

