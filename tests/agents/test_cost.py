"""Cost per question and per session (LiteLLM's offline price list), and the caps that stop a question."""

from __future__ import annotations

import json

import litellm
import pandas as pd
import pytest
from click.testing import CliRunner

from auto_analyst import Analyst, Settings
from auto_analyst.llm.usage import price_per_token
from tests.scripted import ANALYST, ANSWER, PLANNER, SUMMARY, scripted_lm

FRAME = pd.DataFrame({"city": ["Lyon", "Paris", "Lyon"], "revenue": [10.0, 20.0, 30.0]})
HANDLERS = {
    PLANNER: lambda p: {"intent": "analysis", "standalone_question": p.inputs["goal"], "assumptions": [],
                        "plan": [{"agent": "statistics", "instruction": "total", "uses": ["df"], "creates": []}],
                        "decline_reason": ""},
    ANALYST: lambda p: {"code": "total = df['revenue'].sum()\nshow(total, name='total revenue')", "summary": "s"},
    ANSWER: lambda p: {"answer": "The total revenue is 60."},
    SUMMARY: lambda p: {"summary": "Summed revenue: 60."},
}


def ask(tmp_path, model="openai/gpt-4o-mini", **settings):
    lm, engine = scripted_lm(HANDLERS)
    with Analyst(model=model, settings=Settings.load({"home": tmp_path, **settings}), lm=lm) as analyst:
        s = analyst.session()
        s.add_frame("sales", FRAME)
        r = s.ask("total revenue?")
        s.settle()
        return r, s


def test_cost_of_a_question_and_of_the_session_from_the_price_list(tmp_path):
    r, s = ask(tmp_path)
    expected = sum(litellm.cost_per_token(model="openai/gpt-4o-mini", prompt_tokens=r.usage.prompt_tokens,
                                          completion_tokens=r.usage.completion_tokens))
    assert r.usage.lm_calls == 3 and r.usage.prompt_tokens > 0
    assert r.usage.cost_usd == pytest.approx(expected, rel=1e-6) and r.usage.cost_usd > 0
    assert s.usage.lm_calls == 4 and s.usage.cost_usd > r.usage.cost_usd  # the summary after the answer counts


def test_a_model_without_a_price_has_unknown_cost_unless_cost_model_names_one(tmp_path):
    r, _ = ask(tmp_path / "a", model="openai/bridge")
    assert r.usage.cost_usd is None
    r, _ = ask(tmp_path / "b", model="openai/bridge", cost_model="openai/gpt-4o-mini")
    assert r.usage.cost_usd == pytest.approx(sum(litellm.cost_per_token(
        model="openai/gpt-4o-mini", prompt_tokens=r.usage.prompt_tokens, completion_tokens=r.usage.completion_tokens)))
    assert price_per_token("offline") == (0.0, 0.0) and price_per_token("local/scripted") == (0.0, 0.0)


def test_past_the_prompt_token_cap_the_question_stops_with_kind_budget_and_keeps_what_ran(tmp_path):
    full, _ = ask(tmp_path / "full")
    planner_and_agent = full.usage.prompt_tokens - _answer_prompt_tokens(tmp_path / "probe")
    r, s = ask(tmp_path / "capped", max_prompt_tokens=planner_and_agent)
    assert r.status == "error" and r.error.kind == "budget" and "max_prompt_tokens" in r.error.message
    assert r.usage.lm_calls == 2 and r.plan and r.code  # the plan and the script ran...
    assert r.tables[0].rows == [[60.0]] and r.stdout == ""  # ...and what it showed is kept
    # a stopped question is not built upon: kept as not answered, so a follow-up of it declines naming it
    assert [(i.answered, i.summary.startswith("Not answered:")) for i in s.memory.items] == [(False, True)]


def test_past_the_cost_cap_the_question_stops(tmp_path):
    r, _ = ask(tmp_path, max_cost_usd=1e-9)
    assert r.status == "error" and r.error.kind == "budget" and r.usage.lm_calls == 1 and r.plan


def test_cli_shows_the_cost_and_json_carries_it(tmp_path, monkeypatch, datasets_dir):
    from auto_analyst.cli import cli

    monkeypatch.setenv("AUTO_ANALYST_HOME", str(tmp_path))
    runner = CliRunner()
    out = runner.invoke(cli, ["ask", str(datasets_dir / "iris.csv"), "mean sepal_length", "--json"])
    assert out.exit_code == 0, out.output
    usage = json.loads(out.output.strip().splitlines()[-1])["usage"]
    assert usage["cost_usd"] == 0.0 and usage["lm_calls"] == 3  # the embedded model is free
    text = runner.invoke(cli, ["ask", str(datasets_dir / "iris.csv"), "mean sepal_length", "--trace", "--no-code"])
    assert "usage: 3 LM calls" in text.output and "$0.0000" in text.output


def _answer_prompt_tokens(home) -> int:
    """Prompt tokens of the answer writer's call alone (the scripted engine counts 4 characters a token)."""
    lm, engine = scripted_lm(HANDLERS)
    with Analyst(settings=Settings.load({"home": home}), lm=lm) as analyst:
        s = analyst.session()
        s.add_frame("sales", FRAME)
        s.ask("total revenue?")
        s.settle()
    entry = next(e for e in lm.history if "resolved_question" in str(e["messages"]))
    return int(entry["usage"]["prompt_tokens"])



def test_usage_says_the_prompt_tokens_the_provider_served_from_its_cache(tmp_path):
    import dataclasses

    import dspy

    from tests.scripted import ScriptedEngine

    class CachingEngine(ScriptedEngine):  # reports, like OpenAI and Anthropic do, a cache hit of 100 tokens per call
        def complete(self, request):
            response = super().complete(request)
            return dataclasses.replace(response, usage=dataclasses.replace(response.usage, cache_read_tokens=100))

    engine = CachingEngine(HANDLERS)
    lm = dspy.LM("local/caching", engine=engine, cache=False, num_retries=0)
    with Analyst(model="openai/gpt-4o-mini", settings=Settings.load({"home": tmp_path}), lm=lm) as analyst:
        s = analyst.session()
        s.add_frame("sales", FRAME)
        r = s.ask("total revenue?")
        s.settle()
    assert r.usage.cached_prompt_tokens == 100 * r.usage.lm_calls
    assert r.usage.cached_share == round(100 * r.usage.lm_calls / r.usage.prompt_tokens, 4)
    assert s.usage.cached_prompt_tokens == 100 * s.usage.lm_calls
    from auto_analyst.cli.output import usage_text
    assert f"({100 * r.usage.lm_calls} cached)" in usage_text(r.usage)
