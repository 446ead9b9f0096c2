"""`auto-analyst eval dabench`: the benchmark's prompt format, its scoring rule, and the report."""

from __future__ import annotations

import json

from click.testing import CliRunner

from auto_analyst.evals.dabench import Question, prompt, score
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
    text = CliRunner().invoke(cli, ["eval", "dabench", "--split", folder, "--limit", "1"])
    assert "right 1 (100.0%)   wrong 0 (0.0%)   declined 0 (0.0%)" in text.output and "usage:" in text.output
