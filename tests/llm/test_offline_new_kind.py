"""Five kinds of everyday question (aggregate, filter, top N, correlation, chart) on a kind of table the project does
not ship (beehive inspections), values checked with pandas; and, over every task kind, a grouping the reader could not
read is never dropped from the answer (issue 25)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from auto_analyst import Analyst, Settings


def hives(seed: int = 7, n: int = 240) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    strength = rng.integers(3, 11, n)
    return pd.DataFrame({"hive_id": [f"HV{i:03d}" for i in range(n)],
                         "apiary": rng.choice(["North Field", "Orchard", "Heath"], n),
                         "colony_strength": strength, "honey_kg": (strength * 2.5 + rng.normal(0, 3, n)).round(1).clip(0),
                         "varroa_per_100_bees": rng.gamma(2, 1.2, n).round(2), "queen_marked": rng.random(n) < 0.6})


@pytest.fixture(scope="module")
def answers(tmp_path_factory):
    questions = {
        "aggregate": "What is the average honey weight by apiary?",
        "filter": "How many hives in the Orchard apiary have a colony strength above 8?",
        "top": "Which 3 hives have the most honey?",
        "correlation": "Is colony strength correlated with honey_kg?",
        "chart": "Plot the distribution of varroa per 100 bees.",
    }
    with Analyst(settings=Settings.load({"home": tmp_path_factory.mktemp("bees")})) as analyst:
        s = analyst.session()
        s.add_frame("hives", hives())
        return {k: s.ask(q) for k, q in questions.items()}


def test_aggregate(answers):
    r, df = answers["aggregate"], hives()
    assert r.status == "ok", r.answer
    assert dict(r.tables[0].rows) == pytest.approx(df.groupby("apiary")["honey_kg"].mean().to_dict())
    assert any("honey_kg" in a and "kg" in a for a in r.trace.assumptions)  # the unit that linked 'weight' is said


def test_filter(answers):
    r, df = answers["filter"], hives()
    assert r.status == "ok", r.answer
    assert r.tables[0].rows[0][0] == int(((df.apiary == "Orchard") & (df.colony_strength > 8)).sum())


def test_top_n(answers):
    r, df = answers["top"], hives()
    assert r.status == "ok", r.answer
    assert [row[0] for row in r.tables[0].rows] == list(df.nlargest(3, "honey_kg")["hive_id"])


def test_correlation(answers):
    r, df = answers["correlation"], hives()
    assert r.status == "ok", r.answer
    assert r.tables[0].rows[0][0] == pytest.approx(stats.pearsonr(df.colony_strength, df.honey_kg)[0])


def test_chart(answers):
    r = answers["chart"]
    assert r.status == "ok" and r.figures, r.answer


@pytest.mark.parametrize("question", [
    "What is the average honey_kg by beekeeper?",                     # aggregate
    "How many hives are there for each beekeeper?",                   # count
    "What is the median varroa_per_100_bees by inspector?",           # another statistic
])
def test_a_grouping_it_cannot_read_is_named_never_dropped(tmp_path, question):
    with Analyst(settings=Settings.load({"home": tmp_path})) as analyst:
        s = analyst.session()
        s.add_frame("hives", hives())
        r = s.ask(question)
    assert r.status == "declined", r.answer


TASK_QUESTIONS = ["What is the average honey_kg", "Which apiary has the highest honey_kg", "Which 3 apiaries have the highest total honey_kg",
                  "Plot honey_kg", "What is the correlation between honey_kg and colony_strength", "How many hives are there",
                  "Describe honey_kg", "Are there outliers in honey_kg", "Is honey_kg normally distributed",
                  "Fit a linear regression of honey_kg on colony_strength", "Show a histogram of honey_kg",
                  "What is the total honey_kg"]


@pytest.mark.parametrize("suffix", [" by region?", " for each customer?"])
def test_over_every_task_kind_a_grouping_naming_no_column_is_never_dropped(suffix):
    from auto_analyst.data.description import describe_tables
    from auto_analyst.offline.reader import read_question

    desc = describe_tables({"hives": hives()}, active="hives")
    tasks = set()
    for q in TASK_QUESTIONS:
        alone = read_question(q + "?", desc)[0]
        assert alone.answerable, (q, alone.problems)
        tasks.add(alone.task)
        spec = read_question(q + suffix, desc)[0]
        assert not spec.answerable and spec.problems, (q + suffix, spec)  # declined, saying why
    assert {"aggregate", "rank", "top_n", "chart", "correlation", "describe", "outliers", "stat_test", "regression"} <= tasks
