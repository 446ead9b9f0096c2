"""Commands that ask before deleting, run from a script (no terminal): one sentence naming --yes, exit 2, nothing
deleted; with --yes they delete; on a terminal a 'no' still aborts (auto_analyst/cli/confirm.py)."""

from __future__ import annotations

from unittest.mock import patch

import pytest
from click.testing import CliRunner

from auto_analyst.api import Analyst
from auto_analyst.cli import cli
from auto_analyst.memory.errorfix.memory import ErrorMemory


@pytest.fixture
def alices_data(settings, datasets_dir):
    """alice's history turn and facts (one answered question) and one error-fix entry of hers."""
    with Analyst(settings=settings, user="alice") as analyst:
        s = analyst.session()
        s.load(datasets_dir / "iris.csv")
        assert s.ask("mean sepal_length by species").status == "ok"
        s.settle()
        assert analyst.history().turns() and analyst.facts().list()
    with ErrorMemory(settings) as mem:
        mem.add("KeyError Sales not found", "Check df.columns", error_type="KeyError", agent="a", agent_version="1",
                dataset_fingerprint="f", user="alice")
    return settings


def _counts(settings) -> tuple[int, int, int]:
    with Analyst(settings=settings, user="alice") as analyst:
        return (len(analyst.history().turns()), len(analyst.facts().list(limit=None)),
                len(analyst.fix_memory().list(scope="user")))


COMMANDS = [  # (arguments, the sentence said instead of deleting)
    (["history", "forget", "--all"], "Not forgetting the history of 'alice'"),
    (["memory", "clear", "--user", "alice"], "Not deleting the error-fix entries of 'alice'"),
    (["memory", "facts", "forget", "--all"], "Not forgetting the facts of 'alice'"),
]


@pytest.mark.parametrize("args,sentence", COMMANDS, ids=lambda a: " ".join(a) if isinstance(a, list) else "")
def test_a_confirming_command_without_a_terminal_says_to_pass_yes_and_deletes_nothing(alices_data, args, sentence):
    before = _counts(alices_data)
    for stdin in ("y\n", ""):  # piped (a script's 'y' is no terminal's answer) and `</dev/null`
        r = CliRunner().invoke(cli, ["--user", "alice", *args], input=stdin)
        assert r.exit_code == 2, r.output
        assert r.output.count("\n") == 1 and sentence in r.output and "pass --yes" in r.output, r.output
        assert "Aborted" not in r.output and "[y/N]" not in r.output
    assert _counts(alices_data) == before


def test_with_yes_each_deletes_only_its_own_part_and_on_a_terminal_no_aborts(alices_data):
    turns, facts, entries = _counts(alices_data)
    with patch("auto_analyst.cli.confirm.stdin_is_terminal", return_value=True):
        declined = CliRunner().invoke(cli, ["--user", "alice", "history", "forget", "--all"], input="n\n")
    assert declined.exit_code == 1 and "Forget all history of user 'alice'?" in declined.output
    assert _counts(alices_data) == (turns, facts, entries)
    r = CliRunner().invoke(cli, ["--user", "alice", "memory", "facts", "forget", "--all", "-y"])
    assert r.exit_code == 0 and f"Forgot {facts} facts." in r.output and _counts(alices_data) == (turns, 0, entries)
    r = CliRunner().invoke(cli, ["--user", "alice", "memory", "clear", "--user", "alice", "--yes"])
    assert r.exit_code == 0 and "Deleted 1 entries" in r.output and _counts(alices_data) == (turns, 0, 0)
    r = CliRunner().invoke(cli, ["--user", "alice", "history", "forget", "--all", "--yes"])
    assert r.exit_code == 0 and f"({turns} turns)" in r.output and _counts(alices_data) == (0, 0, 0)
