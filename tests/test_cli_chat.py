"""``auto-analyst chat`` with piped input: /load and /use change the table the next question reads, the names
are those of describe, and a bad command is reported without ending the chat or changing its exit code."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from auto_analyst.cli import cli
from tests.test_session_tables import A, B, write_tables, write_workbook


@pytest.fixture
def runner():
    return CliRunner()


def results(output: str) -> list[dict]:
    """The --json result objects of a chat's output, in order (other lines skipped)."""
    return [json.loads(line) for line in output.splitlines() if line.startswith("{")]


def rows_of(result: dict, name: str) -> dict:
    t = next(t for t in result["tables"] if t["name"] == name)
    return {r[0]: r[1] for r in t["rows"]}


def test_load_and_use_in_chat_switch_the_table_the_next_question_reads(runner, tmp_path):
    a, b = write_tables(tmp_path)
    lines = ["total sales by region", f"/load {b}", "mean temp by city", "total sales", "/use a", "total sales",
             "now only EU", "/tables"]
    r = runner.invoke(cli, ["chat", a, "--json"], input="\n".join(lines) + "\n")
    assert r.exit_code == 0, r.output
    out = results(r.stdout)
    assert [x["status"] for x in out] == ["ok"] * 5
    assert rows_of(out[0], "total sales by region") == {"AS": 7.0, "EU": 15.0, "US": 20.0}
    assert rows_of(out[1], "mean temp by city") == {"Oslo": 2.0, "Paris": 11.25, "Rome": 20.0}
    assert out[2]["tables"][0]["rows"] == [[B["sales"].sum()]]  # the active table b
    assert out[3]["tables"][0]["rows"] == [[A["sales"].sum()]]  # after /use a
    assert out[4]["tables"][0]["rows"] == [[15.0]]
    assert "Loaded: b (4 rows); active: b" in r.stderr and "Active table: a" in r.stderr  # --json: stdout is results
    assert "a: a.csv, 4 rows x 2 columns  (active)\nb: b.csv, 4 rows x 3 columns" in r.stderr


def test_a_bad_use_is_reported_and_the_chat_goes_on_with_exit_code_0(runner, tmp_path):
    book = write_workbook(tmp_path / "econ.xlsx")
    lines = ["/tables", "/use fiar", "/use econ", "/use", "/frobnicate", "mean realgdp", "/use fair", "mean age",
             "/use econ_mac", "mean realgdp"]
    r = runner.invoke(cli, ["chat", book, "--no-code"], input="\n".join(lines) + "\n")
    assert r.exit_code == 0, r.output
    assert "econ_macrodata: econ.xlsx, sheet 'macrodata', 3 rows x 2 columns  (active)\n" \
           "econ_fair: econ.xlsx, sheet 'fair', 4 rows x 2 columns" in r.stdout
    assert "Error: No table 'fiar'. Did you mean 'econ_fair'?" in r.stderr
    assert "Error: 'econ' fits several tables (econ_macrodata, econ_fair); type more of the name." in r.stderr
    assert "Error: /use needs a table name" in r.stderr
    assert "Error: Unknown command '/frobnicate'; commands: /load FILE, /connect URL, /tables, /use NAME, /reset, /quit." in r.stderr
    assert "Traceback" not in r.output
    assert "**Mean realgdp**: 2.33" in r.stdout and "**Mean age**: 30.5" in r.stdout
    assert r.stdout.count("**Mean realgdp**: 2.33") == 2 and "Active table: econ_fair" in r.stdout


def test_describe_and_chat_show_the_same_sheet_names(runner, tmp_path):
    book = write_workbook(tmp_path / "econ.xlsx")
    described = runner.invoke(cli, ["describe", book, "--json"])
    assert described.exit_code == 0, described.output
    assert [t["name"] for t in json.loads(described.stdout)["tables"]] == ["econ_macrodata", "econ_fair"]


def test_a_failed_question_still_sets_the_exit_code(runner, tmp_path):
    a, _ = write_tables(tmp_path)
    r = runner.invoke(cli, ["chat", a, "--no-code"], input="@forcasting total sales\ntotal sales\n")
    assert r.exit_code == 2 and "**Total sales**: 42" in r.stdout


def test_the_chat_exits_with_the_worst_code_of_its_questions(runner, tmp_path):
    """As ask: 0 answered, 3 declined, 2 bad input; a declined question is not hidden behind a later answer, and
    bad input outranks a decline."""
    a, _ = write_tables(tmp_path)
    answered = runner.invoke(cli, ["chat", a, "--no-code"], input="total sales\n")
    assert answered.exit_code == 0, answered.output
    declined = runner.invoke(cli, ["chat", a, "--no-code"], input="Who will win the next election?\ntotal sales\n")
    assert declined.exit_code == 3, declined.output
    assert "**Total sales**: 42" in declined.stdout
    both = runner.invoke(cli, ["chat", a, "--no-code"],
                         input="@forcasting total sales\nWho will win the next election?\n")
    assert both.exit_code == 2, both.output
