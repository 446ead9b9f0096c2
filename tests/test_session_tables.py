"""Several tables in one session: the next question is planned against the active table, and only a real
follow-up builds on the table of the turn it follows; the one naming rule for tables and sheets; finding a table
by name, sheet or prefix."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from auto_analyst import Analyst, Settings
from auto_analyst.errors import BadInputError
from tests.helpers import table, value
from tests.scripted import ANALYST, ANSWER, PLANNER, SUMMARY, scripted_lm

# Both tables have a column `sales`: a question about it must read the active one.
A = pd.DataFrame({"region": ["EU", "US", "EU", "AS"], "sales": [10.0, 20.0, 5.0, 7.0]})
B = pd.DataFrame({"city": ["Paris", "Oslo", "Paris", "Rome"], "temp": [10.5, 2.0, 12.0, 20.0],
                  "sales": [1.0, 2.0, 3.0, 4.0]})


def write_tables(folder) -> tuple[str, str]:
    a, b = folder / "a.csv", folder / "b.csv"
    A.to_csv(a, index=False)
    B.to_csv(b, index=False)
    return str(a), str(b)


def write_workbook(path) -> str:
    with pd.ExcelWriter(path) as w:
        pd.DataFrame({"year": [2000, 2001, 2002], "realgdp": [1.5, 2.5, 3.0]}).to_excel(w, sheet_name="macrodata",
                                                                                     index=False)
        pd.DataFrame({"affairs": [0, 1, 3, 0], "age": [32, 27, 41, 22]}).to_excel(w, sheet_name="fair", index=False)
    return str(path)


@pytest.fixture
def analyst(tmp_path):
    with Analyst(settings=Settings.load({"home": tmp_path / "home"})) as a:
        yield a


def ok(session, question):
    r = session.ask(question)
    assert r.status == "ok", (question, r.status, r.answer, r.error, r.code)
    return r


def test_a_second_file_becomes_active_and_the_next_question_reads_it(analyst, tmp_path):
    a, b = write_tables(tmp_path)
    s = analyst.session()
    s.load(a)
    first = ok(s, "total sales by region")
    assert table(first, "total sales by region").set_index("region")["total sales"].to_dict() == \
        {"AS": 7.0, "EU": 15.0, "US": 20.0}
    s.load(b)
    assert s.active == "b"
    temps = ok(s, "mean temp by city")
    assert table(temps, "mean temp by city").set_index("city")["mean temp"].to_dict() == \
        {"Oslo": 2.0, "Paris": 11.25, "Rome": 20.0}
    assert value(ok(s, "total sales"), "total sales") == B["sales"].sum()  # b's sales, not a's
    s.settle()  # short-term memory is written after the answer returns (Session.settle)
    assert [i.tables for i in s.memory.items] == [["a"], ["b"], ["b"]]


def test_use_switches_the_table_of_the_next_question_and_follow_ups_stay_on_it(analyst, tmp_path):
    a, b = write_tables(tmp_path)
    s = analyst.session()
    s.load(a)
    s.load(b)
    ok(s, "mean temp by city")
    assert s.use("a") == "a"
    assert value(ok(s, "total sales"), "total sales") == A["sales"].sum()
    eu = ok(s, "now only EU")  # a follow-up of the turn on a
    assert value(eu, "total sales") == 15.0
    assert s.use("b") == "b"
    assert value(ok(s, "mean temp"), "mean temp") == pytest.approx(B["temp"].mean())
    paris = ok(s, "now only Paris")
    assert value(paris, "mean temp") == pytest.approx(11.25)


def test_only_a_real_follow_up_builds_on_the_earlier_turns_table(analyst, tmp_path):
    a, b = write_tables(tmp_path)
    s = analyst.session()
    s.load(a)
    ok(s, "total sales by region")
    s.load(b)
    chart = ok(s, "plot that")  # refers back: the previous turn's result, on a
    assert chart.figures and "data_1 = a\n" in chart.code
    assert table(chart, "total sales by region")["total sales"].tolist() == [20.0, 15.0, 7.0]
    s.settle()  # short-term memory is written after the answer returns (Session.settle)
    assert s.memory.items[-1].tables == ["a"]
    rows = ok(s, "how many rows are there")  # a question of its own: the active table
    s.settle()
    assert value(rows, "number of rows") == len(B) and s.memory.items[-1].tables == ["b"]


def test_the_planner_of_any_model_is_told_the_active_table_and_each_turns_table(tmp_path):
    a, b = write_tables(tmp_path)
    step = [{"agent": "statistics", "instruction": "compute", "uses": ["df"], "creates": []}]
    lm, engine = scripted_lm({
        PLANNER: lambda p: {"intent": "analysis", "standalone_question": p.inputs["goal"], "plan": step,
                            "assumptions": [], "decline_reason": ""},
        ANALYST: lambda p: {"code": "show(len(df), name='rows')", "summary": "rows"},
        ANSWER: lambda p: {"answer": "Counted."},
        SUMMARY: lambda p: {"summary": "counted the rows"},
    })
    with Analyst(settings=Settings.load({"home": tmp_path / "home"}), lm=lm) as analyst:
        s = analyst.session()
        s.load(a)
        assert value(s.ask("how many rows"), "rows") == len(A)
        s.load(b, name="weather")
        s.use("weather")
        assert value(s.ask("how many rows"), "rows") == len(B)
    second = engine.calls(PLANNER)[1]
    memory = json.loads(second.inputs["short_term_memory"])
    assert memory["active_table"] == "weather"
    assert [(t["turn"], t["tables"]) for t in memory["turns"]] == [(1, ["a"])]
    assert json.loads(second.inputs["dataset_description"])["active"] == "weather"


def test_workbook_sheets_are_named_once_and_found_by_name_sheet_or_prefix(analyst, tmp_path):
    book = write_workbook(tmp_path / "econ.xlsx")
    s = analyst.session()
    assert [t.name for t in s.load(book)] == ["econ_macrodata", "econ_fair"]
    assert [t.name for t in s.describe().tables] == ["econ_macrodata", "econ_fair"]
    assert [t.name for t in s.describe().description.tables] == ["econ_macrodata", "econ_fair"]
    assert s.active == "econ_macrodata"
    assert s.use("fair") == "econ_fair"  # the sheet's name
    assert s.use("econ_m") == "econ_macrodata"  # an unambiguous start
    assert s.use("Econ Fair") == "econ_fair"  # the name as typed
    with pytest.raises(BadInputError, match=r"'econ' fits several tables \(econ_macrodata, econ_fair\)"):
        s.use("econ")
    with pytest.raises(BadInputError, match=r"No table 'econ_fiar'\. Did you mean 'econ_fair'"):
        s.use("econ_fiar")
    assert s.active == "econ_fair"  # a failed switch changes nothing
    assert value(ok(s, "mean age"), "mean age") == pytest.approx(30.5)
    # the same names whatever name the file is stored under (the page stores uploads under random names)
    other = analyst.session()
    renamed = tmp_path / "x81be.xlsx"
    renamed.write_bytes((tmp_path / "econ.xlsx").read_bytes())
    assert [t.name for t in other.load(renamed, name="econ")] == ["econ_macrodata", "econ_fair"]
    one = tmp_path / "single.xlsx"
    A.to_excel(one, sheet_name="Sheet1", index=False)
    assert [t.name for t in other.load(one)] == ["single"]  # one sheet of data: named like a file


def test_a_resumed_session_keeps_each_table_its_name_and_the_active_one(analyst, tmp_path):
    book = write_workbook(tmp_path / "econ.xlsx")
    a, _ = write_tables(tmp_path)
    s = analyst.session()
    s.load(book)
    s.load(a)
    s.use("fair")
    ok(s, "mean age")
    back = analyst.resume(s.id)
    assert list(back.tables) == ["econ_macrodata", "econ_fair", "a"] and back.active == "econ_fair"
    assert back.memory.items[-1].tables == ["econ_fair"]
    assert value(ok(back, "mean affairs"), "mean affairs") == pytest.approx(1.0)
