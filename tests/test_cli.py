"""The auto-analyst command: answers, JSON lines, exit codes, piped conversations."""

from __future__ import annotations

import json

import pandas as pd
import pytest
from click.testing import CliRunner

from auto_analyst.cli import cli


@pytest.fixture
def runner():
    return CliRunner()


def test_ask_prints_the_answer_the_script_and_exits_0(runner, datasets_dir):
    r = runner.invoke(cli, ["ask", str(datasets_dir / "iris.csv"), "What is the average petal length by species?"])
    assert r.exit_code == 0, r.output
    assert "setosa: 1.462" in r.output and "virginica: 5.552" in r.output
    assert "groupby(['species'])['petal_length'].mean()" in r.output  # the script that produced it


def test_ask_json_is_one_result_object(runner, datasets_dir):
    r = runner.invoke(cli, ["ask", str(datasets_dir / "grunfeld.csv"), "total invest by firm", "--json"])
    assert r.exit_code == 0, r.output
    result = json.loads(r.output.strip().splitlines()[-1])
    g = pd.read_csv(datasets_dir / "grunfeld.csv").groupby("firm")["invest"].sum()
    rows = dict(map(tuple, result["tables"][0]["rows"]))
    assert rows == pytest.approx(g.to_dict())
    assert set(result) >= {"question", "status", "answer", "error", "code", "stdout", "tables", "figures", "attempts",
                           "plan", "usage", "timings", "trace"}
    assert set(result["trace"]) >= {"intent", "memory_hits", "context", "source"}
    assert result["usage"]["lm_calls"] == 3 and result["trace"]["source"] == "ran_code"


def test_declined_question_exits_3(runner, datasets_dir):
    r = runner.invoke(cli, ["ask", str(datasets_dir / "iris.csv"), "Who will win the next election?"])
    assert r.exit_code == 3, r.output
    assert "election" in r.output


def test_missing_file_exits_2_with_one_sentence(runner, tmp_path):
    r = runner.invoke(cli, ["ask", str(tmp_path / "nope.csv"), "mean of x"])
    assert r.exit_code == 2
    assert "Traceback" not in r.output and "nope.csv" in r.output


