"""A Result is final once ``ask`` returns it: the after-answer work (``auto_analyst.settle``) gives its outcome beside
it, to the session's record and short-term memory, never into it."""

from __future__ import annotations

import pytest

from auto_analyst.results import Result
from tests.agents.test_scripted_lm import GOOD, plan, session_with

ANSWERS = [plan(), {"code": GOOD, "summary": "sums"}, {"answer": "The total revenue is 65."},
           {"summary": "Summed revenue: 65."}]  # the answer writer gives no summary: the summarizer runs afterwards


def test_a_returned_result_is_identical_by_value_before_and_after_the_session_settles(tmp_path):
    analyst, s, _ = session_with(ANSWERS, tmp_path)
    with analyst:
        r = s.ask("What is the total revenue?")
        returned = r.model_dump_json()
        copy = r.model_copy(deep=True)
        s.settle()
        stored = analyst.history().turns(s.id)[-1].result_json
    assert r.status == "ok" and r.trace.summary == ""
    assert r.model_dump_json() == returned and r == copy
    # the history kept the Result as it was returned (by value: the plan's steps are the registry's PlanStep subclass)
    assert Result.model_validate_json(stored).model_dump() == r.model_dump()
    # the summary was written, to the session's record and short-term memory
    assert s.settled[-1].turn == r.turn and s.settled[-1].summary == "Summed revenue: 65."
    assert s.memory.items[-1].summary == "Summed revenue: 65."
    assert s.usage.lm_calls == 4 and r.usage.lm_calls == 3


def test_a_returned_result_cannot_be_changed_but_a_copy_can(tmp_path):
    analyst, s, _ = session_with(ANSWERS, tmp_path)
    with analyst:
        r = s.ask("What is the total revenue?")
        s.settle()
    with pytest.raises(TypeError, match="does not change"):
        r.answer = "something else"
    with pytest.raises(TypeError, match="does not change"):
        r.trace.summary = "written later"
    changed = r.model_copy(deep=True)
    changed.trace.summary = "mine"
    assert changed.trace.summary == "mine" and r.trace.summary == "" and s.results[-1] == r
