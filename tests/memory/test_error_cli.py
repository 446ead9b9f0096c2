"""`auto-analyst memory ...` through click's CliRunner."""

from __future__ import annotations

import json
from unittest.mock import patch

import pytest
from click.testing import CliRunner

from auto_analyst.cli.context import CliContext
from auto_analyst.cli.memory import memory
from auto_analyst.memory.errorfix.memory import ErrorMemory


@pytest.fixture
def filled(settings):
    with ErrorMemory(settings) as mem:
        ids = {
            "float": mem.add("ValueError could not convert string to float", "Use OneHotEncoder in a ColumnTransformer",
                             error_type="ValueError", agent="a", agent_version="1", dataset_fingerprint="f", user=None).id,
            "alice": mem.add("KeyError Sales not found", "Check df.columns", error_type="KeyError", agent="a",
                             agent_version="1", dataset_fingerprint="f", user="alice").id,
            "bob": mem.add("TypeError int plus str", "pd.to_numeric first", error_type="TypeError", agent="a",
                           agent_version="1", dataset_fingerprint="f", user="bob").id,
        }
    return ids


def _invoke(settings, *args: str, input: str | None = None, user: str = "carol"):
    return CliRunner().invoke(memory, list(args), obj=CliContext(settings, user), input=input)


def test_list_json_and_table(settings, filled):
    res = _invoke(settings, "list", "--json")
    assert res.exit_code == 0, res.output
    # carol sees only the shared entries: never another user's
    assert {e["id"] for e in json.loads(res.output)} == {filled["float"]}
    res = _invoke(settings, "list", "--json", user="bob")
    assert {e["id"] for e in json.loads(res.output)} == {filled["bob"], filled["float"]}
    res = _invoke(settings, "list", "--user", "alice", "--json")
    assert {e["id"] for e in json.loads(res.output)} == {filled["alice"], filled["float"]}
    res = _invoke(settings, "list", "--user", "alice")
    assert filled["alice"] in res.output and filled["bob"] not in res.output and "KeyError" in res.output


def test_search_shows_the_relevant_entry_first(settings, filled):
    res = _invoke(settings, "search", "ValueError: could not convert string to float: 'Basic'", "--user", "bob", "--k", "2", "--json")
    assert res.exit_code == 0, res.output
    hits = json.loads(res.output)
    assert hits[0]["id"] == filled["float"] and filled["alice"] not in {h["id"] for h in hits}
    res = _invoke(settings, "search", "could not convert string to float", "--user", "bob")
    assert res.output.splitlines()[0].startswith(filled["float"])


def test_forget_clear_reindex_prune(settings, filled):
    res = _invoke(settings, "forget", filled["bob"], user="alice")
    assert res.exit_code == 2 and "no entry" in res.output  # alice cannot delete bob's entry (not_found: exit 2)
    assert _invoke(settings, "forget", filled["bob"], user="bob").exit_code == 0
    res = _invoke(settings, "forget", filled["bob"], user="bob")
    assert res.exit_code == 2 and "no entry" in res.output
    assert _invoke(settings, "clear", "--user", "alice", "--yes", user="bob").exit_code == 2  # not bob's to clear
    res = _invoke(settings, "clear", "--user", "alice", input="y\n", user="alice")
    assert res.exit_code == 2 and "pass --yes" in res.output  # no terminal to answer on: nothing deleted
    with patch("auto_analyst.cli.confirm.stdin_is_terminal", return_value=True):
        res = _invoke(settings, "clear", "--user", "alice", input="n\n", user="alice")
    assert res.exit_code == 1  # aborted at the prompt
    res = _invoke(settings, "clear", "--user", "alice", "--yes", user="alice")
    assert res.exit_code == 0 and "Deleted 1 entries" in res.output
    res = _invoke(settings, "reindex")
    assert res.exit_code == 0 and "Indexed 1 entries" in res.output
    res = _invoke(settings, "prune")
    assert res.exit_code == 0 and "Pruned 0 entries" in res.output
    assert [e["id"] for e in json.loads(_invoke(settings, "list", "--json").output)] == [filled["float"]]


def test_bad_scope_and_settings_fallback(settings, monkeypatch):
    res = _invoke(settings, "list", "--scope", "mine")
    assert res.exit_code == 2 and "Invalid value" in res.output
    res = _invoke(settings, "list", "--scope", "user", "--json")
    assert res.exit_code == 0 and json.loads(res.output) == []  # carol has no entries of her own
    import click

    # Without ctx.obj the settings come from the environment (AUTO_ANALYST_HOME set by the conftest).
    ctx = click.Context(memory, obj=None)
    assert CliContext.of(ctx).settings.home == settings.home
