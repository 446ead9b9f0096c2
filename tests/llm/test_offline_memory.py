"""The offline memory answerer reads this conversation's turns first (offline2 item 8).

The history rows are what ``memory/context/recall.history_for`` gives: the current session's turns (``"session":
"current"``, oldest first) and then the most similar turns of earlier sessions (``"earlier"``).
"""

from __future__ import annotations

import json

from auto_analyst.offline.conversation import memory_answer, route
from auto_analyst.offline.request import Request


def turn(id, n, question, answer, session="current"):
    return {"id": id, "turn": n, "question": question, "standalone_question": question, "answer": answer,
            "values": [], "session": session}


HISTORY = [
    turn(11, 1, "total revenue by region", "Total revenue by region: North 56271.89, South 45437.13"),
    turn(12, 2, "average units by category", "Mean units by category: Garden 9.08, Tools 10.02"),
    turn(13, 3, "maximum price", "Maximum price: 84.88."),
    turn(14, 4, "how many rows are there", "Number of rows: 400."),
    turn(3, 1, "median price by region", "Median price by region: North 40.1", session="earlier"),
]


def ask(question, history=HISTORY):
    p = Request(inputs={"question": question, "history": json.dumps(history)})
    return memory_answer(p)


def test_my_first_question_is_this_sessions_first_turn():
    assert route("what did you answer to my first question?") == "memory_query"
    out = ask("what did you answer to my first question?")
    assert out["used_turns"] == ["11"] and "56271.89" in out["answer"] and "earlier session" not in out["answer"]


def test_the_last_question_and_a_numbered_one():
    assert ask("what was my last question?")["used_turns"] == ["14"]
    assert ask("what did you say in question 3?")["used_turns"] == ["13"]


def test_what_did_we_find_earlier_recaps_this_session():
    out = ask("what did we find earlier?")
    assert out["used_turns"] == ["11", "12", "13", "14"]
    assert "56271.89" in out["answer"] and "400" in out["answer"] and "40.1" not in out["answer"]


def test_a_topic_of_an_earlier_session_is_said_to_be_from_it():
    out = ask("what did we find earlier about the median price?")
    assert out["used_turns"] == ["3"] and "in an earlier session" in out["answer"]


def test_nothing_found_says_what_to_do():
    out = ask("what did we find about the wind speed earlier?", history=[])
    assert out["used_turns"] == [] and "Ask it again" in out["answer"]


def test_a_session_asks_about_its_own_first_turn_not_an_earlier_sessions(tmp_path):
    """End to end: an earlier session's turns are stored too; 'my first question' is this session's first."""
    from auto_analyst import Analyst, Settings
    from tests.helpers import sales_table

    csv = tmp_path / "sales.csv"
    sales_table(seed=11).to_csv(csv, index=False)
    analyst = Analyst(settings=Settings.load({"home": tmp_path}), user="alice")
    with analyst:
        before = analyst.session()
        before.load(csv)
        before.ask("median price by region")
        s = analyst.session()
        s.load(csv)
        first = s.ask("total revenue by region")
        s.ask("maximum price")
        r = s.ask("what did you answer to my first question?")
        assert r.trace.intent == "memory_query" and r.trace.source == "memory"
        table = next(t for t in first.tables if t.name.startswith("total revenue by region"))
        north = next(row for row in table.rows if row[0] == "North")
        assert "total revenue by region" in r.answer and str(round(north[1], 2)) in r.answer
        assert "Median" not in r.answer and "median" not in r.answer


def test_a_quoted_group_figure_comes_from_the_turn_that_showed_it_under_the_same_conditions(tmp_path):
    """End to end on mtcars-like data: 'the mean mpg for 8 cyl' is turn 1's (no gear condition), not the later
    turns filtered to gear = 4 that name mean mpg too; an earlier session's turn with the same figure loses to
    this conversation's; a figure no turn showed under the question's conditions is declined, not quoted."""
    import pandas as pd

    from auto_analyst import Analyst, Settings

    rows = [(4, 4, 30.0), (4, 4, 26.0), (4, 3, 21.5), (6, 4, 21.0), (6, 3, 18.0), (8, 3, 15.0), (8, 3, 15.2),
            (8, 5, 15.8)]
    csv = tmp_path / "cars.csv"
    pd.DataFrame(rows, columns=["cyl", "gear", "mpg"]).to_csv(csv, index=False)
    analyst = Analyst(settings=Settings.load({"home": tmp_path}), user="carol")
    with analyst:
        before = analyst.session()
        before.load(csv)
        before.ask("average mpg by cyl")  # the same figure in another session
        s = analyst.session()
        s.load(csv)
        first = s.ask("average mpg by cyl")
        assert first.status == "ok"
        s.ask("now only for gear 4")
        s.ask("which of those is the highest?")
        r = s.ask("what did you say the mean mpg for 8 cyl was?")
        assert r.trace.source == "memory", r.answer
        assert r.answer.startswith('Earlier (turn 1) you asked: "average mpg by cyl".'), r.answer
        assert "cyl 8: mean mpg 15.3" in r.answer and "earlier session" not in r.answer
        assert [h.id for h in r.trace.memory_hits if h.kind == "history"]  # the turn is from the history
        filtered = s.ask("what did you say the mean mpg for 6 cyl and gear 4 was?")
        assert filtered.answer.startswith('Earlier (turn 2) you asked: "now only for gear 4" (computed where gear = 4)')
        assert "cyl 6: mean mpg 21" in filtered.answer and "15.3" not in filtered.answer.split("The whole answer")[0]
        none = s.ask("what did you say the mean mpg for 8 cyl and gear 4 was?")  # no turn showed cyl 8 at gear 4
        assert none.answer.startswith("I can't find an earlier answer that gave the figure for cyl = 8 where gear = 4")
        said = none.answer.split("Remembered findings")[0]  # the findings after it say their own conditions
        assert "15.3" not in said and "26" not in said and none.trace.memory_hits is not None


def test_quote_rows_keep_to_this_conversation_and_to_the_conditions():
    """The memory answerer alone: a named group quoted from the current session's turn that shows it, never from
    a turn whose conditions the question does not name."""
    def grouped(id, n, question, value, conditions=(), session="current"):
        row = turn(id, n, question, "…", session=session)
        row["values"] = [{"name": "mean price by region", "columns": ["region", "mean price"],
                          "rows": [["North", value], ["South", value + 1]]}]
        row["conditions"] = [{"column": c, "op": "=", "value": v} for c, v in conditions]
        return row

    history = [grouped(1, 1, "mean price by region", 10.0), grouped(2, 2, "now only for 2023", 12.0, [("year", "2023")]),
               grouped(9, 4, "mean price by region", 99.0, session="earlier")]
    out = ask("what did you say the mean price for North was?", history)
    assert out["used_turns"] == ["1"] and "North: mean price 10" in out["answer"]
    out = ask("what did you say the mean price for North in year 2023 was?", history)
    assert out["used_turns"] == ["2"] and "(computed where year = 2023)" in out["answer"]
    out = ask("what did you say the mean price for North was?", [history[1], history[2]])
    assert out["used_turns"] == ["9"] and "in an earlier session" in out["answer"]
    out = ask("what did you say the mean price for North was?", [history[1]])
    assert out["used_turns"] == [] and out["answer"].startswith("I can't find an earlier answer")
