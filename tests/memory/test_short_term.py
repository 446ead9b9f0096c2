"""Short-term memory: eviction into the running summary, budgets, serialisation."""

from __future__ import annotations

from auto_analyst.memory.context.short_term import SUMMARY_HEADER, MemoryItem, ShortTermMemory
from auto_analyst.memory.context.tokens import count_tokens, truncate_to_tokens


def _item(t: int) -> MemoryItem:
    return MemoryItem(
        turn=t,
        question=f"and for region {t}?",
        standalone_question=f"What is the average monthly revenue for region {t} by product line?",
        summary=f"Grouped revenue by product line for region {t}.",
        answer=f"Region {t}: hardware leads with 1{t}4.5 thousand per month; software follows. " * 3,
        result_names=[f"rev_region_{t}"],
        filters=[f"region == {t}"],
    )


def test_fifty_turns_stay_under_budget_and_summary_keeps_turn_3(settings) -> None:
    memory = ShortTermMemory(max_turns=settings.short_term_turns)
    budget = 600
    for t in range(1, 51):
        evicted = memory.add(_item(t))
        assert [e.turn for e in evicted] == ([t - 5] if t > 5 else [])
        text = memory.render(budget)
        assert count_tokens(text) <= budget
    assert [i.turn for i in memory.items] == [46, 47, 48, 49, 50]
    assert memory.last().turn == 50
    assert "Turn 3: What is the average monthly revenue for region 3 by product line?" in memory.running_summary
    assert "Turn 45: What is the average monthly revenue for region 45" in memory.running_summary
    assert count_tokens(memory.running_summary) <= memory.summary_max_tokens
    lines = memory.running_summary.splitlines()
    assert lines[0] == SUMMARY_HEADER
    assert lines[4].startswith("- … (") and lines[4].endswith(" turns omitted)")
    omitted = int(lines[4].split("(")[1].split()[0])
    assert omitted + 3 + (len(lines) - 5) == 45  # every evicted turn is listed or counted


def test_render_drops_oldest_turns_first_then_cuts_summary() -> None:
    memory = ShortTermMemory(max_turns=3)
    for t in range(1, 7):
        memory.add(_item(t))
    full = memory.render_parts(10_000)
    assert [i.turn for i in full.items] == [4, 5, 6]
    assert full.summary == memory.running_summary
    assert full.tokens == count_tokens(full.text)
    newest = count_tokens(_item(6).render())
    two = memory.render_parts(count_tokens(memory.running_summary + "\n" + _item(5).render() + "\n" + _item(6).render()))
    assert [i.turn for i in two.items] == [5, 6] and two.summary == memory.running_summary
    squeezed = memory.render_parts(newest + 12)
    assert [i.turn for i in squeezed.items] == [6]
    assert squeezed.summary != memory.running_summary and squeezed.summary.endswith("…")
    assert squeezed.tokens <= newest + 12
    tiny = memory.render_parts(20)
    assert tiny.summary == "" and tiny.tokens <= 20 and tiny.text.startswith("Turn 6:")
    assert memory.render_parts(0).text == ""


def test_custom_summarize_gets_previous_summary_and_evicted_turns() -> None:
    calls: list[list[str]] = []

    def summarize(texts: list[str]) -> str:
        calls.append(texts)
        return f"summary #{len(calls)}"

    memory = ShortTermMemory(max_turns=2)
    for t in (1, 2, 3, 4):
        memory.add(_item(t), summarize=summarize)
    assert calls[0] == ["Turn 1: What is the average monthly revenue for region 1 by product line? | "
                        "Result: Grouped revenue by product line for region 1. | Created: rev_region_1"]
    assert calls[1][0] == "summary #1" and calls[1][1].startswith("Turn 2: ")
    assert memory.running_summary == "summary #2"


def test_failing_summarize_falls_back_and_memory_round_trips() -> None:
    def broken(texts: list[str]) -> str:
        raise RuntimeError("model down")

    memory = ShortTermMemory(max_turns=1)
    memory.add(_item(1))
    memory.add(_item(2), summarize=broken)
    assert memory.running_summary == SUMMARY_HEADER + "\n- Turn 1: What is the average monthly revenue for region 1 by product line?"
    again = ShortTermMemory.from_json(memory.to_json())
    assert again == memory
    assert again.messages(10_000) == [
        {"role": "summary", "text": memory.running_summary},
        {"role": "turn", "turn": "2", "question": _item(2).standalone_question, "summary": _item(2).summary,
         "result_names": "rev_region_2"},  # a turn is said once: its summary, or its answer when it has none
    ]


def test_item_render_and_truncate_helper() -> None:
    item = MemoryItem(turn=2, question="Mean tenure?", standalone_question="Mean tenure?", answer="32.4 months",
                      result_names=["t"], filters=[])
    assert item.render() == "Turn 2: Mean tenure?\n  Answer: 32.4 months\n  Created: t"
    assert truncate_to_tokens("short", 10) == "short"
    cut = truncate_to_tokens("word " * 100, 10)
    assert cut.endswith(" …") and count_tokens(cut) <= 10
    assert truncate_to_tokens("anything", 0) == ""
    assert count_tokens("") == 0 and count_tokens("hello world") == 2
