"""The pipeline with a scripted LM (dspy.utils.DummyLM): bad model output is recovered or reported."""

from __future__ import annotations

import pandas as pd
from dspy.utils import DummyLM

from auto_analyst import Analyst, Settings
from tests.helpers import value

FRAME = pd.DataFrame({"city": ["Lyon", "Paris", "Lyon", "Nice"], "revenue": [10.0, 20.0, 30.0, 5.0]})
STEP = [{"agent": "statistics", "instruction": "total revenue", "uses": ["df"], "creates": []}]


def plan(**over):
    out = {"intent": "analysis", "standalone_question": "total revenue", "plan": STEP, "assumptions": [],
           "decline_reason": ""}
    out.update(over)
    return out


def session_with(answers, tmp_path, **settings):
    lm = DummyLM(answers)
    analyst = Analyst(settings=Settings.load({"home": tmp_path, **settings}), lm=lm)
    s = analyst.session()
    s.add_frame("sales", FRAME)
    return analyst, s, lm


GOOD = "total = df['revenue'].sum()\nshow(total, name='total revenue')"


def test_code_fences_are_removed(tmp_path):
    analyst, s, _ = session_with([plan(), {"code": f"```python\n{GOOD}\n```", "summary": "sums"},
                                  {"answer": "The total revenue is 65."}, {"summary": "Summed revenue: 65."}], tmp_path)
    with analyst:
        r = s.ask("What is the total revenue?")
        s.settle()
    assert r.status == "ok", r
    assert value(r, "total revenue") == 65.0
    assert "```" not in r.code
    assert r.usage.lm_calls == 3  # planner, agent, answer writer; the summarizer runs after the answer
    assert s.usage.lm_calls == 4
    assert r.trace.unsupported_numbers == []
    # the summarizer's summary goes to short-term memory and the session's record, not into the returned Result
    assert r.trace.summary == "" and s.memory.items[-1].summary == "Summed revenue: 65."
    assert s.settled[-1].summary == "Summed revenue: 65." and s.settled[-1].usage.lm_calls == 4
    assert s.memory.items[-1].result_names == ["total"]


def test_answer_with_a_number_not_in_the_output_is_flagged(tmp_path):
    analyst, s, _ = session_with([plan(), {"code": GOOD, "summary": "sums"},
                                  {"answer": "The total revenue is 66.5, up 12% on last year."}], tmp_path)
    with analyst:
        r = s.ask("What is the total revenue?")
    assert r.status == "ok"
    assert r.trace.unsupported_numbers == ["66.5", "12"]


def test_missing_fields_are_reported_with_the_raw_output(tmp_path):
    analyst, s, _ = session_with([{"intent": "analysis"}] * 4, tmp_path)
    with analyst:
        r = s.ask("What is the total revenue?")
    assert r.status == "error"
    assert r.error.kind == "model_output"  # AdapterParseError: the reply lacks the planner's fields
    assert "model call failed (AdapterParseError" in r.error.message and "raw reply is in the trace" in r.error.message
    assert r.trace.raw_lm_output and "analysis" in r.trace.raw_lm_output[0]


def test_code_that_raises_is_fixed_and_every_run_is_kept(tmp_path):
    bad = "total = df['revenue'].sum() / 0 + undefined_name\nshow(total, name='total revenue')"
    analyst, s, _ = session_with([plan(), {"code": bad, "summary": "sums"},
                                  {"fixed_script": GOOD, "explanation": "removed the undefined name"},
                                  {"answer": "65"}, {"summary": "Summed revenue after a fix."},
                                  {"error_summary": "NameError: a name used before it was defined.",
                                   "correction_summary": "Removed the undefined name."}], tmp_path)
    with analyst:
        r = s.ask("What is the total revenue?")
        s.settle()
        entries = analyst.memory.errors.list(user=s.user)
    assert r.status == "ok"
    assert [a.error.kind if a.error else None for a in r.attempts] == ["NameError", None]
    assert r.code == GOOD and value(r, "total revenue") == 65.0
    assert r.usage.lm_calls == 4  # planner, agent, fixer, answer writer; then the summarizer and error summarizer
    assert s.usage.lm_calls == 6
    assert any("a name used before it was defined" in e.document for e in entries)


def test_wrong_column_name_is_fixed(tmp_path):
    bad = GOOD.replace("'revenue'", "'Revenue '")
    analyst, s, _ = session_with([plan(), {"code": bad, "summary": "sums"},
                                  {"fixed_script": GOOD, "explanation": "column is revenue"}, {"answer": "65"},
                                  {"summary": "s"}, {"error_summary": "KeyError on a column name with a stray space.",
                                                     "correction_summary": "Used the exact column name."}],
                                 tmp_path)
    with analyst:
        r = s.ask("What is the total revenue?")
    assert r.status == "ok"
    assert r.attempts[0].error.kind == "KeyError"


def test_unchanged_fix_is_not_rerun(tmp_path):
    bad = "show(df['nope'].sum(), name='x')"
    analyst, s, _ = session_with([plan(), {"code": bad, "summary": "s"},
                                  {"fixed_script": bad, "explanation": "cannot fix"}], tmp_path)
    with analyst:
        r = s.ask("What is the total revenue?")
    assert r.status == "error" and len(r.attempts) == 1
    assert r.error.kind == "internal" and r.attempts[0].error.kind == "KeyError"


def test_fix_attempts_are_bounded_and_stop_when_the_error_repeats(tmp_path):
    fixes = [{"fixed_script": f"x{k} = 1\nshow(df['nope'], name='x')", "explanation": "try"} for k in range(5)]
    analyst, s, _ = session_with([plan(), {"code": "show(df['nope'], name='x')", "summary": "s"}, *fixes], tmp_path)
    with analyst:
        r = s.ask("What is the total revenue?")
    # first run + one fix: the fix fails with the same KeyError, so the loop stops there
    assert r.status == "error" and len(r.attempts) == 2


def test_fix_attempts_cap(tmp_path):
    fixes = [{"fixed_script": f"show(df['nope{k}'], name='x')", "explanation": "try"} for k in range(5)]
    analyst, s, _ = session_with([plan(), {"code": "show(df['nope'], name='x')", "summary": "s"}, *fixes], tmp_path,
                                 max_fix_attempts=2)
    with analyst:
        r = s.ask("What is the total revenue?")
    assert r.status == "error" and len(r.attempts) == 3  # first run + 2 fixes


def test_empty_plan_declines_with_the_reason(tmp_path):
    analyst, s, _ = session_with([plan(plan=[], decline_reason="There is no date column.")], tmp_path)
    with analyst:
        r = s.ask("What happened in 2023?")
    assert r.status == "declined" and r.answer == "There is no date column." and r.usage.lm_calls == 1


def test_lm_call_cap(tmp_path):
    analyst, s, _ = session_with([plan(), {"code": GOOD, "summary": "s"}, {"answer": "65"}], tmp_path, max_lm_calls=2)
    with analyst:
        r = s.ask("What is the total revenue?")
    assert r.status == "error" and "max_lm_calls" in r.error.message
