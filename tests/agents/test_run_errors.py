"""The fixer runs only for the script's own faults: a table of run error kinds → fixable or not, and the loop."""

from __future__ import annotations

import pytest

from auto_analyst.agents.registry import default_registry
from auto_analyst.config import Settings
from auto_analyst.pipeline import Pipeline, TurnContext
from auto_analyst.results import ErrorInfo, RunResult
from auto_analyst.run_errors import NOT_FIXABLE, fixable, user_sentence
from tests.scripted import ANALYST, ANSWER, FIXER, PLANNER, scripted_lm

KINDS = [
    # (kind, message, fixable)
    ("KeyError", "KeyError: 'Fare'", True),
    ("ValueError", "ValueError: could not convert string to float: 'n/a'", True),
    ("SyntaxError", "SyntaxError: invalid syntax (line 3)", True),
    ("TypeError", "TypeError: unsupported operand", True),
    ("output_limit", "the script printed more than 1 MiB", True),
    ("PermissionError", "PermissionError: [Errno 13] Permission denied: 'out/x.csv'", True),
    ("PermissionError", "PermissionError: the sandbox does not allow network access: socket.connect", False),
    ("sandbox", "bubblewrap is not installed", False),
    ("timeout", "TimeoutError: the script ran longer than 60 s and was stopped", False),
    ("disk", "the script wrote more than the work folder's 200 MiB (run_disk_mb) and was stopped", False),
    ("memory", "MemoryError: (run_memory_mb=2048)", False),
    ("killed", "the script's process was killed (most likely out of memory)", False),
    ("worker_lost", "the worker died during the run", False),
    ("cancelled", "the run was cancelled", False),
]


@pytest.mark.parametrize("kind,message,expected", KINDS, ids=[f"{k}-{e}" for k, _, e in KINDS])
def test_the_table_of_run_error_kinds(kind, message, expected):
    assert fixable(ErrorInfo(kind=kind, message=message)) is expected


def test_every_kind_that_is_not_fixable_has_one_sentence_with_the_kind():
    for kind, sentence in NOT_FIXABLE.items():
        text = user_sentence(ErrorInfo(kind=kind, message=""))
        assert text.startswith(f"[{kind}] ") and sentence in text and text.count(". ") <= 1
    assert user_sentence(ErrorInfo(kind="PermissionError", message="PermissionError: the sandbox does not allow "
                                   "starting processes")).startswith("[refused] ")


class FailingSandbox:
    def __init__(self, kind, message):
        self.error, self.runs = ErrorInfo(kind=kind, message=message), 0

    def run(self, code, cancel=None):
        self.runs += 1
        return RunResult(ok=False, error=self.error, traceback=self.error.message)


def _ask(tmp_path, kind, message):
    handlers = {PLANNER: lambda p: {"intent": "analysis", "standalone_question": p.inputs["goal"], "assumptions": [],
                                    "plan": [{"agent": "statistics", "instruction": "mean", "uses": ["df"],
                                              "creates": []}], "decline_reason": ""},
                ANALYST: lambda p: {"code": "show(df['x'].mean(), name='mean')", "summary": "s"},
                FIXER: lambda p: {"fixed_script": p.inputs["script"] + "\n# fixed", "explanation": "e"},
                ANSWER: lambda p: {"answer": "done"}}
    lm, engine = scripted_lm(handlers)
    sandbox = FailingSandbox(kind, message)
    pipe = Pipeline(Settings.load({"home": tmp_path}, environ={}), lm, sandbox, default_registry())
    result, after = pipe.ask(TurnContext(question="mean of x?", dataset_description="{}", tables=["t"], active="t"))
    after.run()
    return result, engine, sandbox


@pytest.mark.parametrize("kind,message", [(k, m) for k, m, fix in KINDS if not fix and k != "cancelled"])
def test_the_fixer_is_never_called_for_an_error_the_script_cannot_fix(tmp_path, kind, message):
    result, engine, sandbox = _ask(tmp_path, kind, message)
    assert engine.calls(FIXER) == [] and sandbox.runs == 1
    assert result.status == "error" and result.error.kind == "sandbox" and result.attempts[-1].error.kind == kind
    assert result.answer == user_sentence(result.attempts[-1].error) and result.answer.startswith("[")


def test_the_fixer_is_called_for_the_scripts_own_error(tmp_path):
    result, engine, sandbox = _ask(tmp_path, "KeyError", "KeyError: 'x'")
    assert len(engine.calls(FIXER)) >= 1 and sandbox.runs >= 2
    assert result.status == "error" and result.error.kind == "internal" and result.attempts[-1].error.kind == "KeyError"
    # the user reads the message, never the Python class name
    assert result.answer == "The analysis could not be completed: 'x'", result.answer
