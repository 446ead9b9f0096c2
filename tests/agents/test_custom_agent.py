"""A custom agent: the forecasting example of docs/architecture.md runs, reached through the planner and
through ``@forecasting``; the offline model declines it honestly unless it can answer the question itself."""

from __future__ import annotations

import json
import re

import pandas as pd
import pytest
from click.testing import CliRunner
from statsmodels.tsa.holtwinters import ExponentialSmoothing

from auto_analyst import Settings
from auto_analyst.errors import NotFoundError
from tests.helpers import REPO, table, value
from tests.scripted import ANSWER, PLANNER, SUMMARY, scripted_lm

DATA = REPO / "datasets" / "us_macro.csv"
QUESTION = "realgdp for the next 4 quarters"

# what a language model would write for the forecasting agent (the test scripts it: tests run offline)
FORECAST_CODE = """import pandas as pd
from statsmodels.tsa.holtwinters import ExponentialSmoothing

series = df.set_index(pd.to_datetime(df['date']))['realgdp'].asfreq('QS')
fit = ExponentialSmoothing(series, trend='add').fit()
forecast = fit.forecast(4)
show(pd.DataFrame({'period': forecast.index.strftime('%Y-%m-%d'), 'forecast': forecast.values}), name='realgdp forecast')
"""


def example() -> dict:
    """The namespace of the custom-agent example in docs/architecture.md, run as a module (not as __main__)."""
    text = (REPO / "docs" / "architecture.md").read_text(encoding="utf-8")
    code = re.search(r"<!-- example: custom-agent -->\n```python\n(.*?)```", text, re.S).group(1)
    assert len(code.splitlines()) <= 25
    namespace = {"__name__": "docs_example"}
    exec(compile(code, "docs/architecture.md", "exec"), namespace)
    return namespace


def expected_forecast() -> list[float]:
    df = pd.read_csv(DATA)
    series = df.set_index(pd.to_datetime(df["date"]))["realgdp"].asfreq("QS")
    return list(ExponentialSmoothing(series, trend="add").fit().forecast(4).values)


def handlers(**extra):
    return {"forecasting": lambda p: {"code": FORECAST_CODE, "summary": "Holt's linear trend forecast."},
            ANSWER: lambda p: {"answer": "Forecast shown in the table."},
            SUMMARY: lambda p: {"summary": "forecast of realgdp"}, **extra}


def test_at_name_sends_the_question_to_the_agent_without_the_planner(tmp_path):
    ns = example()
    lm, engine = scripted_lm(handlers())  # no planner handler: a planner call would fail
    with ns["forecasting_analyst"](settings=Settings.load({"home": tmp_path}), lm=lm) as analyst:
        engine.registry = analyst.runtime.agents  # the engine reads prompts with this Analyst's agents
        s = analyst.session()
        s.load(DATA)
        r = s.ask(f"@forecasting {QUESTION}")
    assert r.status == "ok", (r.error, r.answer)
    assert [(p.agent, p.instruction) for p in r.plan] == [("forecasting", QUESTION)]
    assert engine.calls(PLANNER) == []
    prompt = engine.calls("forecasting")[0]
    assert prompt.inputs["instruction"] == QUESTION and prompt.objective.startswith("Forecasting analyst")
    got = table(r, "realgdp forecast")
    assert list(got["period"]) == ["2009-10-01", "2010-01-01", "2010-04-01", "2010-07-01"]
    assert list(got["forecast"]) == pytest.approx(expected_forecast(), rel=1e-9)
    assert r.usage.lm_calls == 2  # agent, answer writer (the summarizer runs after the answer)


def test_the_planner_is_told_about_the_agent_and_may_choose_it(tmp_path):
    ns = example()
    seen = {}

    def planner(p):
        seen["agents"] = json.loads(p.inputs["agent_descriptions"])
        return {"intent": "analysis", "standalone_question": p.inputs["goal"], "assumptions": [], "decline_reason": "",
                "plan": [{"agent": "forecasting", "instruction": QUESTION, "uses": ["us_macro"], "creates": []}]}

    lm, engine = scripted_lm(handlers(**{PLANNER: planner}))
    with ns["forecasting_analyst"](settings=Settings.load({"home": tmp_path}), lm=lm) as analyst:
        engine.registry = analyst.runtime.agents
        s = analyst.session()
        s.load(DATA)
        r = s.ask("Forecast realgdp for the next 4 quarters")
    assert r.status == "ok", (r.error, r.answer)
    assert list(seen["agents"]) == ["preprocessing", "statistics", "visualisation", "machine_learning", "forecasting"]
    assert seen["agents"]["forecasting"].startswith("statsmodels: forecasts")
    assert [p.agent for p in r.plan] == ["forecasting"]
    assert list(table(r, "realgdp forecast")["forecast"]) == pytest.approx(expected_forecast(), rel=1e-9)


def test_the_offline_model_declines_a_custom_agent_unless_it_can_answer_itself(tmp_path):
    ns = example()
    with ns["forecasting_analyst"](settings=Settings.load({"home": tmp_path})) as analyst:
        s = analyst.session()
        s.load(DATA)
        r = s.ask(f"@forecasting {QUESTION}")
        assert r.status == "declined" and r.code == "" and r.error is None
        assert "forecasting agent needs a language model" in r.answer and "--model" in r.answer
        r = s.ask("@forecasting mean of realgdp")
        assert r.status == "ok" and [p.agent for p in r.plan] == ["forecasting"]
        assert value(r, "mean realgdp") == pytest.approx(pd.read_csv(DATA)["realgdp"].mean())
        r = s.ask(f"forecast {QUESTION}")  # the offline planner never picks an agent it does not know
        assert r.status == "declined" and all(p.agent != "forecasting" for p in r.plan)


def test_an_unknown_agent_is_refused_with_close_names(tmp_path, datasets_dir):
    ns = example()
    with ns["forecasting_analyst"](settings=Settings.load({"home": tmp_path})) as analyst:
        s = analyst.session()
        s.load(DATA)
        with pytest.raises(NotFoundError, match="Did you mean forecasting"):
            s.ask("@forcasting realgdp next year")
        assert s.turn == 0 and s.results == []
    from auto_analyst.cli import cli

    r = CliRunner().invoke(cli, ["ask", str(datasets_dir / "iris.csv"), "@statistic mean of sepal_length"])
    assert r.exit_code == 2 and "Did you mean statistics" in r.output and "Traceback" not in r.output


def test_an_answer_format_is_not_an_agent_address():
    from auto_analyst.question_text import addressed_agent

    assert addressed_agent("@forecasting  sales next year ") == ("forecasting", "sales next year")
    assert addressed_agent("@mean_fare[mean_fare_value]") == (None, "@mean_fare[mean_fare_value]")
    assert addressed_agent("what is @x") == (None, "what is @x")
