"""The denominator of a percent read from the question's words (reader/shares.py), on pandas and SQL alike.

A new user's wrong answers, checked with pandas: 'share of Female within each rank' gave how the women split across
ranks (25.64 % of them AssocProf) where each rank's own rows are the denominator (15.63 % of AssocProf are Female);
'what percentage of Prof are Female?' gave 18 / 397 (the whole table) where the Prof rows are the denominator;
grunfeld 'what fraction of each firm's total invest happened in 1950?' gave each firm's share of the 1950 total where
each firm's own total is the denominator. Tested on a salaries table with pydataset ``Salaries``' counts, grunfeld,
and a staff table none of the rules were written from.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from auto_analyst import Analyst, Settings

GRUNFELD = Path(__file__).resolve().parents[2] / "datasets" / "grunfeld.csv"


def salaries() -> pd.DataFrame:
    """pydataset's ``Salaries`` counts: 64 AssocProf (10 Female), 67 AsstProf (11), 266 Prof (18)."""
    rng = np.random.default_rng(3)
    rows = [(r, s) for r, n, f in (("AssocProf", 64, 10), ("AsstProf", 67, 11), ("Prof", 266, 18))
            for s in ["Female"] * f + ["Male"] * (n - f)]
    frame = pd.DataFrame(rows, columns=["rank", "sex"]).sample(frac=1, random_state=1, ignore_index=True)
    frame.insert(1, "discipline", rng.choice(["A", "B"], len(frame)))
    frame["salary"] = rng.integers(60000, 200000, len(frame))
    return frame


def staff() -> pd.DataFrame:
    rng = np.random.default_rng(11)
    n = 150
    return pd.DataFrame({"dept": rng.choice(["Sales", "Support", "Research"], n),
                         "contract": rng.choice(["Permanent", "Temporary"], n, p=[0.7, 0.3]),
                         "office": rng.choice(["Leeds", "Bristol"], n), "hours": rng.integers(10, 40, n)})


def _ask(tmp_path, name: str, frame: pd.DataFrame, question: str, sql: bool):
    with Analyst(settings=Settings.load({"home": tmp_path / ("sql" if sql else "pd")}, environ={})) as analyst:
        s = analyst.session()
        if sql:
            con = sqlite3.connect(tmp_path / "t.db")
            frame.to_sql(name, con, index=False, if_exists="replace")
            con.close()
            s.load(f"sqlite:///{tmp_path / 't.db'}")
            s.use(name)
        else:
            s.add_frame(name, frame)
        r = s.ask(question)
        s.settle()
        return r


def _shares(r, group: str) -> dict:
    assert r.status == "ok", r.answer
    t = r.tables[-1]
    return {row[t.columns.index(group)]: row[t.columns.index("share %")] for row in t.rows}


def _within(frame, group, column, value) -> dict:
    return (100 * pd.crosstab(frame[group], frame[column], normalize="index")[value]).round(2).to_dict()


@pytest.mark.parametrize("sql", [False, True], ids=["pandas", "sql"])
@pytest.mark.parametrize("question", ["share of Female within each rank", "proportion of Female in each rank",
                                      "percentage of Female by rank", "percent of Female for each rank"])
def test_share_of_a_value_within_each_group_is_of_the_groups_rows(tmp_path, question, sql):
    f = salaries()
    r = _ask(tmp_path, "salaries", f, question, sql)
    assert _shares(r, "rank") == pytest.approx(_within(f, "rank", "sex", "Female"))
    assert _shares(r, "rank") == pytest.approx({"AssocProf": 15.625, "AsstProf": 16.42, "Prof": 6.77}, abs=0.006)
    assert "each rank's own rows" in r.answer


def test_a_follow_up_keeps_the_groups_as_the_denominator_and_says_so(tmp_path):
    f = salaries()
    with Analyst(settings=Settings.load({"home": tmp_path}, environ={})) as analyst:
        s = analyst.session()
        s.add_frame("salaries", f)
        s.ask("share of Female within each rank")
        r = s.ask("now only for Male")
    assert _shares(r, "rank") == pytest.approx(_within(f, "rank", "sex", "Male"))
    assert "share % of each rank's own rows" in r.answer


@pytest.mark.parametrize("sql", [False, True], ids=["pandas", "sql"])
def test_within_each_group_on_a_second_table_keeps_a_common_condition(tmp_path, sql):
    f = staff()
    r = _ask(tmp_path, "staff", f, "share of Temporary within each dept in Leeds", sql)
    assert _shares(r, "dept") == pytest.approx(_within(f[f.office == "Leeds"], "dept", "contract", "Temporary"))
    assert "own rows with `office` == 'Leeds'" in r.answer
    r = _ask(tmp_path, "staff", f, "the Temporary share by dept", sql)
    assert _shares(r, "dept") == pytest.approx(_within(f, "dept", "contract", "Temporary"))


