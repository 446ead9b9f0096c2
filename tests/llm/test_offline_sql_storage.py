"""SQLite keeps a value unlike its column's declared type as it was given ('N/A' in a REAL column stays TEXT), and
sums it as 0: the offline answer over the database must be the one the same data gives as a file (issue 23's testers).

The text values are made missing in the query (``typeof``), as a file's reader makes them, and the answer says how
many it left out; the 1000-row sample is not trusted to have seen them.
"""

from __future__ import annotations


import pandas as pd
import pytest

from auto_analyst.data.sql_driver import sqlite_numbers_only
from tests.sources_cases import file_and_sqlite_answers, shown_values

QUESTIONS = ["What is the total price?", "What is the average price by region?", "What is the maximum price?",
             "How many items have a price above 700?", "Which 2 items have the highest price?"]


def _rows(bad: str, early: bool) -> list[tuple]:
    n = 1500
    return [(f"r{i}", "NS"[i % 2], bad if ((i % 50 == 7) if early else (i > 1200 and i % 20 == 0)) else 1 + i * 0.5)
            for i in range(n)]


def _answers(tmp_path, rows: list[tuple]) -> dict[str, dict]:
    return file_and_sqlite_answers(tmp_path, "items", {"name": "TEXT", "region": "TEXT", "price": "REAL"}, rows, QUESTIONS)


@pytest.mark.parametrize("bad, early", [("N/A", False), ("oops", True)], ids=["past-the-sample", "in-the-sample"])
def test_text_in_a_real_column_gives_the_files_answer_and_says_it_was_left_out(tmp_path, bad, early):
    rows = _rows(bad, early)
    got = _answers(tmp_path, rows)
    for q in QUESTIONS:
        f, d = got["file"][q], got["db"][q]
        assert f.status == d.status == "ok", (q, f.answer, d.answer)
        assert sorted(shown_values(d)) == sorted(shown_values(f)), (q, f.answer, d.answer)
    n_text = sum(1 for r in rows if r[2] == bad)
    prices = pd.to_numeric(pd.Series([r[2] for r in rows]), errors="coerce")
    assert got["db"][QUESTIONS[0]].tables[0].rows[0][0] == pytest.approx(prices.sum())
    assert got["db"][QUESTIONS[2]].tables[0].rows[0][0] == pytest.approx(prices.max())  # SQLite ranks text above numbers
    assert f"Left out: {n_text} values of price that the database holds as text" in got["db"][QUESTIONS[0]].answer


def test_a_clean_table_says_nothing_left_out_and_dates_and_text_columns_are_not_number_columns(tmp_path):
    got = _answers(tmp_path, [(f"r{i}", "NS"[i % 2], 1.0 + i) for i in range(40)])
    assert got["db"][QUESTIONS[0]].tables[0].rows[0][0] == pytest.approx(sum(1.0 + i for i in range(40)))
    assert "Left out" not in got["db"][QUESTIONS[0]].answer
    assert [sqlite_numbers_only(t) for t in ("REAL", "INTEGER", "BIGINT", "NUMERIC(10, 2)", "DOUBLE PRECISION")] == [True] * 5
    assert [sqlite_numbers_only(t) for t in ("TEXT", "VARCHAR(20)", "", "BLOB", "DATE", "TIMESTAMP", "BOOLEAN")] == [False] * 7
