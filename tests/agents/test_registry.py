"""The registry of Signatures: every Signature renders with DSPy's ChatAdapter and JSONAdapter, is identified
from the rendered prompt, and reads a reply back; agents are added through one checked route."""

from __future__ import annotations

import typing

import dspy
import pytest
from pydantic import BaseModel, ValidationError

from auto_analyst.agents import AnalystSignature
from auto_analyst.agents import signatures as sig
from auto_analyst.agents.registry import ANALYST_INPUTS, Registry, default_registry
from auto_analyst.errors import BadInputError, NotFoundError, UnknownSignature
from auto_analyst.llm.prompt_text import read_prompt, write_completion


class ForecastingSignature(AnalystSignature):
    """Forecasting analyst: fit a statsmodels time-series model and show the forecast."""


def _registry() -> Registry:
    reg = default_registry()
    reg.register_agent("forecasting", ForecastingSignature, "statsmodels: forecasts of a measure over time.")
    return reg


def _sample(annotation) -> object:
    """A valid value of a Signature field's type (str, list[str], Literal, list of a pydantic model)."""
    origin, args = typing.get_origin(annotation), typing.get_args(annotation)
    if origin is typing.Literal:
        return args[-1]
    if origin is list:
        return [_sample(args[0])]
    if origin is dict:
        return {"name": _sample(args[1])}
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return {name: _sample(f.annotation) for name, f in annotation.model_fields.items()}
    return {str: "some text", bool: True, int: 3, float: 1.5}[annotation]


def _signatures(reg: Registry):
    for entry in reg:
        yield entry, reg.planner_signature(entry.name) if entry.kind == "planner" else entry.signature


ENTRIES = [e.name for e in _registry()]


@pytest.mark.parametrize("adapter", [dspy.ChatAdapter(), dspy.JSONAdapter()], ids=["chat", "json"])
@pytest.mark.parametrize("name", ENTRIES)
def test_every_signature_renders_is_identified_and_reads_a_reply_back(adapter, name):
    reg = _registry()
    entry = reg[name]
    signature = reg.planner_signature(entry.name) if entry.kind == "planner" else entry.signature
    inputs = {k: f"value of {k}" for k in signature.input_fields}
    messages = adapter.format(signature, demos=[], inputs=inputs)
    system, user = messages[0]["content"], messages[-1]["content"]
    prompt = read_prompt(system, user)
    assert {k: prompt.inputs.get(k) for k in inputs} == inputs
    assert sorted(prompt.outputs) == sorted(signature.output_fields)
    assert prompt.json_mode == isinstance(adapter, dspy.JSONAdapter)
    assert reg.identify(prompt.outputs, prompt.objective) is entry

    values = {k: _sample(f.annotation) for k, f in signature.output_fields.items()}
    parsed = adapter.parse(signature, write_completion(prompt, values))
    as_plain = {k: [x.model_dump() if isinstance(x, BaseModel) else x for x in v] if isinstance(v, list) else v
                for k, v in parsed.items()}
    assert as_plain == values


def test_the_four_built_in_analysts_and_a_custom_one_are_told_apart_by_their_instructions():
    reg = _registry()
    assert [e.name for e in reg.analysts()] == ["preprocessing", "statistics", "visualisation", "machine_learning",
                                                "forecasting"]
    assert {e.outputs for e in reg.analysts()} == {frozenset({"code", "summary"})}
    for e in reg.analysts():
        rendered = "\n        ".join(e.signature.instructions.splitlines())  # as the adapters indent it
        assert reg.identify(["summary", "code"], rendered) is e
    assert reg.identify(["answer", "used_turns"], sig.MemoryAnswerSignature.instructions).name == "memory_answerer"
    assert reg.identify(["answer", "summary"], sig.AnswerSignature.instructions).name == "answer_writer"


