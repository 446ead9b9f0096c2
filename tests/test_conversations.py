"""Multi-turn conversations: follow-ups, quotes, memory questions, style changes, budgets, users, restarts."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import textwrap

import pandas as pd
import pytest
from dspy.utils import DummyLM

from auto_analyst import Analyst, Settings
from auto_analyst.memory.context.tokens import count_tokens
from tests.helpers import REPO, sales_table, table, value


def totals(df, by="region"):
    return df.groupby(by)["revenue"].sum().to_dict()


def got(r, name="total revenue by region", col="total revenue", key="region"):
    return table(r, name).set_index(key)[col].to_dict()


@pytest.fixture
def sales_csv(tmp_path):
    path = tmp_path / "sales.csv"
    sales_table(seed=11).to_csv(path, index=False)
    return path


@pytest.fixture
def df(sales_csv):
    return pd.read_csv(sales_csv, parse_dates=["order_date"])


def open_session(home, csv, user="alice"):
    analyst = Analyst(settings=Settings.load({"home": home}), user=user)
    s = analyst.session()
    s.load(csv)
    return analyst, s


def test_those_that_same_for_now_only(tmp_path, sales_csv, df):
    analyst, s = open_session(tmp_path, sales_csv)
    with analyst:
        r1 = s.ask("total revenue by region")
        assert got(r1) == pytest.approx(totals(df))
        r2 = s.ask("which of those is the highest?")
        assert value(r2, "region with the highest total revenue") == max(totals(df), key=totals(df).get)
        r3 = s.ask("now only for 2023")
        d23 = df[df["order_date"].dt.year == 2023]
        assert value(r3, "its total revenue") == pytest.approx(max(totals(d23).values()))
        r4 = s.ask("same for Kitchen")
        dk = d23[d23["category"] == "Kitchen"]
        assert value(r4, "region with the highest total revenue") == max(totals(dk), key=totals(dk).get)
        r5 = s.ask("plot that")
        assert r5.figures and got(r5) == pytest.approx(totals(dk))
        # the planner saw the previous turns
        assert any(h.kind == "short_term" for h in r5.trace.memory_hits)


def test_quote_memory_question_and_style_change(tmp_path, sales_csv, df):
    analyst, s = open_session(tmp_path, sales_csv)
    with analyst:
        r1 = s.ask("What is the standard deviation of price by category?")
        std = df.groupby("category")["price"].std()
        assert got(r1, "standard deviation price by category", "standard deviation price", "category") == pytest.approx(std.to_dict())
        s.ask("average units by region")
        s.ask("total revenue by region")
        # a quote of turn 1's answer: the follow-up builds on that turn, not on the last one
        r4 = s.ask('About "Standard deviation price by category": plot that')
        assert r4.status == "ok" and r4.figures
        assert got(r4, "standard deviation price by category", "standard deviation price", "category") == pytest.approx(std.to_dict())
        assert any(h.kind == "history" for h in r4.trace.memory_hits)
        r5 = s.ask("What did we find about the standard deviation of price earlier?")
        assert r5.trace.intent == "memory_query" and r5.trace.source == "memory"
        assert f"{std['Garden']:.4f}".rstrip("0") in r5.answer
        assert r5.code == ""  # answered without running code
        r6 = s.ask("answer more briefly please")
        assert r6.trace.intent == "config_change" and "short" in r6.answer
        r7 = s.ask("Which region has the highest total revenue?")
        assert "Total revenue by region" not in r7.answer  # brief: the headline only
        assert value(r7, "region with the highest total revenue") == max(totals(df), key=totals(df).get)


def test_a_style_change_beside_a_question_is_kept_and_the_question_answered(tmp_path, sales_csv, df):
    # held-out conversations: "Keep it short from now on. Now only ..." kept the style and dropped the question
    analyst, s = open_session(tmp_path, sales_csv)
    with analyst:
        s.ask("total revenue by region")
        r = s.ask("Keep it short from now on. Now only for 2023.")
        d23 = df[df["order_date"].dt.year == 2023]
        assert r.status == "ok" and r.trace.intent == "config_change"
        assert got(r) == pytest.approx(totals(d23))
        assert analyst.memory.profiles.get("alice").style == "concise"
        r = s.ask("Use bullet points from now on. Which region has the highest total revenue?")
        assert value(r, "region with the highest total revenue") == max(totals(df), key=totals(df).get)
        assert r.answer.lstrip().startswith("-")  # written in this turn's new style already


def test_fifty_turns_stay_under_budget_and_turn_3_is_remembered(tmp_path, sales_csv, df):
    settings = Settings.load({"home": tmp_path, "memory_budget_tokens": 600, "prompt_budget_tokens": 2500})
    analyst = Analyst(settings=settings, user="alice")
    s = analyst.session()
    s.load(sales_csv)
    questions = ["total revenue by region", "average units by category", "median price by region"]
    with analyst:
        for k in range(50):
            q = questions[k % 3] if k != 2 else "What is the maximum price for Garden?"
            r = s.ask(q)
            assert r.status == "ok", (k, q, r.answer)
            sizes = {c.part: c.tokens for c in r.trace.context}
            assert sizes["short_term"] <= 600 and sum(sizes.values()) <= 2500, (k, sizes)
        r = s.ask("What did we find earlier about the maximum price for Garden?")
        assert r.trace.source == "memory"
        assert str(df.loc[df["category"] == "Garden", "price"].max()) in r.answer
        assert count_tokens(s.memory.running_summary) > 0  # older turns were folded into the running summary


def test_two_users_interleaved_see_only_their_own_memory(tmp_path, sales_csv):
    a, sa = open_session(tmp_path, sales_csv, "alice")
    b, sb = open_session(tmp_path, sales_csv, "bob")
    with a, b:
        sa.ask("median price by region")
        sb.ask("total units by category")
        assert "price" in {e.entity for e in a.memory.entities.top("alice")}
        assert "price" not in {e.entity for e in b.memory.entities.top("bob")}
        sa.ask("be more formal")
        rb = sb.ask("What did we find about the median price earlier?")
        assert "median" not in rb.answer.lower() or "don't find" in rb.answer
        assert all(t.user == "bob" for t in b.memory.history.turns("bob"))
        assert a.memory.profiles.get("alice").tone == "formal" and b.memory.profiles.get("bob").tone != "formal"


def test_history_and_profile_survive_kill_9_between_turns(tmp_path, sales_csv, df):
    script = textwrap.dedent(f"""
        import os, signal, sys
        sys.path.insert(0, {str(REPO)!r})
        from auto_analyst import Analyst, Settings
        a = Analyst(settings=Settings.load({{"home": {str(tmp_path)!r}}}), user="alice")
        s = a.session(); s.load({str(sales_csv)!r})
        s.ask("total revenue by region"); s.ask("explain like I'm new to statistics")
        print(s.id, flush=True)
        os.kill(os.getpid(), signal.SIGKILL)
    """)
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=180)
    assert proc.returncode == -signal.SIGKILL, proc.stderr
    session_id = proc.stdout.strip().splitlines()[-1]
    with Analyst(settings=Settings.load({"home": tmp_path}), user="alice") as analyst:
        s = analyst.resume()
        assert s.id == session_id and s.turn == 2
        assert analyst.memory.profiles.get("alice").expertise == "beginner"
        r = s.ask("now only for 2023")
        d23 = df[df["order_date"].dt.year == 2023]
        assert got(r) == pytest.approx(totals(d23))
        assert [t.question for t in analyst.memory.history.turns("alice", session_id)][:2] == [
            "total revenue by region", "explain like I'm new to statistics"]


def test_scripted_llm_conversation_gets_the_previous_turns(tmp_path, sales_csv):
    step = [{"agent": "statistics", "instruction": "sum", "uses": ["df"], "creates": []}]
    answers = []
    for k, (q, code) in enumerate([("total revenue", "show(df['revenue'].sum(), name='total')"),
                                   ("total revenue in 2023", "d = df[df['order_date'].dt.year == 2023]\nshow(d['revenue'].sum(), name='total')"),
                                   ("total revenue in 2023 for Garden", "d = df[(df['order_date'].dt.year == 2023) & (df['category'] == 'Garden')]\nshow(d['revenue'].sum(), name='total')"),
                                   ("mean price in 2023 for Garden", "d = df[(df['order_date'].dt.year == 2023) & (df['category'] == 'Garden')]\nshow(d['price'].mean(), name='mean')")]):
        answers += [{"intent": "analysis", "standalone_question": q, "plan": step, "assumptions": [], "decline_reason": ""},
                    {"code": code, "summary": "s"}, {"answer": f"answer {k}"}, {"summary": f"turn {k + 1}: {q}"}]
    lm = DummyLM(answers)
    analyst = Analyst(settings=Settings.load({"home": tmp_path}), lm=lm, user="carol")
    s = analyst.session()
    s.load(sales_csv)
    with analyst:
        for q in ["total revenue", "now only 2023", "same for Garden", "what about the mean price?"]:
            assert s.ask(q).status == "ok"
    planner_prompts = [h["messages"][-1]["content"] for h in lm.history if "standalone_question" in str(h["messages"][0]["content"])]
    assert len(planner_prompts) == 4
    memory_of_turn_4 = planner_prompts[3].split("[[ ## short_term_memory ## ]]")[1].split("[[ ##")[0]
    turns = json.loads(memory_of_turn_4)["turns"]
    assert [t["standalone_question"] for t in turns] == ["total revenue", "total revenue in 2023", "total revenue in 2023 for Garden"]
    assert turns[-1]["summary"] == "turn 3: total revenue in 2023 for Garden"
