"""The replay machinery: record a scripted "capable" model through the product, replay the transcript offline.

The recorded suite itself (tests/recordings/, a real model) is replayed by test_recorded_suite.py; here a
scripted model stands in for it, so the recorder, the keys, the sabotage and the replay are checked alone.
"""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from auto_analyst.agents.registry import default_registry
from auto_analyst.config import Settings
from auto_analyst.evals.suite import Item, Turn, check, read_frame, run_item, sabotage
from auto_analyst.llm.prompt_text import Prompt
from auto_analyst.llm.replay import (call_keys, load_transcript, recording_lm, replay_lm, save_transcript)
from tests.helpers import REPO
from tests.scripted import ANALYST, ANSWER, ERROR_SUMMARY, FIXER, PLANNER, SUMMARY, scripted_lm

IRIS = REPO / "datasets" / "iris.csv"
MEANS = "res = df.groupby('species')['petal_length'].mean()\nshow(res, name='mean petal length')"
WIDE = "res = df[df['petal_width'] > 1.5].groupby('species')['petal_length'].mean()\nshow(res, name='mean petal length')"


def capable_model():
    """A scripted model that answers like a good one: right code first time, fixes a misspelled column."""
    def planner(p: Prompt):
        follow_up = "petal_width" in p.inputs["goal"] or "only" in p.inputs["goal"]
        q = "mean petal length by species for petal width above 1.5" if follow_up else "mean petal length by species"
        step = {"agent": "statistics", "instruction": q, "uses": ["df"], "creates": ["res"], "types": {"res": "Series"}}
        return {"intent": "analysis", "standalone_question": q, "plan": [step], "assumptions": [], "decline_reason": "",
                "code": analyst_code(q)}

    def analyst_code(instruction: str) -> str:
        return WIDE if "above 1.5" in instruction else MEANS

    def analyst(p: Prompt):
        return {"code": analyst_code(p.inputs["instruction"]), "summary": "means by species"}

    def fixer(p: Prompt):
        return {"fixed_script": p.inputs["script"].replace("'petal_lenght'", "'petal_length'"),
                "explanation": "The column is petal_length."}

    def answer(p: Prompt):
        rows = json.loads(p.inputs["tables"])[0]["rows"]
        return {"answer": "Mean petal length: " + ", ".join(f"{s} {v:.3f}" for s, v in rows) + ".",
                "summary": "Computed mean petal length by species."}

    return scripted_lm({PLANNER: planner, ANALYST: analyst, FIXER: fixer, ANSWER: answer,
                        SUMMARY: lambda p: {"summary": "Computed mean petal length by species."},
                        ERROR_SUMMARY: lambda p: {"error_summary": "KeyError: a misspelled column.",
                                                  "correction_summary": "Use the exact column name."}})


ITEM = Item(id="iris_two_turns", table="datasets/iris.csv", turns=[
    Turn(question="What is the mean petal length of each species?",
         expect={"values": "df.groupby('species')['petal_length'].mean()", "fixed": True},
         break_first_script={"rename_column": ["petal_length", "petal_lenght"]}),
    Turn(question="Now only flowers with petal_width above 1.5.",
         expect={"values": "df[df['petal_width'] > 1.5].groupby('species')['petal_length'].mean()"}),
])


def record(tmp_path: Path, item: Item = ITEM, one_call: bool = True) -> tuple[list, Path]:
    inner, _ = capable_model()
    inner.plan_with_code = one_call
    current = {"s": None}
    lm, engine = recording_lm(inner, sabotage=lambda e, out: current["s"](e, out) if current["s"] else None)
    settings = Settings.load({"home": tmp_path / "rec_home"}, environ={})
    results = run_item(item, IRIS, lm, settings, on_turn=lambda k, t: current.update(s=sabotage(t.break_first_script)))
    path = tmp_path / "recordings" / f"{item.id}.json"
    save_transcript(path, item.id, "scripted", engine.take())
    return results, path


def test_a_recorded_conversation_replays_offline_with_the_same_values(tmp_path):
    recorded, path = record(tmp_path)
    transcript = load_transcript(path)
    kinds = [c["signature"] for c in transcript["calls"]]
    # turn 1: the plan with its code (broken on purpose), fix, the answer with the summary, then the error summary
    # after it; turn 2: no fix
    assert kinds == ["planner_code", "fixer", "answer_writer", "error_summarizer", "planner_code", "answer_writer"]
    broken = transcript["calls"][0]
    assert "'petal_lenght'" in broken["outputs"]["code"] and "'petal_length'" in broken["original"]["code"]

    lm, engine = replay_lm(transcript["calls"], source=str(path))
    replayed = run_item(ITEM, IRIS, lm, Settings.load({"home": tmp_path / "replay_home"}, environ={}))
    frame = read_frame(ITEM, IRIS)
    for turn, r in zip(ITEM.turns, replayed):
        assert check(turn, r, frame) == []
    assert [len(r.attempts) for r in replayed] == [2, 1]
    assert replayed[0].attempts[0].error.kind == "KeyError"
    assert [r.answer for r in replayed] == [r.answer for r in recorded]
    assert replayed[0].answer == "Mean petal length: setosa 1.462, versicolor 4.260, virginica 5.552."
    assert engine.unused == [] and {how for _, how in engine.matches} == {"key"}