def test_a_prompt_of_no_registered_signature_raises_unknown_signature():
    reg = default_registry()
    with pytest.raises(UnknownSignature, match="need_memory"):
        reg.identify(["intent", "need_memory", "need_data"], "Intent router: classify the message.")
    with pytest.raises(UnknownSignature, match="instructions"):  # analysts share outputs: instructions decide
        reg.identify(["code", "summary"], "Astrology analyst: read the stars.")
    # a single Signature with these outputs is found even with rewritten instructions (an optimizer's)
    assert reg.identify(["fixed_script", "explanation", "error_summary", "correction_summary"], "Fix the script, better worded.").name == "fixer"
    assert not hasattr(sig, "IntentSignature")


def test_the_planner_may_choose_exactly_the_registered_analysts():
    reg = _registry()
    step_type = typing.get_args(reg.planner_signature().output_fields["plan"].annotation)[0]
    step = step_type.model_validate({"agent": "forecasting", "instruction": "next 4 quarters"})
    assert step.agent == "forecasting"
    with pytest.raises(ValidationError):
        step_type.model_validate({"agent": "astrology", "instruction": "x"})
    assert reg.planner_signature().instructions == sig.PlannerSignature.instructions
    assert list(reg.agent_descriptions())[-1] == "forecasting"
    assert default_registry().planner_signature() is default_registry().planner_signature()  # cached per names


class NoCode(dspy.Signature):
    """Writes prose."""

    goal: str = dspy.InputField()
    text: str = dspy.OutputField()


class AsksForMore(AnalystSignature):
    """Needs a field the pipeline does not give."""

    secret_sauce: str = dspy.InputField()


class SameAsStatistics(AnalystSignature):
    __doc__ = sig.StatisticsAnalystSignature.__doc__


@pytest.mark.parametrize("name, signature, description, message", [
    ("Forecast!", ForecastingSignature, "d", "lower-case letters"),
    ("statistics", ForecastingSignature, "d", "already an agent"),
    ("planner", ForecastingSignature, "d", "already an agent or role"),
    ("prose", NoCode, "d", "needs a `code` output"),
    ("saucy", AsksForMore, "d", "secret_sauce"),
    ("forecasting", ForecastingSignature, "  ", "needs a description"),
    ("twin", SameAsStatistics, "d", "same output fields and instructions"),
    ("plain", str, "d", "must be a dspy.Signature"),
])
def test_a_bad_agent_is_refused_with_a_reason(name, signature, description, message):
    reg = default_registry()
    with pytest.raises(BadInputError, match=message):
        reg.register_agent(name, signature, description)
    assert [e.name for e in reg.analysts()] == ["preprocessing", "statistics", "visualisation", "machine_learning"]


def test_an_unknown_agent_name_suggests_close_names_and_picks_none():
    with pytest.raises(NotFoundError, match="Did you mean statistics"):
        default_registry().agent("statistic")
    with pytest.raises(NotFoundError, match="Agents: preprocessing, statistics"):
        default_registry().agent("combiner")  # a role, not an analyst


def test_analyst_inputs_are_what_the_pipeline_gives():
    assert ANALYST_INPUTS == {"goal", "dataset_description", "environment", "instruction", "earlier_steps", "creates",
                              "short_term_memory", "available_variables", "known_fixes"}


def test_each_analyst_keeps_its_own_registry():
    from auto_analyst import Analyst

    a, b = Analyst(), Analyst()
    a.register_agent("forecasting", ForecastingSignature, "statsmodels forecasts.")
    assert "forecasting" in a.agents() and "forecasting" not in b.agents()


def test_identify_remembers_its_answers_until_an_agent_is_registered():
    reg = default_registry()
    outputs = list(ForecastingSignature.output_fields)
    with pytest.raises(UnknownSignature):  # analysts share their outputs; no registered one has these instructions
        reg.identify(outputs, ForecastingSignature.instructions)
    reg.register_agent("forecasting", ForecastingSignature, "statsmodels: forecasts of a measure over time.")
    assert reg.identify(outputs, ForecastingSignature.instructions).name == "forecasting"
    planner = reg.identify(list(sig.PlannerSignature.output_fields), sig.PlannerSignature.instructions)
    assert reg.identify(list(sig.PlannerSignature.output_fields), sig.PlannerSignature.instructions) is planner