def test_model_without_key_exits_2_with_one_sentence(runner, datasets_dir, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    r = runner.invoke(cli, ["ask", str(datasets_dir / "iris.csv"), "mean of sepal_length", "--model", "openai/gpt-4o-mini"])
    assert r.exit_code == 2
    assert "OPENAI_API_KEY" in r.output and "Traceback" not in r.output


def test_chat_reads_one_question_a_line_and_follow_ups_work(runner, datasets_dir):
    questions = "total invest by firm\nnow only for 1950\nwhich firm has the highest total invest?\n"
    r = runner.invoke(cli, ["chat", str(datasets_dir / "grunfeld.csv"), "--json"], input=questions)
    assert r.exit_code == 0, r.output
    results = [json.loads(line) for line in r.output.splitlines() if line.startswith("{")]
    assert [x["status"] for x in results] == ["ok", "ok", "ok"]
    g = pd.read_csv(datasets_dir / "grunfeld.csv")
    rows1950 = dict(map(tuple, results[1]["tables"][0]["rows"]))
    assert rows1950 == pytest.approx(g[g["year"] == 1950].groupby("firm")["invest"].sum().to_dict())
    assert "General Motors" in results[2]["answer"]


def test_trace_flag_prints_the_trace(runner, datasets_dir):
    r = runner.invoke(cli, ["ask", str(datasets_dir / "iris.csv"), "mean sepal_length", "--trace", "--no-code"])
    assert r.exit_code == 0
    assert "intent: analysis" in r.output and "usage: 3 LM calls" in r.output and "dataset=" in r.output and "question=" in r.output


def test_numbers_the_run_never_produced_are_flagged_beside_the_answer(capsys):
    # breaker W5: a model's answer said 42 where the run showed 3.758; only --json carried the flag
    from auto_analyst.cli.output import print_result
    from auto_analyst.results import Result

    r = Result(question="q", status="ok", answer="The mean petal length is **42** cm.")
    r.trace.unsupported_numbers = ["42"]
    print_result(r)
    assert "Check this answer: 42 is not in anything the run printed or showed." in capsys.readouterr().out
    r.trace.unsupported_numbers = []
    print_result(r)
    assert "Check this answer" not in capsys.readouterr().out


def test_a_reader_that_goes_away_gets_no_error_message(tmp_path):
    # new user: `auto-analyst history list | head -1` ended "Something went wrong inside Auto-Analyst (BrokenPipeError)"
    import os
    import subprocess
    import sys
    from pathlib import Path

    wide = tmp_path / "wide.csv"
    wide.write_text(",".join(f"column_{i}" for i in range(3000)) + "\n" + ",".join(str(i) for i in range(3000)) + "\n")
    exe = Path(sys.executable).with_name("auto-analyst")
    env = {**os.environ, "AUTO_ANALYST_HOME": str(tmp_path / "home")}
    p = subprocess.Popen([str(exe), "describe", str(wide)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    assert p.stdout.read(10)
    p.stdout.close()
    err = p.stderr.read().decode()
    assert p.wait(timeout=120) in (0, 1)
    assert "went wrong" not in err and "Traceback" not in err and "BrokenPipe" not in err, err


def test_a_database_file_in_place_of_a_table_gets_its_url(runner, tmp_path):
    """.db/.sqlite/.sqlite3/.duckdb are not 'unknown file types': the sentence gives the URL that opens them (a .db
    file's header says whether it is SQLite or DuckDB), and that URL answers."""
    import sqlite3

    db = tmp_path / "shop.db"
    with sqlite3.connect(db) as conn:
        conn.execute("CREATE TABLE orders (amount REAL)")
        conn.executemany("INSERT INTO orders VALUES (?)", [(1.0,), (5.0,)])
    conn.close()
    r = runner.invoke(cli, ["ask", str(db), "mean amount"])
    assert r.exit_code == 2 and "Unknown file type" not in r.output and "Traceback" not in r.output
    url = f"sqlite:///{db.resolve()}"
    assert f"open it by its URL instead: {url} " in r.output, r.output
    answered = runner.invoke(cli, ["ask", url, "mean amount", "--no-code"])
    assert answered.exit_code == 0 and "3" in answered.output, answered.output
    same = tmp_path / "shop.sqlite3"
    same.write_bytes(db.read_bytes())
    assert f"sqlite:///{same.resolve()} " in runner.invoke(cli, ["ask", str(same), "mean amount"]).output
    duck = tmp_path / "warehouse.duckdb"
    duck.write_bytes(b"")  # the suffix alone says DuckDB
    assert f"duckdb:///{duck.resolve()} " in runner.invoke(cli, ["ask", str(duck), "mean amount"]).output
    odd = tmp_path / "warehouse.db"
    odd.write_bytes(b"\0" * 8 + b"DUCK" + b"\0" * 100)  # DuckDB's header: 'DUCK' at byte 8
    assert f"duckdb:///{odd.resolve()} " in runner.invoke(cli, ["ask", str(odd), "mean amount"]).output


@pytest.mark.parametrize("name", ["notes.txt", "codebook.md"])
def test_a_data_dictionary_alone_says_it_was_read_as_one_and_exits_2(runner, tmp_path, name):
    path = tmp_path / name
    path.write_text("salary: yearly pay in dollars\nrank: academic rank\n")
    sentence = (f"Error: {name} was read as a data dictionary, not a table; load a table too (CSV, Excel, Parquet, "
                "JSON, or a database URL).")
    for command in (["ask", str(path), "how many rows?"], ["describe", str(path)]):
        r = runner.invoke(cli, command)
        assert r.exit_code == 2, r.output
        assert r.stderr.strip() == sentence and r.stdout == ""
    r = runner.invoke(cli, ["chat", str(path)], input="/quit\n")  # chat goes on: a table can still be /load-ed
    assert r.exit_code == 0 and f"{name} was read as a data dictionary, not a table; /load a table" in r.stderr


def test_a_data_dictionary_beside_a_table_is_no_error(runner, tmp_path, datasets_dir):
    notes = tmp_path / "notes.txt"
    notes.write_text("invest: gross investment of the firm\n")
    r = runner.invoke(cli, ["chat", str(datasets_dir / "grunfeld.csv"), str(notes)], input="total invest\n")
    assert r.exit_code == 0 and "data dictionary" not in r.stderr, r.output
    assert f"{pd.read_csv(datasets_dir / 'grunfeld.csv')['invest'].sum():.3f}" in r.stdout, r.stdout
