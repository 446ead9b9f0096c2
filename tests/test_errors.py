"""One error table for every surface: kinds → CLI exit codes and HTTP statuses; model failures keep their kind."""

from __future__ import annotations

import click
import dspy
import pandas as pd
import pytest
from click.testing import CliRunner
from dspy import lm15

from auto_analyst import Analyst, Settings
from auto_analyst import errors as E
from auto_analyst.cli.context import Group
from tests.helpers import REPO
from tests.scripted import scripted_lm

ALL_ERRORS = [E.AutoAnalystError, E.BadInputError, E.BadUploadError, E.DataLoadError, E.NotFoundError, E.ModelError,
              E.ModelConfigError, E.ModelOutputError, E.ModelRateLimitError, E.ModelTimeoutError,
              E.UnknownSignature, E.SandboxError, E.CancelledError, E.BudgetError]


def test_every_error_class_has_a_kind_in_the_table_and_the_documented_codes():
    assert sorted(E.__all__) == sorted([c.__name__ for c in ALL_ERRORS] + [
        "ERROR_KINDS", "EXIT_OK", "EXIT_DECLINED", "exit_code", "http_status"])
    assert {c.kind for c in ALL_ERRORS} == set(E.ERROR_KINDS)
    assert {k: E.ERROR_KINDS[k] for k in ("bad_input", "data_load", "model_config", "model", "cancelled", "internal")} \
        == {"bad_input": (2, 400), "data_load": (2, 400), "model_config": (2, 400), "model": (1, 502),
            "cancelled": (1, 409), "internal": (1, 500)}
    assert E.exit_code("KeyError") == 1 and E.http_status("KeyError") == 500  # a run error is not a kind
    assert E.DataLoadError("x").exit_code == 2 and E.ModelConfigError("x").http_status == 400
    doc = (REPO / "docs" / "architecture.md").read_text(encoding="utf-8")
    assert all(f"`{kind}`" in doc for kind in E.ERROR_KINDS)


def _cli_raising(exc: Exception) -> click.Group:
    @click.group(cls=Group)
    def top():
        pass

    @top.command("boom")
    def boom():
        raise exc

    return top


@pytest.mark.parametrize("cls", ALL_ERRORS, ids=lambda c: c.__name__)
def test_the_cli_exit_code_of_an_error_comes_from_the_table(cls):
    r = CliRunner().invoke(_cli_raising(cls("It broke; do this instead.")), ["boom"])
    assert r.exit_code == E.ERROR_KINDS[cls.kind][0]
    assert r.output == "Error: It broke; do this instead.\n"


def test_an_unexpected_exception_is_one_sentence_unless_errors_are_asked_for(monkeypatch):
    r = CliRunner().invoke(_cli_raising(ZeroDivisionError("division by zero")), ["boom"])
    assert r.exit_code == 1 and "Traceback" not in r.output
    assert "ZeroDivisionError: division by zero" in r.output and "AUTO_ANALYST_RAISE_ERRORS=1" in r.output
    monkeypatch.setenv("AUTO_ANALYST_RAISE_ERRORS", "1")
    r = CliRunner().invoke(_cli_raising(E.BadInputError("bad")), ["boom"])
    assert isinstance(r.exception, E.BadInputError)  # re-raised, not printed


class Failing:
    """An engine whose every call fails with ``exc`` (as a provider would)."""

    def __init__(self, exc):
        self.exc = exc

    def complete(self, request):
        raise self.exc

    def close(self):
        return None


@pytest.mark.parametrize("exc, kind", [
    (lm15.RateLimitError("slow down", retry_after=2.0), "model_rate_limit"),
    (lm15.AuthError("invalid api key"), "model_config"),
    (lm15.TimeoutError("no answer in 60 s"), "model_timeout"),
    (lm15.TransportError("connection reset"), "model"),
    (RuntimeError("something odd"), "model"),
])
def test_a_failed_model_call_keeps_its_kind(tmp_path, exc, kind):
    lm = dspy.LM("local/failing", engine=Failing(exc), cache=False, num_retries=0)
    with Analyst(settings=Settings.load({"home": tmp_path}), lm=lm) as analyst:
        s = analyst.session()
        s.add_frame("t", pd.DataFrame({"x": [1, 2]}))
        r = s.ask("mean of x")
    assert r.status == "error" and r.error.kind == kind, r.error
    assert r.error.message.startswith("The model call failed (") and r.usage.lm_calls == 1


def test_the_offline_model_declines_only_a_signature_of_no_registered_entry(monkeypatch):
    import dspy

    from auto_analyst.offline import engine as offline
    from auto_analyst.offline.engine import offline_lm

    class Classify(dspy.Signature):
        """Classify the message."""

        message: str = dspy.InputField()
        intent: str = dspy.OutputField()
        need_memory: list[str] = dspy.OutputField()

    lm = offline_lm()
    with dspy.context(lm=lm, adapter=lm.own_adapter):
        out = dspy.Predict(Classify)(message="hello")
    assert out.intent == "" and out.need_memory == []

    def broken(request, registry=None):
        raise KeyError("a bug in a handler")

    monkeypatch.setattr(offline, "respond", broken)
    with pytest.raises(KeyError, match="a bug in a handler"):  # a bug is not turned into an empty answer
        with dspy.context(lm=lm, adapter=lm.own_adapter):
            dspy.Predict(Classify)(message="hello")


