"""End to end with the embedded offline model and the real sandbox: each answer's values are checked
against pandas computed here, independently of the generated code."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from auto_analyst import Analyst, Settings
from tests.helpers import sales_table, table, value


@pytest.fixture(scope="module")
def session(tmp_path_factory):
    home = tmp_path_factory.mktemp("home")
    analyst = Analyst(settings=Settings.load({"home": home}))
    s = analyst.session()
    s.add_frame("sales", sales_table(seed=7))
    yield s
    analyst.close()


@pytest.fixture(scope="module")
def df():
    return sales_table(seed=7)


def ask_ok(session, q):
    r = session.ask(q)
    assert r.status == "ok", (q, r.answer, r.error, r.code)
    assert not r.trace.unsupported_numbers, (r.answer, r.trace.unsupported_numbers)
    return r


@pytest.mark.parametrize("question,name,func", [
    ("What is the mean price?", "mean price", lambda d: d["price"].mean()),
    ("median units", "median units", lambda d: d["units"].median()),
    ("What is the total revenue?", "total revenue", lambda d: d["revenue"].sum()),
    ("minimum price", "minimum price", lambda d: d["price"].min()),
    ("What's the highest price?", "maximum price", lambda d: d["price"].max()),
    ("standard deviation of price", "standard deviation price", lambda d: d["price"].std()),
    ("How many rows are there?", "number of rows", lambda d: len(d)),
    ("total revenue for Garden", "total revenue", lambda d: d.loc[d["category"] == "Garden", "revenue"].sum()),
    ("What was the average revenue in 2023?", "mean revenue", lambda d: d.loc[d["order_date"].dt.year == 2023, "revenue"].mean()),
    ("How many orders came from the North region?", "number of rows", lambda d: int((d["region"] == "North").sum())),
    ("max units where price > 60", "maximum units", lambda d: d.loc[d["price"] > 60, "units"].max()),
])
def test_single_values(session, df, question, name, func):
    r = ask_ok(session, question)
    assert value(r, name) == pytest.approx(func(df), rel=1e-9)


def test_grouped_mean(session, df):
    r = ask_ok(session, "average revenue by region")
    got = table(r, "mean revenue by region").set_index("region")["mean revenue"]
    pd.testing.assert_series_equal(got, df.groupby("region")["revenue"].mean().rename("mean revenue"), check_names=False)


def test_rank_names_the_winner_and_its_value(session, df):
    r = ask_ok(session, "Which region has the highest total revenue?")
    totals = df.groupby("region")["revenue"].sum()
    assert value(r, "region with the highest total revenue") == totals.idxmax()
    assert value(r, "its total revenue") == pytest.approx(totals.max())
    assert totals.idxmax() in r.answer


def test_summary_statistics_and_missing(session, df):
    r = ask_ok(session, "summary statistics of price")
    stats = table(r, "summary statistics").set_index("column")
    assert stats.loc["price", "mean"] == pytest.approx(round(df["price"].mean(), 4))
    assert stats.loc["price", "count"] == df["price"].notna().sum()
    r = ask_ok(session, "How many missing values are there?")
    assert value(r, "total missing values") == int(df.isna().sum().sum()) == 7


def test_value_counts(session, df):
    r = ask_ok(session, "How many rows per region?")
    got = table(r, "number of rows by region").set_index("region")["number of rows"].to_dict()
    assert got == df["region"].value_counts().to_dict()
    r = ask_ok(session, "value counts of category")
    got = table(r, "rows by category").set_index("category")["count"].to_dict()
    assert got == df["category"].value_counts().to_dict()


def test_correlation(session, df):
    r = ask_ok(session, "What is the correlation between price and units?")
    assert value(r, "Pearson correlation of price and units") == pytest.approx(df["price"].corr(df["units"]))


def _figure(r):
    assert len(r.figures) == 1, r.figures
    f = r.figures[0]
    assert f.kind == "plotly"
    return json.loads(Path(f.path).read_text())


def test_histogram(session, df):
    r = ask_ok(session, "Plot a histogram of price")
    fig = _figure(r)
    assert fig["data"][0]["type"] == "histogram"


def test_bar_chart_by_group(session, df):
    r = ask_ok(session, "bar chart of total revenue by category")
    fig = _figure(r)
    assert fig["data"][0]["type"] == "bar"
    got = table(r, "total revenue by category").set_index("category")["total revenue"]
    assert got.to_dict() == pytest.approx(df.groupby("category")["revenue"].sum().to_dict())
    assert list(got) == sorted(got, reverse=True)  # bars sorted


def test_scatter(session, df):
    r = ask_ok(session, "scatter plot of price against revenue")
    fig = _figure(r)
    assert fig["data"][0]["type"] == "scatter" and fig["data"][0]["mode"] == "markers"


def test_line_by_month(session, df):
    r = ask_ok(session, "line chart of total revenue by month")
    fig = _figure(r)
    assert fig["data"][0]["type"] == "scatter" and "lines" in fig["data"][0]["mode"]
    got = table(r, "total revenue by month").set_index("month")["total revenue"]
    want = df.groupby(df["order_date"].dt.strftime("%Y-%m"))["revenue"].sum()
    assert got.to_dict() == pytest.approx(want.to_dict())


def test_conversation_with_follow_ups(session, df):
    r1 = ask_ok(session, "What is the total revenue by region?")
    want = df.groupby("region")["revenue"].sum()
    assert table(r1, "total revenue by region").set_index("region")["total revenue"].to_dict() == pytest.approx(want.to_dict())
    r2 = ask_ok(session, "now only for 2023")
    d23 = df[df["order_date"].dt.year == 2023]
    want23 = d23.groupby("region")["revenue"].sum()
    assert table(r2, "total revenue by region").set_index("region")["total revenue"].to_dict() == pytest.approx(want23.to_dict())
    r3 = ask_ok(session, "same for Garden")
    g = d23[d23["category"] == "Garden"].groupby("region")["revenue"].sum()
    assert table(r3, "total revenue by region").set_index("region")["total revenue"].to_dict() == pytest.approx(g.to_dict())
    r4 = ask_ok(session, "plot that")
    assert _figure(r4)["data"][0]["type"] == "bar"
    assert table(r4, "total revenue by region").set_index("region")["total revenue"].to_dict() == pytest.approx(g.to_dict())


def test_unknown_words_are_declined_with_the_columns_listed(session):
    r = session.ask("What is the customer satisfaction by region?")
    assert r.status == "declined"
    assert "satisfaction" in r.answer and "revenue" in r.answer  # says what it didn't understand, lists columns
    assert r.code == "" and r.attempts == []


def test_misspelled_column_is_taken_and_said(session, df):
    r = ask_ok(session, "average revnue by regon")
    got = table(r, "mean revenue by region").set_index("region")["mean revenue"]
    assert got.to_dict() == pytest.approx(df.groupby("region")["revenue"].mean().to_dict())
    assert "took 'revnue' as 'revenue'" in r.answer


def test_unknown_value_is_reported_not_substituted(session):
    r = session.ask("total revenue where region = 'Nowhere'")
    assert r.status == "error"
    assert "Nowhere" in r.error.message and "North" in r.error.message


def test_bundled_iris(datasets_dir, tmp_path):
    with Analyst(settings=Settings.load({"home": tmp_path})) as analyst:
        s = analyst.session()
        s.load(datasets_dir / "iris.csv")
        r = ask_ok(s, "What is the average petal length for each species?")
        iris = pd.read_csv(datasets_dir / "iris.csv")
        got = table(r, "mean petal_length by species").set_index("species")["mean petal_length"]
        assert got.to_dict() == pytest.approx(iris.groupby("species")["petal_length"].mean().to_dict())
