"""An LM says what it can do in one record (``llm/capabilities.py``); the pipeline reads it once, not the model string."""

from __future__ import annotations

from dataclasses import replace

import pytest

from auto_analyst.agents.registry import default_registry
from auto_analyst.config import Settings, is_offline_model
from auto_analyst.llm.capabilities import HOSTED, Capabilities, capabilities_of
from auto_analyst.llm.providers import build_lm
from auto_analyst.llm.replay import replay_lm
from auto_analyst.pipeline import Pipeline, TurnContext
from auto_analyst.results import RunResult
from tests.scripted import ANALYST, ANSWER, PLANNER, scripted_lm


def test_each_lm_carries_its_record_and_one_without_is_a_hosted_model(tmp_path):
    offline = capabilities_of(build_lm(Settings.load({"home": tmp_path}, environ={})))
    assert offline == Capabilities(offline=True, plans_with_code=False, writes_sql=True, writes_duckdb_sql=False,
                                   deterministic=True)
    hosted, _ = scripted_lm({})
    assert capabilities_of(hosted) == HOSTED == Capabilities()
    replay, _ = replay_lm([{"signature": "planner", "outputs": {}}])  # recorded before the one-call planner
    assert capabilities_of(replay) == replace(HOSTED, plans_with_code=False)
    assert [is_offline_model(m) for m in ("offline", "", None, " local/offline ", "openai/gpt-4o-mini")] == \
        [True, True, True, True, False]


class Sandbox:
    def __init__(self):
        self.runs: list[str] = []

    def run(self, code, cancel=None):
        self.runs.append(code)
        return RunResult(ok=True, stdout="3.0\n")


@pytest.mark.parametrize("caps,declined", [(replace(HOSTED, offline=True, writes_duckdb_sql=False), True),
                                           (HOSTED, False)])
def test_the_pipeline_declines_by_the_record_not_by_the_model_string(tmp_path, caps, declined):
    handlers = {PLANNER: lambda p: {"intent": "analysis", "standalone_question": p.inputs["goal"], "assumptions": [],
                                    "plan": [{"agent": "statistics", "instruction": "mean", "uses": ["big"],
                                              "creates": []}], "decline_reason": ""},
                ANALYST: lambda p: {"code": "show(big['x'].mean(), name='mean')", "summary": "s"},
                ANSWER: lambda p: {"answer": "The mean is 3.0."}}
    lm, _ = scripted_lm(handlers)  # its model string is local/scripted either way
    lm.capabilities = caps
    sandbox = Sandbox()
    pipe = Pipeline(Settings.load({"home": tmp_path}, environ={}), lm, sandbox, default_registry())
    assert pipe.capabilities is caps and pipe.one_call is caps.plans_with_code
    result, after = pipe.ask(TurnContext(question="mean of x?", dataset_description="{}", tables=["big"], active="big",
                                         duckdb_tables=["big"]))
    after.run()
    if declined:
        assert result.status == "declined" and sandbox.runs == []
        assert result.answer.startswith("The embedded offline model cannot answer this yet: big is a DuckDB table")
    else:
        assert result.status == "ok" and result.answer == "The mean is 3.0." and len(sandbox.runs) == 1