def test_a_question_on_a_scripted_lm_that_scripts_no_answer_for_a_signature_fails_clearly(tmp_path):
    lm, _ = scripted_lm({})
    with Analyst(settings=Settings.load({"home": tmp_path}), lm=lm) as analyst:
        s = analyst.session()
        s.add_frame("t", pd.DataFrame({"x": [1, 2]}))
        r = s.ask("mean of x")
    assert r.status == "error" and r.error.kind == "model"
    assert "UnknownSignature" in r.error.message or "scripted no answer" in r.error.message


def test_model_errors_keep_the_data_dspy_gives():
    from dspy.utils import exceptions as dx

    from auto_analyst.llm.errors import model_error

    limited = model_error(dx.LMRateLimitError("slow down", retry_after=2.5))
    assert isinstance(limited, E.ModelRateLimitError) and limited.retry_after == 2.5
    assert "wait and ask again" in str(limited)

    from auto_analyst.agents.signatures import AnswerSignature

    parse = model_error(dx.AdapterParseError("ChatAdapter", AnswerSignature, "no fields here"))
    assert isinstance(parse, E.ModelOutputError) and parse.raw == "no fields here" and parse.kind == "model_output"
    assert type(model_error(ValueError("x"))) is E.ModelError


def test_an_unknown_provider_is_a_configuration_error_before_any_call():
    # breaker C1: 'nosuchprovider/xyz' was reported as a network failure (exit 1) after a call
    import pytest
    from auto_analyst.config import Settings
    from auto_analyst.errors import ModelConfigError
    from auto_analyst.llm.providers import check_model

    with pytest.raises(ModelConfigError, match="Unknown model provider in 'nosuchprovider/xyz'"):
        check_model(Settings.load(overrides={"model": "nosuchprovider/xyz", "api_key": "k"}))
    check_model(Settings.load(overrides={"model": "openai/bridge", "api_key": "k"}))  # a known provider passes


@pytest.mark.parametrize("kind,message,expected", [
    ("KeyError", "KeyError: 'Fare'", "internal"), ("output_limit", "the script printed more than 1 MiB", "internal"),
    ("sql_error", "no such column: fare", "internal"), ("sandbox", "bubblewrap is not installed", "sandbox"),
    ("PermissionError", "PermissionError: the sandbox does not allow network access: socket.connect", "sandbox"),
    ("timeout", "TimeoutError: the script ran longer than 60 s", "sandbox"), ("worker_lost", "it died", "sandbox"),
    ("memory", "MemoryError: (run_memory_mb=2048)", "sandbox"), ("cancelled", "the run was cancelled", "cancelled")])
def test_a_failed_run_is_reported_under_a_kind_of_the_table(kind, message, expected):
    from auto_analyst.results import ErrorInfo
    from auto_analyst.run_errors import reported

    shown = reported(ErrorInfo(kind=kind, message=message))
    assert shown.kind == expected and shown.kind in E.ERROR_KINDS
    # a budget's message says what to do (run_errors.REMEDIES); any other message is kept as it is
    assert shown.message == {"timeout": f"{message}; ask for less at once (a sample, fewer groups) or raise run_timeout "
                                        "(AUTO_ANALYST_RUN_TIMEOUT).",
                             "memory": f"{message}; ask for less at once or raise run_memory_mb "
                                       "(AUTO_ANALYST_RUN_MEMORY_MB)."}.get(kind, message)


def test_the_terminal_line_of_a_run_past_its_time_budget_says_what_to_do(settings, capsys):
    import dataclasses

    from auto_analyst.cli.output import exit_code, print_result

    with Analyst(settings=dataclasses.replace(settings, run_timeout=1)) as analyst:
        s = analyst.session()
        s.add_frame("t", pd.DataFrame({"x": [1.0, 2.0]}))
        result = s.run_code("import time\ntime.sleep(30)")
        print_result(result, show_code=False)
        line = capsys.readouterr().out.splitlines()[0]
        assert line == ("Error: TimeoutError: the script ran longer than 1 s and was stopped; ask for less at once "
                        "(a sample, fewer groups) or raise run_timeout (AUTO_ANALYST_RUN_TIMEOUT).")
        assert exit_code(result) == 1


def test_ask_json_never_carries_a_python_class_name_as_the_errors_kind(settings, capsys):
    import json

    from auto_analyst.cli.output import exit_code, print_result

    with Analyst(settings=settings) as analyst:
        s = analyst.session()
        s.add_frame("t", pd.DataFrame({"x": [1.0, 2.0]}))
        for code, cls, message in (("1/0", "ZeroDivisionError", "division by zero"),
                                   ("t['nope']", "KeyError", "'nope'")):
            result = s.run_code(code)
            print_result(result, as_json=True)
            out = json.loads(capsys.readouterr().out)
            assert out["status"] == "error" and out["error"]["kind"] == "internal", out["error"]
            assert out["error"]["message"] == f"{cls}: {message}" and out["attempts"][0]["error"]["kind"] == cls
            assert exit_code(result) == 1
            print_result(result, show_code=False)  # the text says the message, never the class nor 'internal'
            assert capsys.readouterr().out.splitlines()[0] == f"Error: {message}"
