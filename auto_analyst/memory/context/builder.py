"""The context builder: the one place that assembles a prompt's context under token budgets.

Parts, from most to least protected (and what happens to each when over budget):

* ``question``: the user's question; counted, never cut.
* ``dataset``: the dataset description; never dropped, truncated last, down to a floor.
* ``profile``: the rendered answer profile; truncated.
* ``quoted``: the quoted turn with its neighbours; neighbours dropped first, then the turn cut.
* ``short_term``: running summary + last turns; oldest turns dropped, then the summary cut.
* ``facts``: remembered findings around the question's entities (:mod:`~auto_analyst.memory.facts.recall`);
  the lowest-ranked dropped first.
* ``error_fixes``: fixes from the error-fix memory; the last (least similar) dropped first, the
  first one cut.
* ``entities``: the user's top entities; the lowest-ranked dropped first.

Two budgets (from :class:`~auto_analyst.config.Settings`): the memory parts (quoted + short_term
+ facts + entities) share ``memory_budget_tokens``, filled in that order; then all parts together must fit
``prompt_budget_tokens``, cut in :attr:`ContextBuilder.cut_order`. Budgets are enforced on the sum
of per-part token counts (:func:`~auto_analyst.memory.context.tokens.count_tokens`); the caller's
headings and separators between parts are not counted.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from auto_analyst.config import Settings
from auto_analyst.memory.users.profile import Profile, render as render_profile
from auto_analyst.memory.context.short_term import MemoryItem, ShortTermMemory
from auto_analyst.memory.context.tokens import count_tokens, truncate_to_tokens
from auto_analyst.results import ContextPart, MemoryHit

__all__ = ["ContextBuilder", "BuiltContext", "PART_ORDER", "CUT_ORDER", "DATASET_FLOOR_TOKENS"]

PART_ORDER = ("question", "dataset", "profile", "quoted", "short_term", "facts", "error_fixes", "entities")
"""The order of parts in :attr:`BuiltContext.parts` and :attr:`BuiltContext.sizes`."""

CUT_ORDER = ("entities", "facts", "short_term", "error_fixes", "quoted", "profile", "dataset")
"""Parts cut to fit the prompt budget, first to last. ``question`` is never cut."""

DATASET_FLOOR_TOKENS = 256
"""The dataset description is never cut below this many tokens (less a partial word at the cut), nor
below its whole size if shorter:
enough for a header and a dozen column lines, without which no analysis can be planned. Only a
question longer than the prompt budget minus this floor can make a context exceed its budget."""


@dataclass
class BuiltContext:
    """The assembled context.

    Attributes:
        parts: part name -> text, for the parts that are non-empty after budgeting, in
            :data:`PART_ORDER`.
        sizes: tokens of every part given to :meth:`ContextBuilder.build` (0 when it was dropped),
            in :data:`PART_ORDER`; goes into ``Trace.context``.
        memory_hits: memory items that made it into the context; goes into ``Trace.memory_hits``.
        total_tokens: the sum of ``sizes``.
        cut: names of parts that were truncated or dropped to meet a budget.
    """

    parts: dict[str, str]
    sizes: list[ContextPart]
    memory_hits: list[MemoryHit] = field(default_factory=list)
    total_tokens: int = 0
    cut: list[str] = field(default_factory=list)

    def tokens(self, part: str) -> int:
        """Tokens of ``part`` (0 if absent)."""
        return next((s.tokens for s in self.sizes if s.part == part), 0)


def _render_quoted(turn: Any) -> str:
    if isinstance(turn, str):
        return turn
    when = f" (session {turn.session}, turn {turn.turn})" if getattr(turn, "session", None) else ""
    return f"[{getattr(turn, 'id', '?')}]{when} Q: {turn.question.strip()}\nA: {turn.answer.strip()}"


def _entity(e: Any) -> tuple[str, str]:
    if isinstance(e, str):
        return e, ""
    if isinstance(e, tuple):
        return str(e[0]), str(e[1]) if len(e) > 1 else ""
    return str(e.entity), str(getattr(e, "kind", ""))


def _fix(f: Any, i: int) -> tuple[str, str]:
    return (str(f[0]), str(f[1])) if isinstance(f, tuple) else (str(i), str(f))


class _ListPart:
    """A part made of ``(id, text)`` items, shrunk by dropping items in ``drop_order`` (default: last first).

    With ``truncate``, the last item left is cut to the budget instead of being dropped whole.
    """

    def __init__(self, items: list[tuple[str, str]], render: Callable[[list[tuple[str, str]]], str],
                 drop_order: Sequence[int] | None = None, truncate: bool = False) -> None:
        self.items, self.render, self.truncate = items, render, truncate
        self.drop_order = list(drop_order) if drop_order is not None else list(range(len(items) - 1, -1, -1))

    def fit(self, budget: int, model: str | None) -> tuple[str, list[tuple[str, str]]]:
        keep, order = set(range(len(self.items))), list(self.drop_order)
        while keep:
            kept = [self.items[i] for i in sorted(keep)]
            text = self.render(kept)
            if count_tokens(text, model) <= budget:
                return text, kept
            if len(keep) == 1 and self.truncate:
                text = truncate_to_tokens(text, budget, model)
                return (text, kept) if text else ("", [])
            keep.discard(order.pop(0))
        return "", []


def _quoted_items(quoted: Any) -> tuple[list[tuple[str, str]], list[int], str]:
    """Items, drop order and the quoted turn's id for a ``QuoteMatch`` (neighbours dropped before
    the quoted turn: next, then previous) or a plain sequence (last dropped first)."""
    if quoted is None:
        return [], [], ""
    if hasattr(quoted, "context") and hasattr(quoted, "turn"):
        turns = list(quoted.context)
        hit = next((i for i, t in enumerate(turns) if t.id == quoted.turn.id), 0)
        order = [i for i in range(len(turns) - 1, -1, -1) if i != hit] + [hit]
        return [(str(t.id), _render_quoted(t)) for t in turns], order, str(quoted.turn.id)
    turns = list(quoted)
    items = [(str(getattr(t, "id", i)), _render_quoted(t)) for i, t in enumerate(turns)]
    return items, list(range(len(items) - 1, -1, -1)), ""


class ContextBuilder:
    """Builds prompt context within ``settings.memory_budget_tokens`` and ``settings.prompt_budget_tokens``.

    Args:
        settings: the budgets come from here.
        model: tokenizer model for counting (default: LiteLLM's gpt-4o-mini tokenizer).
        cut_order: override :data:`CUT_ORDER` (e.g. put ``error_fixes`` last in a fix prompt).
    """

    def __init__(self, settings: Settings, model: str | None = None, cut_order: Sequence[str] = CUT_ORDER) -> None:
        self.memory_budget = settings.memory_budget_tokens
        self.prompt_budget = settings.prompt_budget_tokens
        self.model = model
        self.cut_order = tuple(cut_order)

    def build(
        self, *, dataset_description: str, question: str, short_term: ShortTermMemory | None = None,
        quoted_turns: Any = None, profile: Profile | None = None,
        entities: Sequence[Any] | None = None, error_fixes: Sequence[str | tuple[str, str]] | None = None,
        facts: Sequence[tuple[str, str]] | None = None,
    ) -> BuiltContext:
        """Assemble the parts and report their sizes.

        Args:
            dataset_description: never dropped; truncated only when everything else is gone.
            question: the user's question (counted, never cut).
            short_term: the session's short-term memory.
            quoted_turns: a ``QuoteMatch`` from ``History.find_quote`` (its neighbours are dropped
                before the quoted turn), or ``TurnRecord``-like objects (``id``, ``question``,
                ``answer``) or strings (the last dropped first). The last one left is truncated.
            profile: rendered with :func:`auto_analyst.memory.users.profile.render`.
            entities: ``EntityScore`` objects, ``(name, kind)`` tuples or names, best first.
            error_fixes: fix texts, or ``(id, text)`` pairs, most similar first.
            facts: ``(fact id, rendered fact)`` pairs, best first.
        """
        m = self.model
        quoted_list, quoted_order, quoted_hit = _quoted_items(quoted_turns)
        given = {"question": True, "dataset": True, "profile": profile is not None, "quoted": bool(quoted_list),
                 "short_term": short_term is not None, "error_fixes": bool(error_fixes), "entities": bool(entities),
                 "facts": bool(facts)}
        quoted = _ListPart(quoted_list, lambda its: "\n\n".join(text for _, text in its), quoted_order, truncate=True)
        ents = _ListPart([_entity(e) for e in entities or []],
                         lambda its: ", ".join(f"{n} ({k})" if k else n for n, k in its))
        known = _ListPart([(str(i), str(t)) for i, t in facts or []], lambda its: "\n".join(f"- {t}" for _, t in its))
        fixes = _ListPart([_fix(f, i) for i, f in enumerate(error_fixes or [])],
                          lambda its: "\n\n".join(f"- {text}" for _, text in its), truncate=True)
        texts: dict[str, str] = {"question": question, "dataset": dataset_description,
                                 "profile": render_profile(profile) if profile is not None else ""}
        kept: dict[str, list] = {}
        cut: list[str] = []

        # 1. Memory parts share the memory budget: quoted first, then short-term, then facts, then entities.
        room = self.memory_budget
        texts["quoted"], kept["quoted"] = quoted.fit(room, m)
        room -= count_tokens(texts["quoted"], m)
        self._fit_short_term(short_term, room, texts, kept)
        room -= count_tokens(texts["short_term"], m)
        texts["facts"], kept["facts"] = known.fit(room, m)
        room -= count_tokens(texts["facts"], m)
        texts["entities"], kept["entities"] = ents.fit(room, m)
        texts["error_fixes"], kept["error_fixes"] = fixes.fit(self.prompt_budget, m)
        lists = {"quoted": quoted, "entities": ents, "error_fixes": fixes, "facts": known}
        untouched = {p: lst.render(lst.items) for p, lst in lists.items()}
        untouched["short_term"] = short_term.render(10**9, m) if short_term is not None else ""
        cut += [p for p in ("quoted", "short_term", "facts", "entities", "error_fixes") if texts[p] != untouched[p]]

        # 2. The whole prompt: cut parts in cut_order until the sum fits.
        def total() -> int:
            return sum(count_tokens(t, m) for t in texts.values())

        for part in self.cut_order:
            over = total() - self.prompt_budget
            if over <= 0:
                break
            size = count_tokens(texts.get(part, ""), m)
            if not size:
                continue
            target = max(size - over, 0)
            if part == "short_term":
                self._fit_short_term(short_term, target, texts, kept)
            elif part in lists:
                texts[part], kept[part] = lists[part].fit(target, m)
            elif part == "dataset":
                texts[part] = truncate_to_tokens(texts[part], max(target, min(size, DATASET_FLOOR_TOKENS)), m)
            else:
                texts[part] = truncate_to_tokens(texts[part], target, m)
            if part not in cut:
                cut.append(part)

        sizes = [ContextPart(part=p, tokens=count_tokens(texts.get(p, ""), m)) for p in PART_ORDER if given[p]]
        hits = [MemoryHit(kind="history", id=i, detail="quote context" if quoted_hit and i != quoted_hit else "quoted")
                for i, _ in kept["quoted"]]
        hits += [MemoryHit(kind="short_term", id=str(it.turn), detail=(it.standalone_question or it.question)[:80])
                 for it in kept.get("short_term", [])]
        hits += [MemoryHit(kind="fact", id=i, detail=t[:120]) for i, t in kept["facts"]]
        hits += [MemoryHit(kind="entity", id=n, detail=k) for n, k in kept["entities"]]
        hits += [MemoryHit(kind="error_fix", id=i) for i, _ in kept["error_fixes"]]
        return BuiltContext(parts={p: texts[p] for p in PART_ORDER if texts.get(p)}, sizes=sizes, memory_hits=hits,
                            total_tokens=sum(s.tokens for s in sizes), cut=cut)

    def _fit_short_term(self, memory: ShortTermMemory | None, budget: int, texts: dict[str, str], kept: dict) -> None:
        if memory is None or budget <= 0:
            texts["short_term"], kept["short_term"] = "", []
            return
        rendered = memory.render_parts(budget, self.model)
        items: list[MemoryItem] = list(rendered.items) if rendered.text else []
        texts["short_term"], kept["short_term"] = rendered.text, items
