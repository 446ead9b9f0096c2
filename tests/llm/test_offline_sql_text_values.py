"""SQLite text in a number column that a file's reader does not make missing ('1,000' and '$30' it reads as numbers,
a column of '0x10' it does not read as numbers at all): the offline answer over the database must not differ from the
same data's answer as a file, so it declines naming the column (data/sqlite_text.py)."""

from __future__ import annotations


import pytest

from auto_analyst.data.sqlite_text import reading
from tests.sources_cases import file_and_sqlite_answers, shown_values

QUESTIONS = ["total amount by region", "What is the average amount?", "total qty by region"]


def _answers(tmp_path, rows: list[tuple]) -> dict[str, dict]:
    return file_and_sqlite_answers(tmp_path, "sales", {"region": "TEXT", "amount": "REAL", "qty": "INTEGER"}, rows, QUESTIONS)


def test_text_a_file_reads_as_numbers_is_declined_naming_the_column(tmp_path):
    rows = [("North", 10.5, 1), ("North", "1,000", 2), ("South", "n/a", 3), ("South", 20, 4), ("West", "$30", 5),
            ("West", 4, 6), ("East", 7, 7)]
    got = _answers(tmp_path, rows)
    f, d = got["file"][QUESTIONS[0]], got["db"][QUESTIONS[0]]
    assert f.status == "ok" and dict(map(tuple, f.tables[0].rows))["North"] == pytest.approx(1010.5)  # what a file gives
    for q in QUESTIONS[:2]:
        d = got["db"][q]
        assert d.status == "declined", (q, d.answer)
        assert "`amount` holds" in d.answer and "a file's reader reads as" in d.answer, d.answer
    # qty holds no text: answered, the same as the file
    f, d = got["file"][QUESTIONS[2]], got["db"][QUESTIONS[2]]
    assert f.status == d.status == "ok" and sorted(shown_values(d)) == sorted(shown_values(f))


def test_a_column_a_file_reads_as_text_is_declined_as_the_file_declines(tmp_path):
    bad = ["-", "?", "none", "0x10"]
    rows = [("NS"[i % 2], bad[i // 2 % 4] if i % 2 else 1.0 + i, i) for i in range(24)]
    got = _answers(tmp_path, rows)
    f, d = got["file"][QUESTIONS[0]], got["db"][QUESTIONS[0]]
    assert f.status == "declined" and "'amount' is not numeric" in f.answer, f.answer
    assert d.status == "declined" and "`amount` holds text such as '0x10'" in d.answer, d.answer


def test_placeholders_alone_keep_the_missing_reading_and_its_note(tmp_path):
    rows = [("NS"[i % 2], ["N/A", "-", "", "?"][i % 4] if i % 5 == 0 else 2.0 * i, i) for i in range(40)]
    got = _answers(tmp_path, rows)
    f, d = got["file"][QUESTIONS[0]], got["db"][QUESTIONS[0]]
    assert f.status == d.status == "ok", d.answer
    assert sorted(shown_values(d)) == sorted(shown_values(f))
    assert "Left out: 8 values of amount" in d.answer and "as reading the same data from a file does" in d.answer


def test_the_readers_verdict_on_counted_values():
    r = reading("amount", ["1,000", "n/a", "$30"], [1, 5, 2], 100)
    assert r.numbers == {"1,000": 1000.0, "$30": 30.0} and r.missing == ["n/a"] and "'1,000'" in r.problem()
    r = reading("amount", ["oops", "N/A"], [2, 10], 100)  # 2 unparsed cells of 102: a file makes them missing
    assert not r.problem() and r.missing == ["oops", "N/A"]
    r = reading("amount", ["oops"], [20], 100)  # 20 of 120: a file reads the column as text
    assert r.not_numeric and "'oops'" in r.problem()
