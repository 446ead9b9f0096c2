"""Three small readings: a question cut off after 'by' declines (never the overall figure), "most common X" is the
mode (the value with the most rows, never a maximum), and "for 8 cylinders" is the condition "with 8 cylinders" is.
The tables are made up (gems, bikes): none is shipped; values are checked with pandas."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from auto_analyst import Analyst, Settings
from auto_analyst.data.description import describe_tables
from auto_analyst.offline.canonical import render
from auto_analyst.offline.reader import read_question


def gems(n: int = 250) -> pd.DataFrame:
    r = np.random.default_rng(17)
    return pd.DataFrame({"purity": r.choice(["VS1", "VS2", "SI1", "IF"], n, p=[0.2, 0.45, 0.25, 0.1]),
                         "facet": r.choice(["Round", "Oval", "Pear"], n), "mass": r.uniform(0.2, 3, n).round(2),
                         "grade": r.choice([1, 2, 3, 4], n, p=[0.1, 0.2, 0.5, 0.2])})


def bikes(n: int = 120) -> pd.DataFrame:
    r = np.random.default_rng(6)
    gears = r.choice([1, 3, 7, 21], n)
    return pd.DataFrame({"model": [f"b{k}" for k in range(n)], "Gears": gears,
                         "Top_Speed": (20 + gears * 0.8 + r.normal(0, 2, n)).round(1)})


def read(frame: pd.DataFrame, question: str) -> str:
    desc = describe_tables({"t": frame}, active="t")
    s = read_question(question, desc, None)[-1]
    return render(s) if s.answerable else "decline: " + " ".join(s.problems)


@pytest.mark.parametrize("frame, question, expected", [
    (gems(), "mean mass by ", "decline: The question ends with 'by'"),
    (gems(), "average mass grouped by?", "decline: The question ends with 'grouped by'"),
    (gems(), "mean mass for each", "decline: The question ends with 'for each'"),
    (gems(), "mean mass by facet", "mean of `mass` by `facet`"),
    (gems(), "most common purity", "which `purity` has the highest count of rows"),
    (gems(), "the most frequent facet?", "which `facet` has the highest count of rows"),
    (gems(), "most common grade", "which `grade` has the highest count of rows"),  # a few-valued number too
    (bikes(), "mean top speed for 21 gears", "mean of `Top_Speed` where `Gears` == 21"),
    (bikes(), "mean top speed among 3 gears", "mean of `Top_Speed` where `Gears` == 3"),
    (bikes(), "mean top speed for 30 gears", "decline:"),  # outside the column's values: no condition guessed
    # 'the highest X of each Y' is the maximum within every group, not a ranking of the groups by their mean
    (gems(), "highest mass of each facet", "maximum of `mass` by `facet`"),
    (gems(), "the lowest mass per purity", "minimum of `mass` by `purity`"),
    (gems(), "what is the highest mass in each facet?", "maximum of `mass` by `facet`"),
    (gems(), "which facet has the highest mass?", "which `facet` has the highest"),
])
def test_readings(frame, question, expected):
    assert read(frame, question).startswith(expected)


def test_values(tmp_path):
    g, b = gems(), bikes()
    with Analyst(settings=Settings.load({"home": tmp_path})) as analyst:
        s = analyst.session()
        s.add_frame("gems", g)
        mode = s.ask("most common purity")
        cut = s.ask("mean mass by ")
        s2 = analyst.session()
        s2.add_frame("bikes", b)
        fast = s2.ask("mean top speed for 21 gears")
    assert mode.status == "ok", mode.answer
    counts = g.purity.value_counts()
    assert mode.tables[0].rows[0][0] == counts.index[0]
    assert counts.iloc[0] > counts.iloc[1]  # one mode: the answer is determined
    assert str(counts.iloc[0]) in mode.answer
    assert cut.status == "declined" and "ends with 'by'" in cut.answer
    assert fast.status == "ok", fast.answer
    assert fast.tables[0].rows[0][0] == pytest.approx(b[b.Gears == 21].Top_Speed.mean(), abs=0.01)


def test_the_highest_of_each_group_is_the_maximum_in_every_group(tmp_path):
    g = gems()
    with Analyst(settings=Settings.load({"home": tmp_path})) as analyst:
        s = analyst.session()
        s.add_frame("gems", g)
        r = s.ask("highest mass of each facet")
    assert r.status == "ok", r.answer
    assert {row[0]: row[1] for row in r.tables[0].rows} == pytest.approx(g.groupby("facet").mass.max().to_dict())
