"""The offline model in conversation (issue 11, item 4), end to end with the sandbox; values checked with pandas.

Style and persona changes apply to later answers and stay in the profile; questions about earlier
turns answer from the history with the earlier numbers and point the trace at that turn; a quoted
earlier answer brings that result back with how it was computed; "those three", "the top one" and
"same for X" after a chart build on the turn before.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from auto_analyst import Analyst, Settings
from tests.helpers import sales_table, table


@pytest.fixture
def chat(tmp_path):
    analyst = Analyst(settings=Settings.load({"home": tmp_path}), user="dana")
    s = analyst.session()
    s.add_frame("sales", sales_table(seed=5))
    yield analyst, s, sales_table(seed=5)
    analyst.close()


def ok(s, q):
    r = s.ask(q)
    assert r.status == "ok", (q, r.answer)
    return r


def test_style_changes_apply_to_later_answers_and_stay_in_the_profile(chat):
    analyst, s, df = chat
    r = ok(s, "use bullet points from now on")
    assert r.trace.intent == "config_change"
    assert analyst.memory.profiles.get("dana").style == "bullet points"
    r = ok(s, "total revenue by region")
    assert all(line.lstrip().startswith("- ") for line in r.answer.splitlines() if line.strip())
    ok(s, "answer in one sentence from now on")
    assert analyst.memory.profiles.get("dana").style == "one sentence"
    r = ok(s, "average price by category")
    means = df.groupby("category")["price"].mean()
    assert len([ln for ln in r.answer.splitlines() if ln.strip()]) == 1
    assert f"{means['Garden']:.4f}".rstrip("0") in r.answer
    ok(s, "be more formal")
    ok(s, "keep it detailed from now on")
    r = ok(s, "What is the total revenue?")
    assert r.answer.startswith("The results are as follows.") and "How it was computed" in r.answer
    assert analyst.memory.profiles.get("dana").tone == "formal"


def test_a_question_about_an_earlier_turn_answers_from_it_and_points_at_it(chat):
    analyst, s, df = chat
    first = ok(s, "total revenue by category")
    ok(s, "average units by region")
    r = ok(s, "remind me what the total for Garden was")
    total = df.groupby("category")["revenue"].sum()["Garden"]
    assert r.trace.intent == "memory_query" and r.trace.source == "memory" and r.code == ""
    assert f"Garden: total revenue {total:.4f}".rstrip("0") in r.answer
    turn = next(t for t in analyst.memory.history.turns("dana", s.id) if t.question == first.question)
    assert [h.id for h in r.trace.memory_hits if h.kind == "history"] == [str(turn.id)]


def test_a_quoted_earlier_figure_brings_back_its_result_with_how_it_was_computed(chat):
    _, s, df = chat
    r1 = ok(s, "total revenue by region")
    ok(s, "median price")
    north = table(r1, "total revenue by region").set_index("region")["total revenue"]["North"]
    r = ok(s, f"You said 'North: {north}' for North: why is it higher?")
    got = table(r, "total revenue by region").set_index("region")
    totals = df.groupby("region")["revenue"].sum()
    assert got["total revenue"].to_dict() == pytest.approx(totals.to_dict())
    assert got.loc["North", "share %"] == pytest.approx(round(100 * totals["North"] / totals.sum(), 2))
    assert "How it was computed: total of `revenue` by `region`" in r.answer


def test_those_three_and_the_top_one_after_a_top_n(chat):
    _, s, df = chat
    ok(s, "top 3 categories by total revenue")
    top = df.groupby("category")["revenue"].sum().nlargest(3).index
    r = ok(s, "those three: average price?")
    got = table(r, "mean price by category (category in the top 3)").set_index("category")["mean price"]
    assert got.to_dict() == pytest.approx(df[df["category"].isin(top)].groupby("category")["price"].mean().to_dict())
    s.reset_memory()
    ok(s, "top 2 regions by total revenue")
    best = df.groupby("region")["revenue"].sum().idxmax()
    r = ok(s, "the top one: how many orders?")
    assert table(r, "number of rows by region (region in the top 1)").set_index("region")["number of rows"].to_dict() \
        == {best: int((df["region"] == best).sum())}


def test_same_for_another_column_after_a_chart(chat):
    _, s, df = chat
    r = ok(s, "histogram of price")
    assert r.figures
    r = ok(s, "same for units")
    fig = json.loads(Path(r.figures[0].path).read_text())
    assert fig["data"][0]["type"] == "histogram" and r.trace.standalone_question == "histogram of `units`"
    r = ok(s, "now only for 2023")
    assert r.trace.standalone_question == "histogram of `units` where `order_date` in year 2023" and r.figures
