"""Column names of several words said as one phrase (issue 25): 'mean radius', 'worst texture', 'GDP per capita',
'avgWeeklyHours'. A phrase naming a column's whole name is one term, a statistic word inside it belongs to the column
when a statistic is said elsewhere, and a part several names share ('radius') declines naming them. Tables: sklearn's
breast_cancer (public, tuning material) and made-up ones (sensors with both `pressure` and `mean pressure`, staff,
countries); values are checked with pandas."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from sklearn.datasets import load_breast_cancer

from auto_analyst import Analyst, Settings
from auto_analyst.data.description import describe_tables
from auto_analyst.offline.canonical import render
from auto_analyst.offline.reader import read_question


def cancer() -> pd.DataFrame:
    return load_breast_cancer(as_frame=True).frame


def sensors(n: int = 120) -> pd.DataFrame:
    r = np.random.default_rng(4)
    p = r.normal(1000, 10, n).round(1)
    return pd.DataFrame({"site": r.choice(["North", "South", "East"], n), "pressure": p,
                         "mean pressure": (p + r.normal(0, 2, n)).round(1),
                         "max pressure": (p + r.uniform(1, 8, n)).round(1), "total rainfall": r.gamma(2, 3, n).round(1)})


def staff(n: int = 150) -> pd.DataFrame:
    r = np.random.default_rng(3)
    return pd.DataFrame({"Department": r.choice(["Sales", "IT", "HR"], n), "Years of Experience": r.integers(0, 31, n),
                         "avgWeeklyHours": r.normal(40, 5, n).round(1)})


def countries(n: int = 60) -> pd.DataFrame:
    r = np.random.default_rng(8)
    return pd.DataFrame({"Country": [f"Land{i}" for i in range(n)], "Continent": r.choice(["Europe", "Asia", "Africa"], n),
                         "GDP per capita": r.lognormal(9, 1, n).round(0), "Population": r.integers(10**5, 10**8, n)})


def rain(n: int = 12) -> pd.DataFrame:
    """Made up: a name ending in a statistic's word (`rainfall_total`, `score_avg`) beside the column it could summarise."""
    r = np.random.default_rng(6)
    return pd.DataFrame({"site": [f"S{i}" for i in range(n)], "region": r.choice(["N", "S"], n),
                         "rainfall": r.uniform(0, 10, n).round(2), "rainfall_total": r.uniform(50, 100, n).round(1),
                         "score_avg": r.uniform(1, 5, n).round(2), "score": r.integers(10, 100, n)})


def kaggle_cancer() -> pd.DataFrame:
    """sklearn's breast_cancer under the Kaggle copy's names: 'mean radius' is `radius_mean`, 'radius error'
    `radius_se`, 'worst radius' `radius_worst`."""
    def name(c: str) -> str:
        for head, tail in (("mean ", "_mean"), ("worst ", "_worst")):
            if c.startswith(head):
                return c[len(head):].replace(" ", "_") + tail
        return c.replace(" error", "_se").replace(" ", "_")
    return cancer().rename(columns=name)


def batting(n: int = 20) -> pd.DataFrame:
    """Made up, DABench's baseball names: 'batting' is also a form of a word of `number_of_runs_batted_in`."""
    r = np.random.default_rng(9)
    return pd.DataFrame({"batting_average": r.uniform(0.2, 0.3, n).round(3),
                         "on_base_percentage": r.uniform(0.25, 0.4, n).round(3),
                         "number_of_runs_batted_in": r.integers(10, 120, n)})


FRAMES = {"batting": batting, "cancer": cancer, "sensors": sensors, "staff": staff, "countries": countries, "rain": rain,
          "dry": lambda: rain().drop(columns=["rainfall_total"]), "kaggle": kaggle_cancer}


def read(table: str, question: str) -> tuple[str, list[str]]:
    desc = describe_tables({table: FRAMES[table]()}, active=table)
    s = read_question(question, desc, None)[-1]
    return (render(s) if s.answerable else "decline: " + " ".join(s.problems)), s.assumptions


