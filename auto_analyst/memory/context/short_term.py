"""Short-term memory: the last few turns verbatim plus a running summary of everything older.

When a turn is added and more than ``max_turns`` are held, the oldest are evicted into the
running summary (the eviction-into-summary idea of Memary). The summary is written by a caller
supplied ``summarize`` function (normally an LM call made by the pipeline) or, without one, by a
deterministic fallback that lists the evicted standalone questions. :meth:`ShortTermMemory.render`
then fits the memory into a token budget.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from pydantic import BaseModel, Field

from auto_analyst.memory.context.tokens import count_tokens, truncate_to_tokens

if TYPE_CHECKING:
    from auto_analyst.results import Result

__all__ = ["MemoryItem", "ShortTermMemory", "RenderedMemory", "Summarize", "SUMMARY_MAX_TOKENS", "FALLBACK_HEAD_TURNS",
           "KEY_RESULT_ROWS", "key_result"]

Summarize = Callable[[list[str]], str]
"""Takes texts (the previous summary first, if any, then one text per evicted turn); returns a summary."""

SUMMARY_MAX_TOKENS = 300
"""Cap on the running summary, in tokens: a tenth of the default 3000-token memory budget, so the
summary never crowds out the verbatim turns. (Memary asks its summariser for about 50 words per
eviction; ours keeps several evictions' worth.)"""

KEY_RESULT_ROWS = 10
"""Rows of a turn's first table kept as its key result: enough for a top-10 or a per-group table, which is what
a follow-up such as "same for Sports" is compared with, at about 150 tokens."""

FALLBACK_HEAD_TURNS = 3
"""The fallback summary always keeps the first this-many evicted questions: the opening questions
of a session usually state its goal, so they are kept while middle ones are elided."""

SUMMARY_HEADER = "Earlier in this session:"


class MemoryItem(BaseModel):
    """One turn as short-term memory keeps it.

    Attributes:
        turn: turn number within the session (1-based).
        question: the user's words.
        standalone_question: the question rewritten to stand alone (no "it", "that column").
        summary: a one-line summary of what the turn did and found.
        answer: the answer text given to the user (rendered only when there is no summary: a turn is
            said once in a prompt).
        result_names: variables the turn's script created that later code may use (not ``show()`` labels).
        key_result: JSON of the turn's first table (name, columns, first rows) or value, or of its chart's
            title; the answer writer compares a follow-up with it.
        filters: filters in force after the turn (e.g. ``"region == 'EU'"``).
        tables: the tables the turn read (the active one when it was asked, unless its plan named others); a
            follow-up builds on these, a new question on the table active now.
        answered: False for an analysis question that was declined or stopped by an error: kept so that a
            follow-up ("the top one", "same for X") is known to build on a turn that gave no answer, never on the
            turn before it.
    """

    turn: int
    question: str
    standalone_question: str = ""
    summary: str = ""
    answer: str = ""
    result_names: list[str] = Field(default_factory=list)
    key_result: str = ""
    filters: list[str] = Field(default_factory=list)
    tables: list[str] = Field(default_factory=list)
    answered: bool = True

    @classmethod
    def declined(cls, question: str, result: Result) -> MemoryItem:
        """A turn with no analysis to build on (a declined analysis question, one stopped by an error, or an answer
        recalled from memory): its words and, as its summary, why (the error's message when it gave no answer) or
        what it recalled."""
        said = " ".join((result.answer or (result.error.message if result.error is not None else "")).split())[:300]
        label = "Recalled from earlier turns, not computed" if result.status == "ok" else "Not answered"
        return cls(turn=result.turn, question=question, summary=f"{label}: {said}", answered=False)

    @classmethod
    def from_result(cls, question: str, result: Result, tables: list[str] | None = None) -> MemoryItem:
        """The turn of an answered analysis: its summary (or, without one, the start of its answer), its result
        variables, its key result and the ``tables`` it read."""
        answer = " ".join(result.answer.split())
        return cls(turn=result.turn, question=question, standalone_question=result.trace.standalone_question,
                   summary=result.trace.summary or answer[:300], answer=result.answer[:600],
                   result_names=list(result.trace.result_names)[:8], key_result=key_result(result),
                   tables=list(tables or []))

    def outcome(self) -> tuple[str, str]:
        """("Did", summary) or, when there is no summary, ("Answer", answer): what a prompt says the turn did."""
        return ("Did", self.summary.strip()) if self.summary.strip() else ("Answer", self.answer.strip())

    def render(self) -> str:
        """The turn as prompt text (empty fields are left out; the summary or else the answer, not both)."""
        lines = [f"Turn {self.turn}: {self.question.strip()}"]
        if self.tables:
            lines.append(f"  Table: {', '.join(self.tables)}")
        standalone = self.standalone_question.strip()
        if standalone and standalone != self.question.strip():
            lines.append(f"  Meaning: {standalone}")
        label, text = self.outcome()
        if text:
            lines.append(f"  {label}: {text}")
        if self.result_names:
            lines.append(f"  Created: {', '.join(self.result_names)}")
        if self.filters:
            lines.append(f"  Filters: {'; '.join(self.filters)}")
        return "\n".join(lines)

    def as_evicted_text(self) -> str:
        """The short text handed to ``summarize`` when this turn is evicted."""
        q = (self.standalone_question or self.question).strip()
        parts = [f"Turn {self.turn}: {q}"] + ([f"Table: {', '.join(self.tables)}"] if self.tables else [])
        if self.summary.strip():
            parts.append(f"Result: {self.summary.strip()}")
        if self.result_names:
            parts.append(f"Created: {', '.join(self.result_names)}")
        return " | ".join(parts)


@dataclass(frozen=True)
class RenderedMemory:
    """What :meth:`ShortTermMemory.render_parts` kept within a budget.

    Attributes:
        text: the prompt text (summary, then turns oldest to newest).
        summary: the running summary as kept (possibly cut, possibly empty).
        items: the verbatim turns kept, oldest first.
        tokens: ``count_tokens(text)``.
    """

    text: str
    summary: str
    items: tuple[MemoryItem, ...]
    tokens: int


class ShortTermMemory(BaseModel):
    """The last ``max_turns`` turns verbatim plus a running summary of older ones.

    Build one with ``ShortTermMemory(max_turns=settings.short_term_turns)``.
    """

    max_turns: int = 5
    items: list[MemoryItem] = Field(default_factory=list)
    running_summary: str = ""
    summary_max_tokens: int = SUMMARY_MAX_TOKENS

    def add(self, item: MemoryItem, summarize: Summarize | None = None) -> list[MemoryItem]:
        """Append ``item``; evict the oldest turns beyond ``max_turns`` into the running summary.

        Args:
            item: the new turn.
            summarize: writes the new summary from ``[previous summary (if any), evicted turn
                texts...]``; its output is cut to ``summary_max_tokens``. Without it (or if it
                raises), :meth:`fallback_summary` is used.

        Returns:
            The evicted items (oldest first); empty when nothing was evicted.
        """
        self.items.append(item)
        overflow = len(self.items) - max(self.max_turns, 0)
        if overflow <= 0:
            return []
        evicted, self.items = self.items[:overflow], self.items[overflow:]
        new_summary = None
        if summarize is not None:
            texts = ([self.running_summary] if self.running_summary else []) + [e.as_evicted_text() for e in evicted]
            try:
                new_summary = truncate_to_tokens(summarize(texts).strip(), self.summary_max_tokens)
            except Exception:  # noqa: BLE001 - a failed summary call must not lose the turn
                new_summary = None
        self.running_summary = new_summary or self.fallback_summary(self.running_summary, evicted)
        return evicted

    def fallback_summary(self, previous: str, evicted: list[MemoryItem]) -> str:
        """Deterministic summary: one line per evicted turn's standalone question.

        Lines of ``previous`` are kept. While over ``summary_max_tokens``, lines are removed from
        the middle: the first :data:`FALLBACK_HEAD_TURNS` lines and the newest lines stay, and
        a single ``- … (N turns omitted)`` line marks the gap. Each question is cut to
        60 tokens so one long question cannot fill the summary.
        """
        lines = [ln for ln in previous.splitlines() if ln.strip() and ln.strip() != SUMMARY_HEADER]
        omitted = 0
        if len(lines) > FALLBACK_HEAD_TURNS and lines[FALLBACK_HEAD_TURNS].startswith("- … ("):
            gap = lines.pop(FALLBACK_HEAD_TURNS)
            omitted = int("".join(ch for ch in gap if ch.isdigit()) or 0)
        for e in evicted:
            q = truncate_to_tokens((e.standalone_question or e.question).strip().replace("\n", " "), 60)
            lines.append(f"- Turn {e.turn}: {q}")

        def build() -> str:
            body = lines[:FALLBACK_HEAD_TURNS]
            if omitted:
                body.append(f"- … ({omitted} turns omitted)")
            return "\n".join([SUMMARY_HEADER] + body + lines[FALLBACK_HEAD_TURNS:])

        text = build()
        while count_tokens(text) > self.summary_max_tokens and len(lines) > FALLBACK_HEAD_TURNS + 1:
            del lines[FALLBACK_HEAD_TURNS]
            omitted += 1
            text = build()
        return truncate_to_tokens(text, self.summary_max_tokens)

    def last(self) -> MemoryItem | None:
        """The most recent turn, or None when empty."""
        return self.items[-1] if self.items else None

    def render_parts(self, budget_tokens: int, model: str | None = None) -> RenderedMemory:
        """Fit the memory into ``budget_tokens``.

        Order of cuts: drop the oldest verbatim turns (the newest one is kept), then cut the
        running summary (down to nothing), then cut the newest turn's text, then drop it.
        """
        items = list(self.items)
        summary = self.running_summary.strip()

        def join(s: str, its: list[MemoryItem]) -> str:
            return "\n".join(([s] if s else []) + [i.render() for i in its])

        def fits(s: str, its: list[MemoryItem]) -> bool:
            return count_tokens(join(s, its), model) <= budget_tokens

        while len(items) > 1 and not fits(summary, items):
            items.pop(0)
        if not fits(summary, items):
            rest = count_tokens(join("", items), model) + 1  # +1: the newline joining the parts
            summary = truncate_to_tokens(summary, budget_tokens - rest, model) if budget_tokens > rest else ""
        text = join(summary, items)
        if count_tokens(text, model) > budget_tokens:
            text = truncate_to_tokens(text, budget_tokens, model)
            if not text:
                items = []
        return RenderedMemory(text=text, summary=summary, items=tuple(items), tokens=count_tokens(text, model))

    def render(self, budget_tokens: int, model: str | None = None) -> str:
        """The memory as prompt text within ``budget_tokens`` (see :meth:`render_parts`)."""
        return self.render_parts(budget_tokens, model).text

    def messages(self, budget_tokens: int, model: str | None = None) -> list[dict[str, str]]:
        """The kept memory as dicts (``{"role": "summary"|"turn", ...}``), e.g. for ``dspy.History``."""
        kept = self.render_parts(budget_tokens, model)
        out: list[dict[str, str]] = [{"role": "summary", "text": kept.summary}] if kept.summary else []
        for i in kept.items:
            label, text = i.outcome()
            out.append({"role": "turn", "turn": str(i.turn), "question": i.standalone_question or i.question,
                        ("summary" if label == "Did" else "answer"): text,
                        "result_names": ", ".join(i.result_names)}
                       | ({"tables": ", ".join(i.tables)} if i.tables else {})
                       | ({} if i.answered else {"answered": "no"}))
        return out

    def to_json(self) -> str:
        """Serialise (for ``History.save_session_state``)."""
        return self.model_dump_json()

    @classmethod
    def from_json(cls, text: str) -> "ShortTermMemory":
        """Rebuild a memory saved by :meth:`to_json`."""
        return cls.model_validate_json(text)


def key_result(result: Result) -> str:
    """JSON of a Result's key result: its first table (at most :data:`KEY_RESULT_ROWS` rows) or value, else
    its first chart's title; '' when it showed nothing."""
    if result.tables:
        t = result.tables[0]
        return json.dumps({"name": t.name, "columns": t.columns, "rows": t.rows[:KEY_RESULT_ROWS], "n_rows": t.n_rows},
                          ensure_ascii=False, default=str)
    if result.figures:
        return json.dumps({"chart": result.figures[0].title or result.figures[0].kind}, ensure_ascii=False)
    return ""
