"""Offline answers beyond single aggregates, on generated tables with several seeds; values computed here."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from auto_analyst import Analyst, Settings
from tests.helpers import ask_checked, sales_table, seeded_sessions, table, value

SEEDS = [1, 2, 3]


@pytest.fixture(scope="module")
def sessions(tmp_path_factory):
    analyst = Analyst(settings=Settings.load({"home": tmp_path_factory.mktemp("home")}))
    out = {}
    for seed in SEEDS:
        s = analyst.session()
        s.add_frame("sales", sales_table(seed=seed))
        out[seed] = s
    yield out
    analyst.close()


def ask(session, q, status="ok"):
    session.reset_memory()  # each question stands alone here
    r = session.ask(q)
    assert r.status == status, (q, r.answer, r.error, r.code)
    if status == "ok":
        assert not r.trace.unsupported_numbers, (r.answer, r.trace.unsupported_numbers)
    return r


@pytest.mark.parametrize("seed", SEEDS)
def test_top_and_bottom_n_groups(sessions, seed):
    df = sales_table(seed=seed)
    r = ask(sessions[seed], "top 2 categories by total revenue")
    want = df.groupby("category")["revenue"].sum().nlargest(2)
    got = table(r, "top 2 category by total revenue").set_index("category")["total revenue"]
    assert list(got.index) == list(want.index) and got.to_dict() == pytest.approx(want.to_dict())
    r = ask(sessions[seed], "bottom 3 regions by average price")
    want = df.groupby("region")["price"].mean().nsmallest(3)
    got = table(r, "bottom 3 region by mean price").set_index("region")["mean price"]
    assert list(got.index) == list(want.index)


@pytest.mark.parametrize("seed", SEEDS)
def test_total_of_the_largest_values(sessions, seed):
    df = sales_table(seed=seed)
    r = ask(sessions[seed], "What is the total of the top 5 revenue values?")
    assert value(r, "total of the 5 largest revenue") == pytest.approx(df["revenue"].nlargest(5).sum())


@pytest.mark.parametrize("seed", SEEDS)
def test_busiest_month_and_ties(sessions, seed):
    df = sales_table(seed=seed)
    counts = df.groupby(df["order_date"].dt.strftime("%Y-%m")).size()
    r = ask(sessions[seed], "Which month had the most orders?")
    winners = sorted(counts[counts == counts.max()].index)
    assert value(r, "month with the highest number of rows") == " and ".join(winners)
    assert value(r, "its number of rows") == counts.max()


@pytest.mark.parametrize("seed", SEEDS)
def test_share_of_total(sessions, seed):
    df = sales_table(seed=seed)
    r = ask(sessions[seed], "share of revenue by region")
    got = table(r, "total revenue by region").set_index("region")["share %"]
    want = (100 * df.groupby("region")["revenue"].sum() / df["revenue"].sum()).round(2)
    assert got.to_dict() == pytest.approx(want.to_dict())
    r = ask(sessions[seed], "what percent of orders come from the West region?")
    assert value(r, "number of rows as a percent of the whole table") == pytest.approx(
        round(100 * (df["region"] == "West").mean(), 2))


@pytest.mark.parametrize("seed", SEEDS)
def test_several_values_and_ranges(sessions, seed):
    df = sales_table(seed=seed)
    r = ask(sessions[seed], "total revenue for North and South")
    assert value(r, "total revenue") == pytest.approx(df.loc[df["region"].isin(["North", "South"]), "revenue"].sum())
    r = ask(sessions[seed], "How many orders have units between 5 and 10?")
    assert value(r, "number of rows") == int(df["units"].between(5, 10).sum())
    r = ask(sessions[seed], "mean price where units >= 15")
    assert value(r, "mean price") == pytest.approx(df.loc[df["units"] >= 15, "price"].mean())
    r = ask(sessions[seed], "average revenue in 2022 and 2023")
    assert value(r, "mean revenue") == pytest.approx(df.loc[df["order_date"].dt.year.isin([2022, 2023]), "revenue"].mean())


@pytest.mark.parametrize("seed", SEEDS)
def test_new_columns_and_groups(sessions, seed):
    df = sales_table(seed=seed)
    r = ask(sessions[seed], 'Create a new column called "unit_value" as the ratio of revenue to units. '
                            "Then, what is the mean unit_value by category?")
    want = (df["revenue"] / df["units"]).groupby(df["category"]).mean()
    got = table(r, "mean unit_value by category").set_index("category")["mean unit_value"]
    assert got.to_dict() == pytest.approx(want.to_dict())
    r = ask(sessions[seed], "Create a new column called \"size\" that groups the orders into 'small' (1-5 units), "
                            "'medium' (6-12 units) and 'large' (13 units and above). Then, how many rows per size?")
    bins = pd.cut(df["units"], [-np.inf, 5, 12, np.inf], labels=["small", "medium", "large"]).astype(str)
    got = table(r, "number of rows by size").set_index("size")["number of rows"]
    assert got.to_dict() == bins.value_counts().to_dict()


@pytest.mark.parametrize("seed", SEEDS)
def test_multi_part_answers_what_it_can_and_says_what_it_could_not(sessions, seed):
    df = sales_table(seed=seed)
    r = ask(sessions[seed], "Which category has the highest total revenue, and what is the customer satisfaction by region?")
    totals = df.groupby("category")["revenue"].sum()
    assert value(r, "category with the highest total revenue") == totals.idxmax()
    assert "satisfaction" in r.answer and "not answered" in r.answer


@pytest.mark.parametrize("seed", SEEDS)
def test_answer_format_names(sessions, seed):
    df = sales_table(seed=seed)
    r = ask(sessions[seed], "Calculate the mean and standard deviation of price. "
                            "@price_mean[mean] @price_std[std] where both are rounded to two decimal places.")
    assert f"@price_mean[{round(df['price'].mean(), 2):.2f}".rstrip("0").rstrip(".") in r.answer
    assert f"@price_std[{round(df['price'].std(), 2):.2f}".rstrip("0").rstrip(".") in r.answer


@pytest.mark.parametrize("q", [
    "Who will win the election?",
    "What is the weather like in Lyon?",
    "predict the future",
    "Is the newest version better?",
    "sort the regions in alphabetical order",
])
def test_questions_it_must_decline(sessions, q):
    r = ask(sessions[SEEDS[0]], q, status="declined")
    assert r.code == "" and "model" in r.answer or "columns" in r.answer.lower() or "Columns" in r.answer


@pytest.fixture(scope="module")
def churn_sessions(tmp_path_factory):
    def churn(seed):
        rng = np.random.default_rng(seed)
        n = 300
        return pd.DataFrame({"plan": rng.choice(["Basic", "Plus", "Pro"], n), "tenure": rng.integers(1, 60, n),
                             "churned": rng.random(n) < 0.4})
    yield from seeded_sessions(tmp_path_factory, "customers", churn, SEEDS)


@pytest.mark.parametrize("seed", SEEDS)
def test_yes_no_columns_as_conditions_and_rates(churn_sessions, seed):
    s = churn_sessions[seed]
    df = s.tables[f"customers{seed}"].frame
    s.reset_memory()
    r = ask_checked(churn_sessions, seed, "average tenure of churned customers")
    assert value(r, "mean tenure") == pytest.approx(df.loc[df["churned"], "tenure"].mean())
    s.reset_memory()
    r = ask_checked(churn_sessions, seed, "average tenure of customers who did not churn")
    assert value(r, "mean tenure") == pytest.approx(df.loc[~df["churned"], "tenure"].mean())
    s.reset_memory()
    r = ask_checked(churn_sessions, seed, "what share of customers churned, by plan?")
    got = table(r, "percent churned by plan").set_index("plan")["percent churned"]
    assert got.to_dict() == pytest.approx((100 * df.groupby("plan")["churned"].mean()).to_dict())