ASKS = {
    "average mean radius": ("cancer", "What is the average mean radius by target?"),
    "corr": ("cancer", "What is the correlation between mean radius and mean area?"),
    "mean radius": ("cancer", "What is the mean radius?"),
    "texture error": ("cancer", "average texture error for each target"),
    "worst": ("cancer", "What is the median of the worst texture?"),
    "mean pressure": ("sensors", "What is the average mean pressure by site?"),
    "total rainfall": ("sensors", "What is the total rainfall by site?"),
    "mean rainfall": ("sensors", "mean rainfall"),
    "gdp": ("countries", "What is the average GDP per capita by continent?"),
    "gdp filter": ("countries", "How many countries have a GDP per capita above 10000?"),
    "weekly": ("staff", "average weekly hours by department"),
}


@pytest.fixture(scope="module")
def answers(tmp_path_factory):
    out = {}
    with Analyst(settings=Settings.load({"home": tmp_path_factory.mktemp("mwords")})) as analyst:
        sessions = {}
        for key, (table, question) in ASKS.items():
            if table not in sessions:
                sessions[table] = analyst.session()
                sessions[table].add_frame(table, FRAMES[table]())
            out[key] = sessions[table].ask(question)
    return out


def values(r) -> list:
    assert r.status == "ok", r.answer
    t = r.tables[0]
    return [row[-1] for row in t.rows]


def said(r, *words) -> bool:
    return any(all(w in a for w in words) for a in r.trace.assumptions)


def test_a_statistic_word_said_before_a_whole_name_is_the_statistic(answers):
    d = cancer()
    r = answers["average mean radius"]
    assert values(r) == pytest.approx(list(d.groupby("target")["mean radius"].mean()), rel=1e-6)
    assert said(r, "'mean radius'", "`mean radius`")
    assert values(answers["corr"]) == pytest.approx([d["mean radius"].corr(d["mean area"])], abs=1e-4)
    assert values(answers["worst"]) == pytest.approx([d["worst texture"].median()])


def test_the_name_alone_is_the_column_summarised_by_its_own_statistic(answers):
    r = answers["mean radius"]
    assert values(r) == pytest.approx([cancer()["mean radius"].mean()], rel=1e-4)
    assert said(r, "`mean radius`", "its mean")
    s = sensors()
    r = answers["total rainfall"]
    assert values(r) == pytest.approx(list(s.groupby("site")["total rainfall"].sum()), rel=1e-6)
    assert said(r, "`total rainfall`", "its sum")


def test_the_phrase_reaching_further_wins_over_a_statistic_word(answers):
    # 'average texture' (mean texture said otherwise) and 'texture error' overlap: the average of `texture error`
    d = cancer()
    assert values(answers["texture error"]) == pytest.approx(list(d.groupby("target")["texture error"].mean()), rel=1e-6)


def test_a_second_table(answers):
    s, c, w = sensors(), countries(), staff()
    assert values(answers["mean pressure"]) == pytest.approx(list(s.groupby("site")["mean pressure"].mean()), rel=1e-6)
    # 'mean' alone is the statistic, never a part naming the one column that has it (`mean pressure`)
    assert values(answers["mean rainfall"]) == pytest.approx([s["total rainfall"].mean()], rel=1e-6)
    # 'per capita' inside a column's name divides by nothing
    assert values(answers["gdp"]) == pytest.approx(list(c.groupby("Continent")["GDP per capita"].mean()), rel=1e-6)
    assert values(answers["gdp filter"]) == [int((c["GDP per capita"] > 10000).sum())]
    assert not said(answers["gdp"], "divided by")
    # 'average weekly hours': avgWeeklyHours expanded with its unit word kept
    assert values(answers["weekly"]) == pytest.approx(list(w.groupby("Department")["avgWeeklyHours"].mean()), rel=1e-6)


