"""The memory around one question: what goes into its context, and what is kept after it.

One :class:`MemoryServices` per :class:`~auto_analyst.api.Analyst` owns the stores under
``AUTO_ANALYST_HOME`` (history, entities, profiles, error-fix memory); sessions call
:meth:`prepare` before a question and :meth:`record` after it. Every method takes the user id, and
nothing of one user reaches another's prompt.
"""

from __future__ import annotations

import hashlib
import json
import re
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from auto_analyst.config import Settings
from auto_analyst.memory.tokens import count_tokens
from auto_analyst.results import MemoryHit, Result

if TYPE_CHECKING:
    from auto_analyst.api import Session

__all__ = ["MemoryServices", "Prepared", "QUOTE"]

# text the user quotes from an earlier answer: "…" or “…” or «…»: a phrase of 20+ characters with a space in it
# (shorter quotes are column names and values, which also appear in earlier answers)
QUOTE = re.compile(r"[\"“«']([^\"”»'\s][^\"”»']{18,}[^\"”»'\s])[\"”»']")
KNOWN_FIX_MIN_SCORE = 0.35
"""Cosine similarity above which a remembered fix is shown to the analysts before they write code
(measured on the hashing embedding: unrelated errors score below 0.2, the same error kind above 0.5)."""


@dataclass
class Prepared:
    """The rendered context of one question and what memory it used."""

    short_term_memory: str
    user_context: str
    style: str
    known_fixes: str
    sizes: list = field(default_factory=list)
    hits: list[MemoryHit] = field(default_factory=list)


class MemoryServices:
    """Stores and context building for every session of an Analyst (opened lazily)."""

    def __init__(self, settings: Settings):
        self.settings = settings
        self._lock = threading.Lock()
        self._history = self._entities = self._profiles = self._errors = None

    @property
    def history(self):
        if self._history is None:
            from auto_analyst.memory.history import History

            self._history = History(self.settings)
        return self._history

    @property
    def entities(self):
        if self._entities is None:
            from auto_analyst.memory.entities import EntityMemory

            self._entities = EntityMemory(self.settings)
        return self._entities

    @property
    def profiles(self):
        if self._profiles is None:
            from auto_analyst.memory.profile import ProfileStore

            self._profiles = ProfileStore(self.settings)
        return self._profiles

    @property
    def errors(self):
        with self._lock:
            if self._errors is None:
                from auto_analyst.memory.error_memory import ErrorMemory

                self._errors = ErrorMemory(self.settings)
            return self._errors

    def close(self) -> None:
        if self._errors is not None:
            self._errors.close()

    # ------------------------------------------------------------------ before
    def prepare(self, session: "Session", question: str, dataset_description: str) -> Prepared:
        """Build the memory parts of the prompt within the budgets (settings.memory_budget_tokens)."""
        from auto_analyst.memory.context import ContextBuilder
        from auto_analyst.memory.profile import render

        user = session.user
        quote = None
        from auto_analyst.llm.offline.answer_format import split_format

        m = QUOTE.search(split_format(question)[0])  # a requested answer format is not a quote
        if m and " " in m.group(1):
            found = self.history.find_quote(user, m.group(1), session=session.id)
            quote = found if found is not None and found.exact else None
        profile = self.profiles.get(user)
        top = self.entities.top(user, n=8)
        fixes = self._known_fixes(user, question)
        built = ContextBuilder(self.settings).build(
            dataset_description=dataset_description, question=question, short_term=session.memory,
            quoted_turns=quote, profile=profile, entities=top, error_fixes=[(e.id, e.document) for e in fixes])
        kept_turns = {h.id for h in built.memory_hits if h.kind == "short_term"}
        turns = [_turn(i) for i in session.memory.items if str(i.turn) in kept_turns]
        if quote is not None and any(h.kind == "history" for h in built.memory_hits):
            t = quote.turn
            turns.append({"turn": t.turn, "question": t.question, "standalone_question": _standalone(t),
                          "answer": t.answer[:500], "quoted": True})
        memory = _fit_json({"summary": session.memory.running_summary, "turns": turns},
                           self.settings.memory_budget_tokens)
        focus = ", ".join(e.entity for e in top)
        user_context = "\n".join(x for x in [render(profile), f"This user often works with: {focus}." if focus else ""] if x)
        hits = [h for h in built.memory_hits if h.kind != "error_fix"]
        hits += [MemoryHit(kind="error_fix", id=e.id, detail=e.error_type) for e in fixes]
        # the prompt gets the memory as JSON: report the size of what is really sent
        sizes = [s if s.part != "short_term" else s.model_copy(update={"tokens": count_tokens(memory)})
                 for s in built.sizes]
        return Prepared(short_term_memory=memory, user_context=user_context, style=render(profile),
                        known_fixes="\n\n".join(e.document for e in fixes),
                        sizes=sizes, hits=hits)

    def _known_fixes(self, user: str, question: str) -> list:
        try:
            return self.errors.search(question, user=user, k=self.settings.error_memory_k, min_score=KNOWN_FIX_MIN_SCORE)
        except Exception:  # noqa: BLE001 - a damaged store must not stop the question; reindex fixes it
            return []

    def history_for(self, user: str, question: str, k: int = 5) -> tuple[str, list[MemoryHit]]:
        """The user's past turns most like ``question``, as JSON for the memory answerer."""
        turns = self.history.search(user, question, k=k)
        rows = [{"id": t.id, "turn": t.turn, "question": t.question, "answer": t.answer[:800]} for t in turns]
        return json.dumps(rows, ensure_ascii=False), [MemoryHit(kind="history", id=str(t.id), detail=t.question[:80])
                                                      for t in turns]

    def fixes_for_error(self, user: str, error_text: str) -> tuple[str, list[str]]:
        try:
            hits = self.errors.search(error_text, user=user, k=self.settings.error_memory_k)
        except Exception:  # noqa: BLE001
            return "", []
        if hits:
            self.errors.mark_used([h.id for h in hits])
        return "\n\n".join(h.document for h in hits), [h.id for h in hits]

    # ------------------------------------------------------------------- after
    def record(self, session: "Session", question: str, result: Result) -> None:
        """Store the turn in the history and the entities it touched."""
        from auto_analyst.memory.entities import extract_entities

        user = session.user
        self.history.record_turn(
            user, session.id, result.turn, question, intent=result.trace.intent,
            plan_json=[s.model_dump() for s in result.plan], code=result.code,
            result_summary=(result.trace.standalone_question or "")[:500], answer=result.answer,
            model=self.settings.model, timings_json=result.timings, usage_json=result.usage.model_dump(),
            result_json=result.model_dump(mode="json"))
        columns = [c.name for t in session.description.tables for c in t.columns]
        ents = extract_entities(question, result.code, columns, list(session.tables))
        if ents:
            self.entities.record(user, session.id, ents)

    def remember_fix(self, session: "Session", bad_code: str, error: str, good_code: str, agent: str,
                     summary: str, correction: str, human: bool = False) -> list[str]:
        """Store an error and its fix for this user, and (anonymised) globally when it is not data-specific."""
        from auto_analyst.agents.modules import AGENT_VERSION

        error_type = error.split(":", 1)[0].strip() or "Error"
        fingerprint = dataset_fingerprint(session)
        entry = self.errors.add(summary, correction, error_type=error_type, agent=agent, agent_version=AGENT_VERSION,
                                dataset_fingerprint=fingerprint, user=session.user, human=human)
        ids = [entry.id]
        columns, values = _vocabulary(session)
        if error_type not in DATA_SPECIFIC_ERRORS:
            g = self.errors.add(_shareable(summary, columns, values), _shareable(correction, columns, values),
                                error_type=error_type, agent=agent, agent_version=AGENT_VERSION,
                                dataset_fingerprint="", user=None, human=human)
            ids.append(g.id)
        return ids


