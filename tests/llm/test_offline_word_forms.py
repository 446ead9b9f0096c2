"""Everyday words linked to a table by their forms (issue 25): an adjective derived from a value ('snowy' for 'snow',
'Indian' for 'India'), max/min qualifiers ('the daily high', 'low humidity'), number compounds ('three-bedroom'),
units a column does not carry ('10 mm of rainfall'), 'class 2' of a classifier's target. Every table here is made up
(a greenhouse log, tea lots, flats to let, iris-like flowers): none is shipped, and values are checked with pandas."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from auto_analyst import Analyst, Settings
from auto_analyst.data.description import describe_tables
from auto_analyst.offline.canonical import render
from auto_analyst.offline.reader import read_question


def greenhouse(n: int = 365) -> pd.DataFrame:
    r = np.random.default_rng(11)
    low = r.uniform(20, 60, n).round(1)
    return pd.DataFrame({"day": pd.date_range("2023-01-01", periods=n, freq="D"),
                         "humidity_max": (low + r.uniform(5, 30, n)).round(1), "humidity_min": low,
                         "rainfall": np.where(r.random(n) < 0.6, 0.0, r.gamma(2, 6, n)).round(1),
                         "sky": r.choice(["sun", "cloud", "snow", "fog"], n, p=[0.4, 0.35, 0.1, 0.15])})


def teas(n: int = 200) -> pd.DataFrame:
    r = np.random.default_rng(5)
    return pd.DataFrame({"lot": [f"L{i:03d}" for i in range(n)],
                         "country": r.choice(["India", "Japan", "China", "France", "Kenya"], n),
                         "grade": r.integers(1, 6, n), "price_per_kg": r.uniform(5, 80, n).round(2),
                         "shipper": r.choice(["Maersk", "Evergreen", "Hapag"], n)})


def flats(n: int = 150) -> pd.DataFrame:
    r = np.random.default_rng(9)
    return pd.DataFrame({"listing_id": range(n), "bedrooms": r.integers(1, 6, n),
                         "rent": r.uniform(500, 3000, n).round(0), "agency": r.choice(["Acme Lets", "Homely", "Keyz"], n)})


def flowers(n: int = 120) -> pd.DataFrame:
    r = np.random.default_rng(2)
    target = r.integers(0, 3, n)
    return pd.DataFrame({"petal_len": (target * 1.5 + r.normal(2, 0.3, n)).round(2),
                         "sepal_len": r.normal(5, 0.5, n).round(2), "target": target})


def read(frame: pd.DataFrame, question: str, name: str = "t") -> tuple[str, list[str]]:
    desc = describe_tables({name: frame}, active=name)
    s = read_question(question, desc, None)[-1]
    return (render(s) if s.answerable else "decline: " + " ".join(s.problems)), s.assumptions


@pytest.fixture(scope="module")
def answers(tmp_path_factory):
    asks = {
        "snowy": ("greenhouse", "How many snowy days were there?"),
        "sunny": ("greenhouse", "What percentage of days were sunny?"),
        "high": ("greenhouse", "What was the average daily high humidity?"),
        "low": ("greenhouse", "How many days had a low humidity below 30?"),
        "mm": ("greenhouse", "On how many days was there more than 10 mm of rainfall?"),
        "indian": ("teas", "What is the average price per kg of Indian teas?"),
        "french": ("teas", "How many lots are French?"),
        "bedroom": ("flats", "What is the median rent of three-bedroom flats?"),
        "class": ("flowers", "What is the average petal length of class 2 flowers?"),
    }
    frames = {"greenhouse": greenhouse(), "teas": teas(), "flats": flats(), "flowers": flowers()}
    out = {}
    with Analyst(settings=Settings.load({"home": tmp_path_factory.mktemp("forms")})) as analyst:
        sessions = {}
        for key, (table, question) in asks.items():
            if table not in sessions:
                sessions[table] = analyst.session()
                sessions[table].add_frame(table, frames[table])
            out[key] = sessions[table].ask(question)
    return out


def first(r) -> float:
    assert r.status == "ok", r.answer
    return r.tables[0].rows[0][0]


def test_an_adjective_derived_from_a_value(answers):
    g = greenhouse()
    assert first(answers["snowy"]) == int((g.sky == "snow").sum())
    assert any("'snowy'" in a and "snow" in a for a in answers["snowy"].trace.assumptions)
    sunny = answers["sunny"]
    assert first(sunny) == int((g.sky == "sun").sum())
    assert sunny.tables[1].rows[0][0] == pytest.approx(100 * (g.sky == "sun").mean(), abs=0.01)  # the percent


def test_a_place_adjective(answers):
    t = teas()
    assert first(answers["indian"]) == pytest.approx(t[t.country == "India"].price_per_kg.mean(), abs=0.01)
    assert first(answers["french"]) == int((t.country == "France").sum())


def test_high_and_low_name_the_max_and_min_columns(answers):
    g = greenhouse()
    assert first(answers["high"]) == pytest.approx(g.humidity_max.mean(), abs=0.01)  # 'daily': each row is a day
    assert first(answers["low"]) == int((g.humidity_min < 30).sum())
    assert any("humidity_max" in a for a in answers["high"].trace.assumptions)


def test_a_unit_the_column_does_not_carry(answers):
    g = greenhouse()
    assert first(answers["mm"]) == int((g.rainfall > 10).sum())
    assert any("10 mm" in a for a in answers["mm"].trace.assumptions)


def test_number_compounds_and_class_codes(answers):
    f, w = flats(), flowers()
    assert first(answers["bedroom"]) == pytest.approx(f[f.bedrooms == 3].rent.median())
    assert first(answers["class"]) == pytest.approx(w[w.target == 2].petal_len.mean(), abs=0.01)


@pytest.mark.parametrize("frame, question, expected", [
    # two columns carry the measure: 'humidity' alone names neither
    (greenhouse(), "What is the average humidity?", "decline: 'humidity' could be any of the columns humidity_max, humidity_min"),
    # 'rainy': a value 'rain' of one column, or the rainfall column? named, never guessed
    (greenhouse().assign(sky=lambda d: d.sky.replace("fog", "rain")), "How many rainy days were there?",
     "decline: 'rainy' could be sky = 'rain' or the column rainfall"),
    # a derived word that fits values of two columns
    (teas().assign(origin_port=lambda d: d.country), "How many Japanese lots are there?", "decline: 'japanese'"),
    # 'duration_min' without a max twin is minutes, and 'low' names nothing on it
    (pd.DataFrame({"duration_min": [3.0, 5.0, 9.0], "caller": ["a", "b", "c"]}), "What is the average low?", "decline:"),
    # 'many' is no adjective of a value 'man'
    (pd.DataFrame({"gender": ["man", "woman", "man"], "age": [30, 40, 50]}), "How many rows are there?", "count of rows"),
    # 'high'/'low' said of the rows or of another measure is no max/min column: hot days, windy days have no threshold
    (greenhouse(), "How many days had high rainfall?", "decline:"),
    (greenhouse(), "How many days had a high humidity?", "decline:"),
    (greenhouse(), "Is there a high correlation between rainfall and humidity_max?", "decline:"),
    (greenhouse(), "What is the average rainfall on days with a high above 70?", "mean of `rainfall` where `humidity_max` > 70"),
    # a number word is no misspelling of a column ('eight' is not 'weight'): the count of a few-valued column instead
    (flats().assign(weight=1.0), "How many listings have three bedrooms?", "count of rows where `bedrooms` == 3"),
    (flats().assign(weight=1.0), "How many three bedroom listings are there?", "count of rows where `bedrooms` == 3"),
    (flats(), "What is the average rent of the top 3 bedroom groups?", "decline:"),
    # a number outside the column's values is no code of it
    (flats(), "How many nine-bedroom flats are there?", "decline:"),
])
def test_declines_and_non_links(frame, question, expected):
    text, _ = read(frame, question)
    assert text.startswith(expected), text


def test_daily_on_a_table_of_several_rows_a_day_still_groups():
    f = pd.DataFrame({"ts": pd.to_datetime(["2024-01-01 08:00", "2024-01-01 18:00", "2024-01-02 09:00"]),
                      "load_kw": [1.0, 2.0, 3.0]})
    text, _ = read(f, "What is the average daily load_kw?")
    assert "by day" in text, text


def test_companies_are_the_distinct_firms():
    f = pd.DataFrame({"firm": ["A", "A", "B", "C"], "year": [2000, 2001, 2000, 2000], "sales": [1.0, 2.0, 3.0, 4.0]})
    text, assumptions = read(f, "How many companies are in the data?")
    assert text == "number of distinct of `firm`", text
    assert any("companies" in a for a in assumptions)


def test_most_with_the_noun_of_a_quality():
    f = pd.DataFrame({"model": ["a", "b", "c", "d"], "fuel_efficiency": [30.0, 45.0, 12.0, 41.0],
                      "profitability": [0.1, 0.3, 0.2, 0.05]})
    text, assumptions = read(f, "What are the 2 most fuel-efficient models?")
    assert text.startswith("top 2") and "fuel_efficiency" in text, text
    assert any("fuel-efficient" in a for a in assumptions)
    text, _ = read(f, "Which model is the least profitable?")
    assert "profitability" in text and ("bottom 1" in text or "lowest" in text), text


def test_dry_and_zero_say_the_measure_is_zero():
    g = greenhouse()
    text, assumptions = read(g, "How many days were completely dry?")
    assert text == "count of rows where `rainfall` == 0", text
    assert any("'dry'" in a and "rainfall" in a for a in assumptions)
    text, _ = read(g, "What was the average high humidity on days with zero rainfall?")
    assert text == "mean of `humidity_max` where `rainfall` == 0", text
    both = g.assign(rain_gauge_b=g.rainfall)  # two measures of rain: 'dry' names neither alone
    both = both.rename(columns={"rain_gauge_b": "precipitation"})
    text, _ = read(both, "How many dry days were there?")
    assert text.startswith("decline: 'dry' could be any of the columns rainfall, precipitation"), text


def test_their_statistic_after_a_list_of_top_rows_declines():
    """'What is their average length?' after 'the three heaviest boats' is a statistic of those rows: never the top
    rows by the new measure listed again (which the word links now reach more often)."""
    boats = pd.DataFrame({"name": [f"b{i}" for i in range(8)], "weight_kg": [900.0, 450, 1200, 300, 800, 1500, 650, 700],
                          "length_m": [9.0, 6, 11, 5, 8, 12, 7, 7.5]})
    desc = describe_tables({"boats": boats}, active="boats")
    first_turn = read_question("List the three heaviest boats.", desc, None)[-1]
    assert first_turn.answerable and first_turn.task == "top_n", render(first_turn)
    then = read_question("What is their average length?", desc, first_turn)[-1]
    assert not then.answerable and "rows listed earlier" in " ".join(then.problems), render(then)


def test_content_before_a_comparison():
    text, _ = read(teas().rename(columns={"price_per_kg": "caffeine"}), "How many lots have a caffeine content above 40?")
    assert not text.startswith("decline") and text.endswith("where `caffeine` > 40"), text
