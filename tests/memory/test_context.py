"""Context builder: per-part sizes, the memory budget, the prompt budget and the order of cuts."""

from __future__ import annotations

from auto_analyst.memory.context.builder import DATASET_FLOOR_TOKENS, ContextBuilder
from auto_analyst.memory.facts.entities import EntityScore
from auto_analyst.memory.users.history import TurnRecord
from auto_analyst.memory.users.profile import Profile, render
from auto_analyst.memory.context.short_term import MemoryItem, ShortTermMemory
from auto_analyst.memory.context.tokens import count_tokens, truncate_to_tokens
from auto_analyst.results import MemoryHit

DATASET = "Table telco: 7043 rows.\n" + "\n".join(f"- col_{i}: float, mean {i}.5, 0 missing" for i in range(40))
QUESTION = "Does tenure explain churn?"


def _memory(n: int = 8) -> ShortTermMemory:
    m = ShortTermMemory(max_turns=5)
    for t in range(1, n + 1):
        m.add(MemoryItem(turn=t, question=f"question {t} about churn and tenure",
                         answer=f"Turn {t} found that churn falls as tenure rises, by {t}.0 points. " * 4))
    return m


QUOTED = [
    TurnRecord(id=11, user="alice", session="s1", turn=2, created_at="t", question="Churn rate?", answer="26.5%."),
    TurnRecord(id=12, user="alice", session="s1", turn=3, created_at="t", question="By contract?",
               answer="Month-to-month 42.7%, one year 11.3%, two year 2.8%."),
]
ENTITIES = [EntityScore(entity="churn", kind="concept", count=5, last_seen="t", score=4.0), ("tenure", "column"), "groupby"]
FIXES = [("fix-1", "KeyError 'Churn': the column is named 'churn' in this table."), "Convert TotalCharges with pd.to_numeric."]


def _sizes(built) -> dict[str, int]:
    return {s.part: s.tokens for s in built.sizes}


def test_everything_fits_and_sizes_are_per_part_token_counts(settings) -> None:
    memory = _memory()
    built = ContextBuilder(settings).build(dataset_description=DATASET, question=QUESTION, short_term=memory,
                                           quoted_turns=QUOTED, profile=Profile(), entities=ENTITIES, error_fixes=FIXES)
    assert list(built.parts) == ["question", "dataset", "profile", "quoted", "short_term", "error_fixes", "entities"]
    assert built.parts["dataset"] == DATASET
    assert built.parts["profile"] == render(Profile())
    assert built.parts["short_term"] == memory.render(10**6)
    assert built.parts["entities"] == "churn (concept), tenure (column), groupby"
    assert built.parts["quoted"] == ("[11] (session s1, turn 2) Q: Churn rate?\nA: 26.5%.\n\n"
                                     "[12] (session s1, turn 3) Q: By contract?\nA: Month-to-month 42.7%, one year 11.3%, two year 2.8%.")
    assert _sizes(built) == {p: count_tokens(t) for p, t in built.parts.items()}
    assert built.total_tokens == sum(_sizes(built).values())
    assert built.cut == []
    assert built.memory_hits == [
        MemoryHit(kind="history", id="11", detail="quoted"), MemoryHit(kind="history", id="12", detail="quoted"),
        *[MemoryHit(kind="short_term", id=str(t), detail=f"question {t} about churn and tenure") for t in (4, 5, 6, 7, 8)],
        MemoryHit(kind="entity", id="churn", detail="concept"), MemoryHit(kind="entity", id="tenure", detail="column"),
        MemoryHit(kind="entity", id="groupby", detail=""),
        MemoryHit(kind="error_fix", id="fix-1"), MemoryHit(kind="error_fix", id="1"),
    ]


def test_memory_parts_share_the_memory_budget(settings) -> None:
    memory = _memory()
    quoted_tokens = count_tokens(ContextBuilder(settings).build(
        dataset_description="d", question="q", quoted_turns=QUOTED).parts["quoted"])
    budget = quoted_tokens + 150
    built = ContextBuilder(settings.replace(memory_budget_tokens=budget)).build(
        dataset_description=DATASET, question=QUESTION, short_term=memory, quoted_turns=QUOTED, entities=ENTITIES)
    sizes = _sizes(built)
    assert sizes["quoted"] == quoted_tokens
    assert sizes["quoted"] + sizes["short_term"] + sizes["entities"] <= budget
    assert built.parts["short_term"] == memory.render(budget - quoted_tokens)
    kept_turns = [h.id for h in built.memory_hits if h.kind == "short_term"]
    assert kept_turns[-1] == "8" and len(kept_turns) < 5  # oldest verbatim turns went first
    assert built.cut == ["short_term"]  # the entities still fit in what the turns left over
    assert built.parts["entities"] == "churn (concept), tenure (column), groupby"
    smaller = ContextBuilder(settings.replace(memory_budget_tokens=budget - 100)).build(
        dataset_description=DATASET, question=QUESTION, short_term=memory, quoted_turns=QUOTED, entities=ENTITIES)
    assert smaller.cut == ["short_term", "entities"] and smaller.tokens("entities") < sizes["entities"]
    assert smaller.tokens("quoted") + smaller.tokens("short_term") + smaller.tokens("entities") <= budget - 100
    assert sizes["dataset"] == count_tokens(DATASET)  # the prompt budget was not binding


