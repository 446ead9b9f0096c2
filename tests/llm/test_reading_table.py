"""The reading table: natural questions on generated tables and what the offline planner makes of them.

Each row is (table, question, expected[, previous]): the canonical text the planner writes for the
question (checked to read back through the strict parser), ``decline: <words of the reason>`` or
``suggest: <the closest question offered>`` (every decline also says that ``--model`` reads any
phrasing), ``intent: <intent>`` for messages about the conversation, and ``... || part declined`` when
the question was answered in part. ``previous`` is the canonical text of the turn before (follow-ups).
The tables are in tests/llm/reading_tables.py, the rows in reading_rows.py and reading_rows_more.py;
nothing runs in the sandbox, so the whole table reads in a few seconds. The rows follow issue 11's items: vocabulary from the data, question forms, task
plugins and their claims, instructions, follow-ups, declines that help, and the conversation.
"""

from __future__ import annotations

import json

import pytest

from auto_analyst.offline.planning import MODEL_HINT, planner
from auto_analyst.offline.request import Request
from tests.llm import reading_rows, reading_rows_more
from tests.llm.reading_tables import descriptions

ROWS = reading_rows.ROWS + reading_rows_more.ROWS


@pytest.fixture(scope="module")
def tables():
    return descriptions()


def read(tables, table: str, question: str, previous: str | None = None) -> tuple[str, str]:
    """(what the planner wrote, the decline reason) for ``question`` on ``table``."""
    memory = json.dumps({"turns": [{"standalone_question": previous}]}) if previous else "{}"
    prompt = Request(inputs={
        "goal": question, "dataset_description": tables[table].to_prompt(), "short_term_memory": memory})
    out = planner(prompt)
    if out["intent"] != "analysis":
        return "intent: " + out["intent"], ""
    if out["plan"]:
        return out["standalone_question"] + (" || part declined" if out["decline_reason"] else ""), out["decline_reason"]
    return "", out["decline_reason"]


def check(tables, row) -> str:
    """'' when ``row`` reads as expected, else what went wrong."""
    table, question, expected = row[:3]
    previous = row[3] if len(row) > 3 else None
    got, reason = read(tables, table, question, previous)
    if expected.startswith(("decline: ", "suggest: ")):
        kind, words = expected.split(": ", 1)
        if got:
            return f"wrote {got!r}, expected {expected!r}"
        if MODEL_HINT not in reason:  # every decline says a language model reads any phrasing
            return f"decline without the --model hint: {reason!r}"
        wanted = f"Did you mean: {words}?" if kind == "suggest" else words
        return "" if wanted in reason else f"reason {reason!r} lacks {wanted!r}"
    return "" if got == expected else f"wrote {got!r} (reason {reason!r}), expected {expected!r}"


TABLES = sorted({r[0] for r in ROWS})


# One test per table (not per row): the rows read in well under a second, and a per-row test would
# spend most of the time in fixtures. A failure lists every row of the table that read differently.
@pytest.mark.parametrize("table", TABLES)
def test_reading_table(tables, table):
    failures = [f"{row[1]!r}: {why}" for row in ROWS if row[0] == table and (why := check(tables, row))]
    assert not failures, "\n".join(failures)


# offline2: several tables, some named by ordinary words: a name wins only when the question's other words fit
# its table (the active one otherwise)
TABLES_ROWS = [
    ("orders", "total amount", "orders", "total of `amount`"),
    ("total", "total amount", "orders", "total of `amount`"),
    ("total", "total amount by city", "orders", "total of `amount` by `city`"),
    ("orders", "total revenue", "total", "total of `revenue`"),
    ("orders", "mean score in first", "first", "mean of `score`"),
    ("orders", "mean level in data", "data", "mean of `level`"),
    ("orders", "how many rows are in the data", "orders", "count of rows"),
    ("orders", "how many rows in total", "orders", "count of rows"),
    ("total", "how many rows in total", "total", "count of rows"),
    ("orders", "mean amount in the data", "orders", "mean of `amount`"),
]


@pytest.mark.parametrize("active", ["orders", "total"])
def test_a_table_named_by_an_ordinary_word_does_not_take_over(active):
    import numpy as np
    import pandas as pd

    from auto_analyst.data.description import describe_tables
    from auto_analyst.offline.canonical import render
    from auto_analyst.offline.reader import read_question

    r = np.random.default_rng(0)
    frames = {"total": pd.DataFrame({"region": r.choice(["N", "S"], 20), "revenue": r.uniform(1, 9, 20)}),
              "orders": pd.DataFrame({"order_id": range(30), "amount": r.uniform(1, 9, 30),
                                      "city": r.choice(["Paris", "Rome"], 30)}),
              "first": pd.DataFrame({"name": [f"n{k}" for k in range(10)], "score": r.uniform(0, 1, 10)}),
              "data": pd.DataFrame({"site": r.choice(["A", "B"], 10), "level": r.uniform(0, 1, 10)})}
    desc = describe_tables(frames, active=active)
    wrong = []
    for on, question, table, text in TABLES_ROWS:
        if on != active:
            continue
        got = [(s.table, render(s)) for s in read_question(question, desc)]
        if got != [(table, text)]:
            wrong.append(f"{question!r}: {got}, expected {[(table, text)]}")
    assert not wrong, "\n".join(wrong)


def test_the_table_covers_every_item_of_the_issue():
    kinds = [r[2].split(":")[0] for r in ROWS]
    assert len(ROWS) >= 300
    assert kinds.count("decline") >= 15 and kinds.count("suggest") >= 5 and kinds.count("intent") >= 10
    assert sum(1 for r in ROWS if len(r) > 3) >= 30  # follow-ups