@pytest.mark.parametrize("table, question, expected", [
    # a part of several names: declined naming them, never one picked
    ("cancer", "What is the maximum radius?", "decline: 'radius' could be any of the columns mean radius, radius error, "
                                              "worst radius"),
    ("cancer", "What is the average radius?", "decline: 'average radius' could be the column `mean radius` or the mean "
                                              "of `radius error` or `worst radius`"),
    ("cancer", "concave points mean by target", "decline: 'concave points' could be any of the columns mean concave "
                                                "points, concave points error, worst concave points"),
    # the rest of the phrase names a column of its own: either reading is possible, so neither is taken
    ("sensors", "mean pressure by site", "decline: 'mean pressure' could be the column `mean pressure` or the mean of "
                                         "`pressure`"),
    ("sensors", "What is the max pressure?", "decline: 'max pressure' could be the column `max pressure` or the max of "
                                             "`pressure`"),
    # a ranking or a chart still wants a statistic for its groups, which the word could be
    ("sensors", "which site has the highest mean pressure?", "decline: 'mean pressure' could be the column"),
    # with a statistic of values said elsewhere the whole name is the column
    ("sensors", "median max pressure by site", "median of `max pressure` by `site`"),
    ("cancer", "plot mean radius by target", "bar chart of mean of `mean radius` by `target`"),
    ("sensors", "How many rows have a mean pressure above 1000?", "count of rows where `mean pressure` > 1000"),
    # a chart of no groups is the column's; a superlative word in a name ('worst') is no statistic of it
    ("sensors", "plot mean pressure", "histogram of `mean pressure`"),
    ("cancer", "What is the worst radius?", "decline: I can't tell which statistic"),
    # single words unchanged
    ("sensors", "average pressure by site", "decline: 'average pressure' could be the column `mean pressure`"),
    ("sensors", "median pressure by site", "median of `pressure` by `site`"),
    ("countries", "What is the average population by continent?", "mean of `Population` by `Continent`"),
    ("staff", "correlation between years of experience and avg weekly hours",
     "correlation between `Years of Experience` and `avgWeeklyHours`"),
])
def test_readings(table, question, expected):
    got, _ = read(table, question)
    assert got.startswith(expected), got


@pytest.mark.parametrize("table, question, expected", [
    # 'total rainfall' beside `rainfall` and `rainfall_total`: the column said word first, or the sum; neither taken
    ("rain", "what is the total rainfall?", "decline: 'total rainfall' could be the column `rainfall_total` or the sum "
                                            "of `rainfall`"),
    ("rain", "what is the rainfall total?", "decline: 'rainfall total' could be the column `rainfall_total` or the sum"),
    ("rain", "total rainfall by region", "decline: 'total rainfall' could be the column `rainfall_total` or the sum"),
    ("rain", "what is the mean score?", "decline: 'mean score' could be the column `score_avg` or the mean of `score`"),
    # the highest of one total is no reading: the column, said in the assumptions
    ("rain", "what is the highest total rainfall?", "maximum of `rainfall_total`"),
    # a statistic's word alone names no column ending in it (never `score_avg` for 'average')
    ("rain", "what is the average rainfall?", "mean of `rainfall`"),
    ("rain", "highest average rainfall by region", "which `region` has the highest mean of `rainfall`"),
    # no column `rainfall_total`: the highest of totals needs groups, never the maximum with 'total' dropped
    ("dry", "what is the highest total rainfall?", "decline: The highest total ranks groups"),
    ("dry", "what is the lowest average rainfall?", "decline: The lowest mean ranks groups"),
    ("dry", "what is the total rainfall?", "total of `rainfall`"),
    # a second table: the Kaggle names of breast_cancer ('mean radius' is `radius_mean`, never `radius_se`)
    ("kaggle", "What is the mean radius?", "mean of `radius_mean`"),
    # a rival reading needs the rest named by a column's own words: 'batting' ~ 'batted' is a form, no rival
    ("batting", "Create a new feature called 'diff' as the batting average minus the on base percentage. Calculate the "
                "mean of this new feature. Ignore the null values for batting average or on-base percentage.",
     "mean of `diff`"),
    ("kaggle", "correlation between mean radius and mean texture", "correlation between `radius_mean` and `texture_mean`"),
    ("kaggle", "What is the average texture by target?", "decline: 'average texture' could be the column `texture_mean` "
                                                         "or the mean of `texture_se` or `texture_worst`"),
])
def test_a_name_ending_in_a_statistic_word_said_with_the_word_first(table, question, expected):
    got, assumptions = read(table, question)
    assert got.startswith(expected), got
    if got.startswith("maximum of `rainfall_total`"):
        assert any("'total rainfall' as the column `rainfall_total`" in a for a in assumptions), assumptions
