"""`auto-analyst eval dabench`: the benchmark's prompt format, its scoring rule, and the report."""

from __future__ import annotations

import json

from click.testing import CliRunner

from auto_analyst.evals.dabench import Question, evaluate, prompt, score
from tests.evals.test_optimize import split


def test_the_question_is_sent_as_the_benchmark_poses_it():
    q = Question(id=1, question="Mean fare?", constraints="Round to\ntwo decimals.", format="@mean_fare[v]",
                 file_name="t.csv", labels=[["mean_fare", "34.65"]])
    assert prompt(q) == "Mean fare? Round to two decimals. @mean_fare[v]"
    assert prompt(q, "simplified") == "Mean fare? @mean_fare[v]"


def test_the_benchmark_scoring_rule():
    labels = [["a", "0.21"], ["b", "linear"]]
    assert score("ok", "@a[0.2100000001] and @b[linear]", labels) == "right"  # numbers within 1e-6
    assert score("ok", "@a[0.21] @b[Linear]", labels) == "wrong"  # strings must be equal
    assert score("ok", "@a[0.21]", labels) == "wrong"  # every sub-answer is needed
    assert score("declined", "@a[0.21] @b[linear]", labels) == "declined"


def test_eval_command_reports_right_wrong_declined_tokens_and_cost(tmp_path, monkeypatch):
    from auto_analyst.cli import cli

    monkeypatch.setenv("AUTO_ANALYST_HOME", str(tmp_path / "home"))
    folder = str(split(tmp_path))
    out = CliRunner().invoke(cli, ["eval", "dabench", "--split", folder, "--json"])
    assert out.exit_code == 0, out.output
    report = json.loads(out.output.strip().splitlines()[-1])
    assert report["questions"] == 2 and report["right"] + report["wrong"] + report["declined"] == 2
    assert report["right"] == 2  # the embedded model answers both sums in the asked format
    assert report["usage"]["lm_calls"] >= 6 and report["usage"]["cost_usd"] == 0.0
    assert [r["id"] for r in report["rows"]] == [1, 2]
    # one step, no fix: plan, code, answer; the summary after the answer is in usage but not in the row's calls
    assert [(r["plan_steps"], r["round_trips"], r["usage"]["lm_calls"]) for r in report["rows"]] == [(1, 3, 3)] * 2
    assert report["per_question"] == {"lm_calls": 3.0, "round_trips": 3.0}
    text = CliRunner().invoke(cli, ["eval", "dabench", "--split", folder, "--limit", "1"])
    assert "right 1 (100.0%)   wrong 0 (0.0%)   declined 0 (0.0%)" in text.output and "usage:" in text.output
    assert "per question: 3.0 LM calls and 3.0 sequential round trips" in text.output


def test_shards_are_disjoint_deterministic_and_cover_the_split(tmp_path):
    from auto_analyst.errors import BadInputError
    from auto_analyst.evals.dabench import load_split

    d = tmp_path / "s"
    (d / "tables").mkdir(parents=True)
    rows = [{"id": 10 * i, "question": f"q{i}", "format": "@x[v]", "file_name": "t.csv", "labels": [["x", "1"]]}
            for i in range(7)]
    (d / "questions.jsonl").write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    shards = [[q.id for q in load_split(d, shard=(k, 3))] for k in (1, 2, 3)]
    assert shards == [[0, 30, 60], [10, 40], [20, 50]]  # position i goes to shard i % 3 + 1
    assert sorted(sum(shards, [])) == [q.id for q in load_split(d)]
    assert [q.id for q in load_split(d, limit=1, shard=(2, 3))] == [10]  # the shard first, then the limit
    try:
        load_split(d, shard=(4, 3))
    except BadInputError as exc:
        assert "4/3" in str(exc)
    else:
        raise AssertionError("shard 4/3 was accepted")


def test_eval_command_runs_one_shard_and_rejects_a_bad_one(tmp_path, monkeypatch):
    from auto_analyst.cli import cli

    monkeypatch.setenv("AUTO_ANALYST_HOME", str(tmp_path / "home"))
    folder = str(split(tmp_path))
    out = CliRunner().invoke(cli, ["eval", "dabench", "--split", folder, "--shard", "2/2", "--json"])
    assert out.exit_code == 0, out.output
    report = json.loads(out.output.strip().splitlines()[-1])
    assert [r["id"] for r in report["rows"]] == [2] and report["right"] == 1
    bad = CliRunner().invoke(cli, ["eval", "dabench", "--split", folder, "--shard", "3/2"])
    assert bad.exit_code == 2 and "K/N" in bad.output


def test_each_question_stands_alone_no_memory_facts_or_variables_of_an_earlier_one(tmp_path):
    from auto_analyst import Analyst, Settings
    from tests.evals.test_optimize import model

    lm, _ = model()
    with Analyst(settings=Settings.load({"home": tmp_path / "home"}, environ={}), lm=lm) as analyst:
        report = evaluate(analyst, split(tmp_path))
    assert [r["verdict"] for r in report.rows] == ["right", "right"]
    planners = [e["messages"][-1]["content"] for e in lm.history
                if "standalone_question" in str(e["messages"][0]["content"])]
    assert len(planners) == 2
    second = planners[1]
    # the first question's finding (total revenue 65.0) and its variable are not offered to the second
    assert "65.0" not in second and "revenue" not in second.split("[[ ## user_context ## ]]")[1]
    analysts = [e["messages"][-1]["content"] for e in lm.history if "[[ ## available_variables ## ]]" in
                str(e["messages"][-1]["content"])]
    assert all("total" not in a.split("[[ ## available_variables ## ]]")[1].split("[[")[0] for a in analysts)
