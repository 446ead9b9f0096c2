"""The embedded model is a DSPy adapter: it gets the Signature and the inputs as objects and never reads prompt text."""

from __future__ import annotations

import ast
from pathlib import Path

import dspy
import pandas as pd
import pytest

from auto_analyst.api import Analyst
from auto_analyst.config import Settings

OFFLINE = Path(__file__).resolve().parents[2] / "auto_analyst" / "offline"


def test_no_module_of_the_offline_package_imports_the_prompt_text_reader():
    for path in OFFLINE.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = [node.module or ""] if isinstance(node, ast.ImportFrom) else \
                [a.name for a in node.names] if isinstance(node, ast.Import) else []
            assert not any("prompt_text" in n or n.endswith(".replay") for n in names), path


def test_a_conversation_is_answered_without_rendering_or_parsing_a_prompt(tmp_path, monkeypatch):
    def refuse(*args, **kwargs):
        raise AssertionError("prompt text was rendered or parsed")

    import auto_analyst.llm.prompt_text as prompt_text

    monkeypatch.setattr(prompt_text, "read_prompt", refuse)
    monkeypatch.setattr(prompt_text, "write_completion", refuse)
    from auto_analyst.llm.adapter import ADAPTER

    # the adapter every hosted-model call goes through: rendering or parsing with it fails the test
    monkeypatch.setattr(ADAPTER, "format", refuse)
    monkeypatch.setattr(ADAPTER, "parse", refuse)
    frame = pd.DataFrame({"region": ["North", "South", "North", "East"], "revenue": [10.0, 20.0, 30.0, 5.5]})
    with Analyst(settings=Settings.load({"home": tmp_path})) as analyst:
        s = analyst.session()
        s.add_frame("sales", frame)
        r1 = s.ask("What is the total revenue by region?")
        r2 = s.ask("Now only North.")
    assert r1.status == "ok", r1.error
    by_region = dict(r1.tables[0].rows)
    assert by_region == {"North": 40.0, "South": 20.0, "East": 5.5}, r1.tables
    assert r2.status == "ok" and "40" in r2.answer, r2.answer
    assert r1.usage.lm_calls >= 3 and r1.usage.prompt_tokens > 0  # usage is still counted per call


def test_the_offline_lm_refuses_rendered_text_with_a_sentence():
    from auto_analyst.errors import ModelError
    from auto_analyst.offline.engine import offline_lm

    class Echo(dspy.Signature):
        """Say it back."""

        text: str = dspy.InputField()
        said: str = dspy.OutputField()

    lm = offline_lm()
    with dspy.context(lm=lm, adapter=dspy.ChatAdapter()), pytest.raises(Exception) as err:
        dspy.Predict(Echo)(text="hi")
    assert isinstance(err.value, ModelError) or "own_adapter" in str(err.value)


def test_each_model_call_is_one_typed_call_of_the_engine(tmp_path, monkeypatch):
    from auto_analyst.llm.offline.engine import OfflineEngine as OldPath
    from auto_analyst.offline.engine import OfflineEngine
    from auto_analyst.offline.request import Request

    assert OldPath is OfflineEngine  # the old import path still names it
    calls = []
    original = OfflineEngine.complete

    def counting(self, request):
        calls.append(request)
        return original(self, request)

    monkeypatch.setattr(OfflineEngine, "complete", counting)
    with Analyst(settings=Settings.load({"home": tmp_path})) as analyst:
        s = analyst.session()
        s.add_frame("t", pd.DataFrame({"x": [1.0, 2.0, 4.0]}))
        r = s.ask("mean of x")
    assert r.status == "ok" and calls and all(isinstance(c, Request) for c in calls)
    assert len(calls) >= r.usage.lm_calls  # the summaries after the answer are calls too


def test_outputs_are_typed_as_dspy_does_with_each_field_types_adapter_built_once():
    from typing import Literal

    from dspy.adapters.utils import parse_value
    from pydantic import BaseModel

    from auto_analyst.offline.adapter import _adapter, _typed

    class Step(BaseModel):
        agent: Literal["a", "b"]
        instruction: str

    cases = [(["x", "y"], list[str]), ([{"agent": "a", "instruction": "go"}], list[Step]), (True, bool),
             ("b", Literal["a", "b"]), ('["x"]', list[str]), (3, float), ({"k": 1}, dict[str, int])]
    for value, annotation in cases:
        assert _typed(value, annotation) == parse_value(value, annotation), (value, annotation)
    before = _adapter.cache_info().hits
    _typed(["z"], list[str])
    assert _adapter.cache_info().hits == before + 1
    with pytest.raises(ValueError):  # a wrong value fails as parse_value fails (pydantic's ValidationError)
        _typed([{"agent": "c", "instruction": "go"}], list[Step])