# A KeyError or a value lookup names the user's own columns and values: such fixes stay with the user.
DATA_SPECIFIC_ERRORS = {"KeyError", "LookupError"}


MAX_VOCABULARY = 50_000
"""Distinct text values collected from a session's tables to mask in shared entries (enough for every
category-like column; free-text columns with more values are masked by dropping quoted text instead)."""


def _vocabulary(session: "Session") -> tuple[list[str], list[str]]:
    """Names (tables, columns, file stems) and the distinct text values of the session's tables."""
    names = [c.name for t in session.description.tables for c in t.columns] + list(session.tables)
    names += [Path(t.report.path).stem for t in session.tables.values() if getattr(t.report, "path", "")]
    values: list[str] = []
    for t in session.tables.values():
        for col in t.frame.columns:
            s = t.frame[col]
            if s.dtype == object or str(s.dtype).startswith("string") or str(s.dtype) == "category":
                values += [str(v) for v in s.dropna().unique()[: MAX_VOCABULARY - len(values)]]
            if len(values) >= MAX_VOCABULARY:
                break
    return names, values


def _shareable(text: str, names: list[str], values: list[str]) -> str:
    """Text for a GLOBAL entry: no comments, no quoted text, no names or values of the user's data."""
    from auto_analyst.memory.anonymize import anonymize

    text = re.sub(r"#[^\n]*", "", text)  # comments say anything about the data
    text = re.sub(r"'[^'\n]*'|\"[^\"\n]*\"", "'<text>'", text)  # so do string literals
    return anonymize(text, names, values)


def dataset_fingerprint(session: "Session") -> str:
    """A short hash of the tables' names, column names and dtypes (not their values)."""
    parts = [f"{t.name}:{c.name}:{c.dtype}" for t in session.description.tables for c in t.columns]
    return hashlib.sha256("|".join(parts).encode()).hexdigest()[:16]


def _standalone(turn: Any) -> str:
    try:
        return json.loads(turn.result_json or "{}").get("trace", {}).get("standalone_question", "") or turn.question
    except (ValueError, AttributeError):
        return turn.question


def _fit_json(memory: dict, budget: int) -> str:
    """The memory as JSON, dropping the oldest turns (then the summary) until it fits the budget."""
    turns = list(memory["turns"])
    while True:
        text = json.dumps({"summary": memory["summary"], "turns": turns}, ensure_ascii=False)
        if count_tokens(text) <= budget:
            return text
        if len(turns) > 1:
            turns.pop(0)
        elif memory["summary"]:
            memory = {"summary": "", "turns": turns}
        elif turns:
            turns = []
        else:
            return text


def _turn(item) -> dict:
    return {"turn": item.turn, "question": item.question, "standalone_question": item.standalone_question,
            "summary": item.summary, "answer": item.answer[:500], "result_names": item.result_names}