def test_a_transcript_recorded_on_the_planner_then_analyst_route_replays_on_that_route(tmp_path):
    """Recordings made before the one-call planner (no planner_code call) replay call for call, none left over."""
    recorded, path = record(tmp_path, one_call=False)
    calls = load_transcript(path)["calls"]
    for c in calls:  # as recorded then: the answer writer had no summary, the planner no code
        if c["signature"] == "answer_writer":
            c["outputs"].pop("summary")
    summary = {**next(c for c in calls if c["signature"] == "answer_writer"), "signature": "interaction_summarizer",
               "kind": "summary", "outputs": {"summary": "Computed mean petal length by species."}}
    calls += [summary, summary]  # one per turn, as the summarizer ran after every answer then
    assert [c["signature"] for c in calls][:3] == ["planner", "statistics", "fixer"]
    lm, engine = replay_lm(calls, source=str(path))
    assert lm.plan_with_code is False
    replayed = run_item(ITEM, IRIS, lm, Settings.load({"home": tmp_path / "replay_home"}, environ={}))
    frame = read_frame(ITEM, IRIS)
    assert all(check(t, r, frame) == [] for t, r in zip(ITEM.turns, replayed))
    assert [r.answer for r in replayed] == [r.answer for r in recorded]
    assert engine.unused == [] and [n for n, _ in engine.matches].count("interaction_summarizer") == 2


def test_an_unrelated_prompt_change_still_replays(tmp_path, monkeypatch):
    _, path = record(tmp_path)
    calls = load_transcript(path)["calls"]
    # memory rendered differently (the planner's key input changes): matched by its anchor, the goal
    import auto_analyst.memory.context.recall as recall

    original = recall._turn
    monkeypatch.setattr(recall, "_turn", lambda item: {**original(item), "note": "rendered another way"})
    lm, engine = replay_lm(calls)
    replayed = run_item(ITEM, IRIS, lm, Settings.load({"home": tmp_path / "h2"}, environ={}))
    frame = read_frame(ITEM, IRIS)
    assert all(check(t, r, frame) == [] for t, r in zip(ITEM.turns, replayed))
    assert ("planner_code", "anchor") in engine.matches and engine.unused == []


def test_keys_hash_only_the_inputs_that_decide_the_answer():
    reg = default_registry()
    planner, stats = reg["planner"], reg["statistics"]
    base = {"goal": "mean  fare?", "short_term_memory": '{"turns": [], "summary": ""}',
            "dataset_description": "one description", "agent_descriptions": "x"}
    p1 = Prompt(outputs=[], objective="", inputs=base, json_mode=False)
    p2 = Prompt(outputs=[], objective="", inputs={**base, "dataset_description": "another", "goal": "Mean fare?"},
                json_mode=False)
    p3 = Prompt(outputs=[], objective="", inputs={**base, "short_term_memory": '{"summary": "", "turns": [1]}'},
                json_mode=False)
    assert call_keys(planner, p1) == call_keys(planner, p2)  # description, case and spacing do not matter
    assert call_keys(planner, p1)[0] != call_keys(planner, p3)[0]  # the memory does...
    assert call_keys(planner, p1)[1] == call_keys(planner, p3)[1]  # ...but the anchor (the goal) is the same
    assert call_keys(planner, p1) != call_keys(stats, p1)  # each Signature has its own keys


def test_a_prompt_with_no_recording_left_fails_saying_how_to_re_record(tmp_path):
    _, path = record(tmp_path)
    calls = [c for c in load_transcript(path)["calls"] if c["signature"] != "answer_writer"]
    lm, _ = replay_lm(calls, source="iris_two_turns.json")
    r = run_item(Item(id="x", table="datasets/iris.csv", turns=ITEM.turns[1:]), IRIS, lm,
                 Settings.load({"home": tmp_path / "h3"}, environ={}))[0]
    assert r.status == "error" and "re-record" in r.error.message and "answer_writer" in r.error.message


def test_break_first_script_changes_only_the_first_code_that_uses_the_column():
    reg = default_registry()
    apply = sabotage({"rename_column": ["price", "prise"]})
    assert apply(reg["planner"], {"plan": []}) is None
    assert apply(reg["statistics"], {"code": "show(df['units'].sum())"}) is None  # does not use it: next one
    assert apply(reg["statistics"], {"code": "show(df['price'].mean())"}) == {"code": "show(df['prise'].mean())"}
    assert apply(reg["statistics"], {"code": "show(df['price'].max())"}) is None  # once per turn
    prepend = sabotage({"prepend": "df = df.assign(price=df['price'].astype(str))"})
    assert prepend(reg["visualisation"], {"code": "show(df)"})["code"].startswith("df = df.assign(price=")


def test_suite_checks_values_computed_from_the_table():
    from auto_analyst.results import Result, TableOut

    frame = pd.read_csv(IRIS)
    turn = Turn(question="q", expect={"values": "df.groupby('species')['petal_length'].mean()",
                                      "mentions": ["setosa"], "labels": {"n": "len(df)"}})
    shown = TableOut(name="m", columns=["species", "mean"], rows=[["setosa", 1.462], ["versicolor", 4.26]], n_rows=2)
    r = Result(question="q", status="ok", answer="setosa 1.462, virginica 5.55 @n[150]", tables=[shown])
    assert check(turn, r, frame) == []
    r.answer = "setosa 1.462 @n[149]"
    problems = check(turn, r, frame)
    assert problems == ["@n[149], want 150", "values not shown: [5.552]"]
    assert check(Turn("q", {"value": "0.25"}), Result(question="q", status="ok", answer="a quarter: 25%"), frame) == []
