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
