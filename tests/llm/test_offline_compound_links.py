"""Links a new user found wrong (checked with pandas): column names joining a word and an abbreviation (`brainwt` beside
`bodywt`), a column's words said in another order ('total sleep' for `sleep_total`), and a head word with a second
column beside it ('interest rate' with `realint` and `tbilrate`). Tables: a small msleep-like one (pydataset's `msleep`
columns), the bundled us_macro, and made-up second tables; values are checked with pandas."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from auto_analyst.data.description import describe_tables
from auto_analyst.offline.canonical import render
from auto_analyst.offline.reader import read_question

DATASETS = Path(__file__).resolve().parents[2] / "datasets"


def msleep(n: int = 60) -> pd.DataFrame:
    r = np.random.default_rng(5)
    total = r.uniform(2, 20, n).round(1)
    return pd.DataFrame({"name": [f"animal{i}" for i in range(n)], "vore": r.choice(["carni", "herbi", "omni"], n),
                         "sleep_total": total, "sleep_rem": (total * r.uniform(0.1, 0.3, n)).round(1),
                         "brainwt": r.lognormal(-3, 1.5, n).round(4), "bodywt": r.lognormal(1, 2, n).round(3)})


def patients(n: int = 50) -> pd.DataFrame:
    r = np.random.default_rng(6)
    return pd.DataFrame({"ward": r.choice(["North", "South"], n), "hours_stay": r.integers(1, 200, n),
                         "bodywt": r.normal(70, 10, n).round(1), "heartwt": r.normal(300, 30, n).round(0)})


def rates(n: int = 40) -> pd.DataFrame:
    r = np.random.default_rng(7)
    return pd.DataFrame({"year": np.arange(1980, 1980 + n), "realint": r.normal(2, 1, n).round(2),
                         "prime_rate": r.normal(5, 1, n).round(2)})


FRAMES = {"msleep": msleep, "patients": patients, "econ": rates,
          "us_macro": lambda: pd.read_csv(DATASETS / "us_macro.csv")}


def read(table: str, question: str) -> tuple[str, list[str]]:
    desc = describe_tables({table: FRAMES[table]()}, active=table)
    s = read_question(question, desc, None)[-1]
    return (render(s) if s.answerable else "decline: " + " ".join(s.problems)), s.assumptions


@pytest.mark.parametrize("table,question,expected", [
    ("msleep", "median brain weight", "median of `brainwt`"),  # was bodywt's median, no assumption
    ("msleep", "mean brain weight by vore", "mean of `brainwt` by `vore`"),
    ("msleep", "mean body weight", "mean of `bodywt`"),
    ("patients", "mean heart weight by ward", "mean of `heartwt` by `ward`"),
    ("patients", "median body weight", "median of `bodywt`"),
    ("msleep", "mean total sleep", "mean of `sleep_total`"),  # declined on 'sleep'
    ("msleep", "mean rem sleep by vore", "mean of `sleep_rem` by `vore`"),
    ("patients", "mean stay hours by ward", "mean of `hours_stay` by `ward`"),
])
def test_every_word_of_the_phrase_is_one_columns(table, question, expected):
    got, _ = read(table, question)
    assert got.startswith(expected), got


@pytest.mark.parametrize("table,question,columns", [
    ("msleep", "average weight", ("brainwt", "bodywt")),  # took bodywt silently
    ("patients", "what is the average weight?", ("bodywt", "heartwt")),
    ("us_macro", "mean interest rate", ("realint", "tbilrate")),  # took realint silently
    ("econ", "mean interest rate", ("realint", "prime_rate")),
])
def test_a_phrase_two_columns_could_name_declines_naming_both(table, question, columns):
    got, _ = read(table, question)
    assert got.startswith("decline:") and all(c in got for c in columns), got


def test_a_word_read_past_beside_a_link_is_said():
    # `brainwt` alone has no sibling to split it by: 'brain weight' may still be read as bodywt's weight, but said
    frame = msleep().drop(columns=["sleep_rem"]).rename(columns={"brainwt": "brain"})
    desc = describe_tables({"animals": frame.assign(brain=frame["brain"].astype(str))}, active="animals")
    s = read_question("median fish weight", desc, None)[-1]
    assert not s.answerable or any("fish" in a for a in s.assumptions), (render(s), s.assumptions)


def test_the_numbers_are_the_asked_columns():
    from auto_analyst import Analyst, Settings

    frame = msleep()
    import tempfile

    with tempfile.TemporaryDirectory() as home, Analyst(settings=Settings.load({"home": home})) as analyst:
        s = analyst.session()
        s.add_frame("msleep", frame)
        r = s.ask("median brain weight")
    assert r.status == "ok", r.error
    assert f"{frame['brainwt'].median():g}" in r.answer.replace(",", ""), r.answer


def trades(n: int = 40) -> pd.DataFrame:
    r = np.random.default_rng(9)
    return pd.DataFrame({"store": r.choice(["A1", "B2", "C3"], n), "year": r.choice([2020, 2021], n),
                         "value": r.integers(10, 500, n), "units": r.integers(1, 20, n)})


FRAMES.update({"grunfeld": lambda: pd.read_csv(DATASETS / "grunfeld.csv"), "trades": trades})


@pytest.mark.parametrize("table,question,expected", [
    ("grunfeld", "sum of invest in 1940", "total of `invest` where `year` == 1940"),  # listed rows ('sum' as `value`)
    ("grunfeld", "sum of invest", "total of `invest`"),  # asked which statistic
    ("grunfeld", "sum of capital by firm", "total of `capital` by `firm`"),
    ("trades", "sum of units in 2020", "total of `units` where `year` == 2020"),
    ("trades", "sum of units by store", "total of `units` by `store`"),
])
def test_a_statistic_word_before_of_is_the_statistic_not_a_synonym(table, question, expected):
    got, assumptions = read(table, question)
    assert got == expected and not any("`value`" in a for a in assumptions), (got, assumptions)


def salaries(n: int = 120) -> pd.DataFrame:
    r = np.random.default_rng(10)
    return pd.DataFrame({"rank": r.choice(["Prof", "AsstProf", "AssocProf"], n), "discipline": r.choice(["A", "B"], n),
                         "sex": r.choice(["Male", "Female"], n), "salary": r.integers(60000, 200000, n)})


def gems(n: int = 200) -> pd.DataFrame:
    r = np.random.default_rng(11)
    return pd.DataFrame({"cut": r.choice(["Ideal", "Good", "Fair"], n), "color": r.choice(list("DEFGHIJ"), n),
                         "price": r.integers(300, 9000, n)})


FRAMES.update({"salaries": salaries, "gems": gems})


@pytest.mark.parametrize("table,question,expected", [
    ("salaries", "median salary in discipline B", "median of `salary` where `discipline` == 'B'"),  # "what 'b' is"
    ("salaries", "median salary where discipline is A", "median of `salary` where `discipline` == 'A'"),
    ("salaries", "mean salary by rank for discipline B", "mean of `salary` by `rank` where `discipline` == 'B'"),
    ("gems", "mean price for color E", "mean of `price` where `color` == 'E'"),
    ("gems", "mean price by cut for color G", "mean of `price` by `cut` where `color` == 'G'"),
    ("gems", "mean price where color = 'E'", "mean of `price` where `color` == 'E'"),
    ("gems", "mean price for color 'E'", "mean of `price` where `color` == 'E'"),
])
def test_a_one_letter_value_right_after_its_column_filters(table, question, expected):
    got, _ = read(table, question)
    assert got == expected, got


def test_the_one_letter_filter_gives_pandas_number():
    frame, desc = salaries(), None
    from auto_analyst import Analyst, Settings
    import tempfile

    with tempfile.TemporaryDirectory() as home, Analyst(settings=Settings.load({"home": home})) as analyst:
        s = analyst.session()
        s.add_frame("salaries", frame)
        r = s.ask("median salary in discipline B")
    assert r.status == "ok", r.error
    want = frame.loc[frame["discipline"] == "B", "salary"].median()
    assert f"{want:g}" in r.answer.replace(",", ""), (want, r.answer)


@pytest.mark.parametrize("table,question,hint", [
    ("gems", "mean price for E", "color = 'E'"),
    ("salaries", "median salary for B", "discipline = 'B'"),
])
def test_a_bare_letter_stays_unread_and_the_decline_says_how_to_quote_it(table, question, hint):
    got, _ = read(table, question)
    assert got.startswith("decline:") and hint in got, got
    assert read(table, "what is a mean salary" if table == "salaries" else "what is a mean price")[0].startswith("mean")


@pytest.mark.parametrize("table,question,column", [
    ("us_macro", "mean interest", "realint"),  # was realint with no assumption
    ("econ", "mean interest by year", "realint"),
])
def test_a_head_word_link_says_itself(table, question, column):
    got, assumptions = read(table, question)
    assert got.startswith(f"mean of `{column}`") and any(f"'interest' as `{column}`" in a for a in assumptions), \
        (got, assumptions)
