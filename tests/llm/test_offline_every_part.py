"""Every part of a question is answered or named (issue 23): over every offline task kind, a filter or a measure
the question adds is either in what the planner computes (its canonical text) or named in its decline, on a table
loaded from a file and on the same table in a SQL database (where a part it cannot compute there is named too).
The groupings are checked by ``test_offline_new_kind.py``."""

from __future__ import annotations

import pytest

from auto_analyst.data.description import describe_tables
from auto_analyst.offline.planning import planner
from auto_analyst.offline.request import Request
from tests.llm.test_offline_new_kind import TASK_QUESTIONS, hives

# (what the question adds, the word that must be computed or named)
ADDED = [
    (" in the Meadow apiary?", "meadow"),                       # a value no column holds
    (" for hives with humidity above 50?", "humidity"),         # a filter on a column the table lacks
    (" where the beekeeper is Alice?", "beekeeper"),            # the same, said otherwise
    (" and the average rainfall?", "rainfall"),                 # a measure of a column the table lacks
    (" and the total wax_kg?", "wax"),                          # the same, a name with a unit
    (" per week?", "week"),                                     # a time grouping on a table without dates
]


def _desc(source: str):
    desc = describe_tables({"hives": hives()}, active="hives")
    if source == "sqlite":
        desc.source = {"kind": "sql", "dialect": "sqlite", "database": "sqlite:///hives.db", "tables": ["hives"],
                       "max_rows": 100000}
    return desc


def _plan(question: str, desc) -> dict:
    return planner(Request(inputs={"goal": question, "dataset_description": desc.to_prompt(),
                                   "short_term_memory": "{}"}))


@pytest.mark.parametrize("source", ["file", "sqlite"])
@pytest.mark.parametrize("added,word", ADDED, ids=[w for _, w in ADDED])
def test_a_filter_or_measure_is_computed_or_named_over_every_task_kind(source, added, word):
    desc = _desc(source)
    dropped = []
    for q in TASK_QUESTIONS:
        out = _plan(q + added, desc)
        if not out["plan"]:  # declined whole: nothing answered, so nothing dropped
            assert out["decline_reason"], q + added
            continue
        computed, named = out["standalone_question"].casefold(), out["decline_reason"].casefold()
        if word not in computed and word not in named:
            dropped.append((q + added, out["standalone_question"], out["decline_reason"][:120]))
    assert dropped == []


@pytest.mark.parametrize("question,named", [
    ("What is the median honey_kg by apiary?", "median of honey_kg"),
    ("What is the standard deviation of honey_kg?", "standard deviation of honey_kg"),
    ("Is honey_kg normally distributed?", "normal"),
    ("Describe honey_kg", "summary statistics"),
    ("Show a histogram of honey_kg", "histogram"),
])
def test_on_sqlite_a_part_it_cannot_compute_there_is_named(question, named):
    assert _plan(question, _desc("file"))["plan"], question  # answered from a file
    out = _plan(question, _desc("sqlite"))
    assert not out["plan"] and named in out["decline_reason"], out["decline_reason"]


def test_on_sqlite_the_parts_it_computes_are_planned_as_sql():
    from auto_analyst.offline.coding import analyst

    desc = _desc("sqlite")
    out = _plan("What is the average honey_kg by apiary for colony_strength above 5?", desc)
    assert [s["agent"] for s in out["plan"]] == ["statistics"]  # filtered in the query: no pandas preprocessing
    code = analyst(Request(inputs={"goal": out["standalone_question"], "dataset_description": desc.to_prompt()}),
                   "statistics")["code"]
    # the number columns are read through a subquery that makes SQLite's text values missing (as a file's reader)
    assert 'sql(\'SELECT "apiary", avg("honey_kg") AS "mean honey_kg" FROM (SELECT ' in code
    assert 'FROM "hives") AS "hives" WHERE "colony_strength" > 5' in code