def test_prompt_budget_cuts_lowest_priority_first(settings) -> None:
    memory = _memory()
    base = ContextBuilder(settings).build(dataset_description=DATASET, question=QUESTION, short_term=memory,
                                          profile=Profile(), entities=ENTITIES, error_fixes=FIXES)
    full = _sizes(base)
    # Room for everything but the entities: they alone are dropped.
    budget = base.total_tokens - full["entities"]
    built = ContextBuilder(settings.replace(prompt_budget_tokens=budget)).build(
        dataset_description=DATASET, question=QUESTION, short_term=memory, profile=Profile(), entities=ENTITIES,
        error_fixes=FIXES)
    assert _sizes(built) == {**full, "entities": 0} and built.cut == ["entities"]
    assert "entities" not in built.parts and built.total_tokens <= budget
    # Tighter: entities dropped, short-term memory shrinks, the rest untouched.
    budget = base.total_tokens - full["entities"] - full["short_term"] // 2
    built = ContextBuilder(settings.replace(prompt_budget_tokens=budget)).build(
        dataset_description=DATASET, question=QUESTION, short_term=memory, profile=Profile(), entities=ENTITIES,
        error_fixes=FIXES)
    sizes = _sizes(built)
    assert built.cut == ["entities", "short_term"]
    assert 0 < sizes["short_term"] < full["short_term"]
    assert {k: sizes[k] for k in ("question", "dataset", "profile", "error_fixes")} == {
        k: full[k] for k in ("question", "dataset", "profile", "error_fixes")}
    assert built.total_tokens <= budget


def test_dataset_is_truncated_last_and_never_below_its_floor(settings) -> None:
    big = DATASET * 3
    tight = settings.replace(prompt_budget_tokens=400)
    built = ContextBuilder(tight).build(dataset_description=big, question=QUESTION, short_term=_memory(),
                                        quoted_turns=QUOTED, profile=Profile(), entities=ENTITIES, error_fixes=FIXES)
    sizes = _sizes(built)
    assert built.cut == ["entities", "short_term", "error_fixes", "quoted", "profile", "dataset"]
    room = 400 - count_tokens(QUESTION)
    assert built.parts["dataset"] == truncate_to_tokens(big, room)  # cut at a word boundary, so <= room
    assert sizes == {"question": count_tokens(QUESTION), "dataset": count_tokens(truncate_to_tokens(big, room)), "profile": 0,
                     "quoted": 0, "short_term": 0, "error_fixes": 0, "entities": 0}
    assert built.parts["dataset"].startswith("Table telco: 7043 rows.") and built.parts["dataset"].endswith("…")
    assert built.memory_hits == []
    floor = ContextBuilder(settings.replace(prompt_budget_tokens=50)).build(dataset_description=big, question=QUESTION)
    assert floor.parts["dataset"] == truncate_to_tokens(big, DATASET_FLOOR_TOKENS)  # over budget, not dataset-less
    assert _sizes(floor)["dataset"] == count_tokens(floor.parts["dataset"]) == 255  # 256 less a partial word
    assert floor.total_tokens == 255 + count_tokens(QUESTION)


def test_cut_order_is_configurable(settings) -> None:
    fixes_text = "- " + FIXES[0][1] + "\n\n- " + FIXES[1]
    fixed = count_tokens(DATASET) + count_tokens(QUESTION)
    tight = settings.replace(prompt_budget_tokens=fixed + count_tokens(fixes_text) + 60)
    kwargs = dict(dataset_description=DATASET, question=QUESTION, short_term=_memory(), error_fixes=FIXES)
    default = ContextBuilder(tight).build(**kwargs)
    assert default.cut == ["short_term"] and default.parts["error_fixes"] == fixes_text
    assert 0 < default.tokens("short_term") <= 60
    memory_first = ContextBuilder(tight, cut_order=("entities", "error_fixes", "short_term", "quoted", "profile", "dataset"))
    built = memory_first.build(**kwargs)
    assert built.cut == ["error_fixes", "short_term"] and "error_fixes" not in built.parts
    assert built.tokens("short_term") > default.tokens("short_term")
    assert built.total_tokens <= tight.prompt_budget_tokens and default.total_tokens <= tight.prompt_budget_tokens


def test_quote_match_keeps_the_quoted_turn_over_its_neighbours(settings) -> None:
    from auto_analyst.memory.users.history import History

    h = History(settings)
    ids = [h.record_turn("alice", "s1", t, f"q{t}", answer=f"Answer {t}: " + "tenure matters. " * 10) for t in (1, 2, 3)]
    match = h.find_quote("alice", "Answer 2: tenure matters.")
    assert [t.id for t in match.context] == ids
    one = count_tokens(f"[{ids[1]}] (session s1, turn 2) Q: q2\nA: " + ("Answer 2: " + "tenure matters. " * 10).strip())
    roomy = ContextBuilder(settings).build(dataset_description="d", question="q", quoted_turns=match)
    assert [(x.id, x.detail) for x in roomy.memory_hits] == [
        (str(ids[0]), "quote context"), (str(ids[1]), "quoted"), (str(ids[2]), "quote context")]
    only_hit = ContextBuilder(settings.replace(memory_budget_tokens=one + 5)).build(
        dataset_description="d", question="q", quoted_turns=match)
    assert [x.id for x in only_hit.memory_hits] == [str(ids[1])] and only_hit.tokens("quoted") == one
    assert only_hit.cut == ["quoted"]
    cut = ContextBuilder(settings.replace(memory_budget_tokens=20)).build(
        dataset_description="d", question="q", quoted_turns=match)
    assert cut.parts["quoted"].startswith(f"[{ids[1]}] (session s1, turn 2) Q: q2") and cut.parts["quoted"].endswith("…")
    assert cut.tokens("quoted") <= 20 and [x.id for x in cut.memory_hits] == [str(ids[1])]
