"""Readings that answered another question than the one asked (2026-12-02).

A ranking by a measure the reader could not link ('the largest gross state product' on a table whose column is
`gsp`) declines instead of ranking by the number of rows; counting words ('the most rows', 'the most orders')
still count. "When was that?" after one highest or lowest value is the date of its row. Values of one column
joined by "and" with a statistic get the statistic each; "or" and "combined" keep one pooled figure.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from auto_analyst import Analyst, Settings


@pytest.fixture
def analyst(tmp_path):
    a = Analyst(settings=Settings.load({"home": tmp_path}), user="noor")
    yield a
    a.close()


def ask(analyst, name: str, frame: pd.DataFrame, question: str, before: tuple[str, ...] = ()):
    s = analyst.session()
    s.add_frame(name, frame)
    for q in before:
        s.ask(q)
    return s.ask(question)


def states() -> pd.DataFrame:
    rng = np.random.default_rng(3)
    names = ["Ohio", "Texas", "Utah", "Iowa", "Maine", "Idaho", "Nevada"]
    return pd.DataFrame({"state": np.repeat(names, 6), "year": np.tile(np.arange(1983, 1989), 7),
                         "gsp": rng.uniform(1e4, 9e4, 42).round()})


def shops() -> pd.DataFrame:
    rng = np.random.default_rng(4)
    n = 120
    return pd.DataFrame({"city": rng.choice(["Lyon", "Nice", "Metz", "Brest"], n),
                         "orders": rng.integers(1, 50, n).astype(float),
                         "season": rng.choice(["spring", "autumn"], n)})


@pytest.mark.parametrize("name,frame,question,words", [
    ("gsp", states(), "Which 5 states had the largest gross state product in 1986?", "gross state product"),
    ("shops", shops(), "Which season had the highest product sales?", "product sales"),
    ("shops", shops(), "Which 2 cities had the largest city product?", "city product"),
])
def test_a_ranking_by_an_unlinked_measure_declines(analyst, name, frame, question, words):
    r = ask(analyst, name, frame, question)
    assert r.status == "declined", r.answer
    assert words in r.answer


def test_counting_words_still_rank_by_rows(analyst):
    f = shops()
    r = ask(analyst, "shops", f, "Which city has the most rows?")
    assert r.status == "ok", r.answer
    assert r.tables[0].rows[0][0] == f.city.value_counts().idxmax()
    r = ask(analyst, "gsp", states(), "Which 2 states had the most rows in 1986?")
    assert r.status == "ok", r.answer


def monthly() -> pd.DataFrame:
    rng = np.random.default_rng(5)
    return pd.DataFrame({"date": pd.date_range("2001-01-01", periods=48, freq="MS"),
                         "unemploy": rng.integers(5000, 13000, 48), "pop": rng.integers(1000, 2000, 48)})


def yearly() -> pd.DataFrame:
    rng = np.random.default_rng(6)
    return pd.DataFrame({"year": np.arange(1990, 2020), "rainfall": rng.uniform(300, 900, 30).round(1),
                         "wheat": rng.uniform(2, 8, 30).round(2)})


@pytest.mark.parametrize("first,then", [("what is the maximum unemploy?", "When was that?"),
                                        ("what is the lowest pop?", "what date?")])
def test_when_was_that_is_the_date_of_the_extreme_row(analyst, first, then):
    f = monthly()
    col, low = ("pop", True) if "pop" in first else ("unemploy", False)
    at = f.loc[f[col].idxmin() if low else f[col].idxmax(), "date"]
    r = ask(analyst, "econ", f, then, before=(first,))
    assert r.status == "ok", r.answer
    assert pd.Timestamp(r.tables[0].rows[0][0]) == at
    assert str(f[col].min() if low else f[col].max()) not in r.answer.split("\n")[0]


def test_when_was_that_on_a_year_column(analyst):
    f = yearly()
    r = ask(analyst, "farm", f, "When was that?", before=("what is the highest rainfall?",))
    assert r.status == "ok", r.answer
    assert int(float(r.tables[0].rows[0][0])) == int(f.loc[f.rainfall.idxmax(), "year"])


@pytest.mark.parametrize("name,frame,first", [("econ", monthly(), "what is the mean unemploy?"),
                                              ("farm", yearly(), "what is the total wheat?")])
def test_when_was_that_after_a_figure_of_many_rows_declines(analyst, name, frame, first):
    r = ask(analyst, name, frame, "When was that?", before=(first,))
    assert r.status == "declined", r.answer
    assert "can't" in r.answer


def students() -> pd.DataFrame:
    rng = np.random.default_rng(8)
    n = 150
    frame = pd.DataFrame({"Sex": rng.choice(["Male", "Female"], n), "Height": rng.normal(168, 9, n).round(1),
                          "Age": rng.integers(18, 26, n)})
    frame.loc[frame.Sex == "Male", "Height"] += 10  # the pooled mean is neither group's
    return frame


def iris() -> pd.DataFrame:
    return pd.read_csv(Path(__file__).resolve().parents[2] / "datasets" / "iris.csv")


@pytest.mark.parametrize("name,make,question,col,measure,values", [
    ("students", students, "What's the average height of male and female students?", "Sex", "Height",
     ["Male", "Female"]),
    ("iris", iris, "mean petal_width for setosa and virginica", "species", "petal_width", ["setosa", "virginica"]),
    ("iris", iris, "mean sepal_length for setosa, versicolor and virginica", "species", "sepal_length",
     ["setosa", "versicolor", "virginica"]),
])
def test_values_joined_by_and_get_one_figure_each(analyst, name, make, question, col, measure, values):
    f = make()
    r = ask(analyst, name, f, question)
    assert r.status == "ok", r.answer
    got = {str(row[0]): row[1] for row in r.tables[0].rows}
    want = f[f[col].isin(values)].groupby(col)[measure].mean()
    assert set(got) == set(values)
    for v in values:
        assert got[v] == pytest.approx(want[v])
    assert "each of" in r.answer  # said in the assumptions


@pytest.mark.parametrize("name,make,question,col,measure,values", [
    ("students", students, "What's the average height of male or female students?", "Sex", "Height",
     ["Male", "Female"]),
    ("iris", iris, "mean petal_width for setosa and virginica combined", "species", "petal_width",
     ["setosa", "virginica"]),
    ("students", students, "average height of male and female students together", "Sex", "Height",
     ["Male", "Female"]),
])
def test_or_and_combined_keep_one_pooled_figure(analyst, name, make, question, col, measure, values):
    f = make()
    r = ask(analyst, name, f, question)
    assert r.status == "ok", r.answer
    assert r.tables[0].rows[0][0] == pytest.approx(f[f[col].isin(values)][measure].mean())


@pytest.mark.parametrize("name,frame,first", [("econ", monthly(), "Which month had the highest unemploy?"),
                                              ("farm", yearly(), "Which year had the lowest wheat?")])
def test_when_was_that_after_a_ranking_never_repeats_it(analyst, name, frame, first):
    r = ask(analyst, name, frame, "When was that?", before=(first,))
    assert r.status == "declined", r.answer
    assert "can't place it" in r.answer


@pytest.mark.parametrize("name, make, question, col, value, year, measure", [
    ("produc", lambda: pd.DataFrame({"state": np.repeat([f"STATE{i}" for i in range(47)] + ["TEXAS"], 17),
                                     "year": np.tile(np.arange(1970, 1987), 48), "gsp": np.arange(48 * 17) * 10.0}),
     "What was Texas's gsp in 1970?", "state", "TEXAS", 1970, "gsp"),  # 48 states: more than the values listed
    ("shops", lambda: shops().assign(year=2020), "What were Lyon's orders in 2020?", "city", "Lyon", 2020, "orders"),
])
def test_a_value_said_before_a_column_is_rows_never_a_qualifier(analyst, name, make, question, col, value, year, measure):
    """"Texas's gsp" names the Texas rows; it was read past as a qualifier of `gsp` (every state's gsp, said only in
    the assumptions: a blind question answered with 48 rows)."""
    f = make()
    r = ask(analyst, name, f, question)
    rows = f[(f[col] == value) & (f.year == year)]
    if r.status == "ok":
        want = rows[measure].iloc[0] if len(rows) == 1 else rows[measure].sum()
        assert f"{want:g}" in r.answer.replace(",", "") or str(round(want, 2)) in r.answer, r.answer
        assert f"{col} = {value}" in r.answer, r.answer
    else:
        assert r.status == "declined" and "as `" not in r.answer, r.answer