@pytest.mark.parametrize("sql", [False, True], ids=["pandas", "sql"])
def test_how_a_values_rows_split_across_groups_says_so(tmp_path, sql):
    f = staff()
    r = _ask(tmp_path, "staff", f, "what share of Temporary are in each dept", sql)
    temp = f[f.contract == "Temporary"]
    assert _shares(r, "dept") == pytest.approx((100 * temp.dept.value_counts() / len(temp)).round(2).to_dict())
    assert "split across dept" in r.answer


@pytest.mark.parametrize("sql", [False, True], ids=["pandas", "sql"])
@pytest.mark.parametrize("name, make, question, base, part", [
    ("salaries", salaries, "what percentage of Prof are Female?", ("rank", "Prof"), ("sex", "Female")),
    ("salaries", salaries, "of the Prof, what percent are Female?", ("rank", "Prof"), ("sex", "Female")),
    ("salaries", salaries, "what percent of Female are Prof?", ("sex", "Female"), ("rank", "Prof")),
    ("staff", staff, "what share of Research is Temporary?", ("dept", "Research"), ("contract", "Temporary")),
])
def test_percent_of_a_named_subset_is_of_its_rows(tmp_path, name, make, question, base, part, sql):
    f = make()
    r = _ask(tmp_path, name, f, question, sql)
    assert r.status == "ok", r.answer
    rows = f[f[base[0]] == base[1]]
    want = round(100 * (rows[part[0]] == part[1]).sum() / len(rows), 2)
    assert r.tables[-1].rows[0][0] == pytest.approx(want), r.answer
    assert "as a percent of the whole table" not in r.answer
    if question.startswith("what percentage of Prof"):
        assert want == 6.77


@pytest.mark.parametrize("sql", [False, True], ids=["pandas", "sql"])
def test_fraction_of_each_groups_own_total(tmp_path, sql):
    f = pd.read_csv(GRUNFELD)
    r = _ask(tmp_path, "grunfeld", f, "what fraction of each firm's total invest happened in 1950?", sql)
    want = (100 * f[f.year == 1950].groupby("firm").invest.sum() / f.groupby("firm").invest.sum()).round(2)
    got = _shares(r, "firm")
    assert got == pytest.approx(want.to_dict())
    assert got["American Steel"] == pytest.approx(3.48)


@pytest.mark.parametrize("question", ["share of Temporary over dept", "percentage of Temporary for dept"])
def test_a_grouped_share_of_a_value_the_words_do_not_place_declines(tmp_path, question):
    r = _ask(tmp_path, "staff", staff(), question, False)
    assert r.status != "ok", r.answer
    assert "each dept's own rows" in r.answer and "how they split" in r.answer


def test_a_share_of_a_total_by_group_stays_the_split(tmp_path):
    f = staff()
    r = _ask(tmp_path, "staff", f, "share of hours by dept", False)
    want = (100 * f.groupby("dept").hours.sum() / f.hours.sum()).round(2)
    assert _shares(r, "dept") == pytest.approx(want.to_dict())


@pytest.mark.parametrize("sql", [False, True], ids=["pandas", "sql"])
@pytest.mark.parametrize("name, question, base, part, column", [
    ("grunfeld", "what percent of invest in 1950 came from General Motors?", ("year", 1950), ("firm", "General Motors"),
     "invest"),
    ("staff", "what share of hours in Leeds came from Temporary staff?", ("office", "Leeds"), ("contract", "Temporary"),
     "hours"),
])
def test_part_of_a_total_that_came_from_some_rows(tmp_path, name, question, base, part, column, sql):
    f = pd.read_csv(GRUNFELD) if name == "grunfeld" else staff()
    r = _ask(tmp_path, name, f, question, sql)
    assert r.status == "ok", r.answer
    rows = f[f[base[0]] == base[1]]
    want = round(100 * rows.loc[rows[part[0]] == part[1], column].sum() / rows[column].sum(), 2)
    assert r.tables[-1].rows[0][0] == pytest.approx(want), r.answer


@pytest.mark.parametrize("question, plan_col, value, flag", [
    ("what share of Basic customers churned?", "plan", "Basic", "churned"),
    ("what percent of Temporary staff left?", "contract", "Temporary", "left"),
])
def test_a_yes_no_column_said_after_the_values_is_what_those_rows_did(tmp_path, question, plan_col, value, flag):
    """'what share of Basic customers churned': the Basic rows split across `churned` (the churned among the Basic), as
    before the denominators were read; a preposition before the column ('percentage of Basic for churned') declines."""
    rng = np.random.default_rng(5)
    n = 300
    f = pd.DataFrame({plan_col: rng.choice([value, "Other", "Third"], n), flag: rng.choice(["Yes", "No"], n, p=[0.3, 0.7])})
    r = _ask(tmp_path, "t", f, question, False)
    rows = f[f[plan_col] == value]
    assert _shares(r, flag) == pytest.approx((100 * rows[flag].value_counts() / len(rows)).round(2).to_dict())
    assert "split across" in r.answer
    assert _ask(tmp_path, "t", f, f"percentage of {value} for {flag}", False).status == "declined"
