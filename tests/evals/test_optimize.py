"""`auto-analyst optimize`: BootstrapFewShot over a train split; the saved program loads and changes the prompts."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
from click.testing import CliRunner

from auto_analyst import Analyst, Settings
from auto_analyst.agents.program import Program, program_path
from auto_analyst.evals.optimize import optimize
from tests.scripted import ANALYST, ANSWER, PLANNER, SUMMARY, scripted_lm

SHOP = pd.DataFrame({"item": ["a", "b", "c", "d"], "revenue": [10.0, 20.0, 30.0, 5.0], "units": [1, 2, 3, 4]})
QUESTIONS = [
    {"id": 1, "question": "What is the total revenue?", "constraints": "", "format": "@total[value]",
     "file_name": "shop.csv", "level": "easy", "concepts": ["Summary Statistics"], "labels": [["total", "65.0"]]},
    {"id": 2, "question": "What is the total of units?", "constraints": "", "format": "@total[value]",
     "file_name": "shop.csv", "level": "easy", "concepts": ["Summary Statistics"], "labels": [["total", "10"]]},
]


def split(tmp_path: Path) -> Path:
    d = tmp_path / "train"
    (d / "tables").mkdir(parents=True)
    SHOP.to_csv(d / "tables" / "shop.csv", index=False)
    (d / "questions.jsonl").write_text("\n".join(json.dumps(q) for q in QUESTIONS) + "\n")
    return d


def model():
    def column(goal):
        return "units" if "units" in goal else "revenue"

    def answer(p):
        (table,) = json.loads(p.inputs["tables"])
        return {"answer": f"@total[{table['rows'][0][0]}]"}

    return scripted_lm({
        PLANNER: lambda p: {"intent": "analysis", "standalone_question": p.inputs["goal"], "assumptions": [],
                            "plan": [{"agent": "statistics", "instruction": f"sum of {column(p.inputs['goal'])}",
                                      "uses": ["df"], "creates": ["total"], "types": {"total": "float"}}],
                            "decline_reason": ""},
        ANALYST: lambda p: {"code": f"total = df['{column(p.inputs['instruction'])}'].sum()\nshow(total, name='total')",
                            "summary": "sums"},
        ANSWER: answer, SUMMARY: lambda p: {"summary": "s"}})


def planner_messages(tmp_path: Path, **settings) -> list[dict]:
    lm, _ = model()
    with Analyst(settings=Settings.load({"home": tmp_path, **settings}), lm=lm) as analyst:
        s = analyst.session()
        s.add_frame("shop", SHOP)
        assert s.ask("What is the mean revenue?").status == "ok"
    return next(e["messages"] for e in lm.history if "standalone_question" in str(e["messages"][0]["content"]))


def test_the_compiled_program_is_saved_loaded_by_later_sessions_and_changes_their_prompts(tmp_path):
    lm, _ = model()
    settings = Settings.load({"home": tmp_path})
    done = optimize(settings, lm, split(tmp_path), name="shop", max_demos=1)
    assert done.path == program_path(tmp_path, "shop") == tmp_path / "programs" / "shop.json"
    assert done.questions == 2
    # the scripted model takes the one-call planner's route (its plans come without code, so the analyst runs too)
    assert done.demos["plan_coder.predict"] == 1 and done.demos["analysts['statistics'].predict"] == 1
    assert {k for k, v in done.demos.items() if v} == {"plan_coder.predict", "analysts['statistics'].predict"}

    loaded = Program().load_compiled(done.path)
    assert "plan_coder.predict" in loaded and "analysts['statistics'].predict" in loaded

    plain = planner_messages(tmp_path / "plain")
    tuned = planner_messages(tmp_path, program="shop")
    assert len(tuned) == len(plain) + 2  # the demo: one more user message and the model's reply
    demo = "\n".join(str(m["content"]) for m in tuned[1:3])
    assert "What is the total revenue?" in demo and "sum of revenue" in demo
    assert plain[0]["content"] == tuned[0]["content"]  # the instructions are unchanged (registry still identifies)


def test_a_missing_program_is_a_clear_bad_input(tmp_path):
    with Analyst(settings=Settings.load({"home": tmp_path, "program": "nope"}), lm=model()[0]) as analyst:
        s = analyst.session()
        s.add_frame("shop", SHOP)
        try:
            s.ask("total revenue")
        except Exception as exc:  # noqa: BLE001
            assert type(exc).__name__ == "BadInputError" and "auto-analyst optimize" in str(exc)
        else:
            raise AssertionError("a missing program must be refused")


def test_optimize_command_with_the_embedded_model(tmp_path, monkeypatch):
    from auto_analyst.cli import cli

    monkeypatch.setenv("AUTO_ANALYST_HOME", str(tmp_path / "home"))
    out = CliRunner().invoke(cli, ["optimize", "--trainset", str(split(tmp_path)), "--name", "offline_try"])
    assert out.exit_code == 0, out.output
    assert (tmp_path / "home" / "programs" / "offline_try.json").is_file()
    assert "AUTO_ANALYST_PROGRAM=offline_try" in out.output
