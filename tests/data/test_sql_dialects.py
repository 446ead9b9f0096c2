"""The offline model's aggregate SQL (``duck_sql.aggregate_sql``) answers what pandas answers, in each dialect."""

from __future__ import annotations

import sqlite3
import uuid

import numpy as np
import pandas as pd
import pytest

from auto_analyst.data.duck_sql import aggregate_sql
from tests.services import service_url


@pytest.fixture(scope="module")
def sales() -> pd.DataFrame:
    rng = np.random.default_rng(5)
    n = 600
    frame = pd.DataFrame({
        "region": rng.choice(["North", "South", "O'Hare"], n),
        "amount": rng.gamma(2.0, 50.0, n).round(2),
        "units": rng.integers(1, 20, n),
        "paid": rng.choice([True, False], n),
        "day": pd.Timestamp("2022-11-01") + pd.to_timedelta(rng.integers(0, 500, n), unit="D"),
    })
    frame.loc[::11, "amount"] = np.nan
    return frame


@pytest.fixture(scope="module")
def lite(sales):
    con = sqlite3.connect(":memory:")
    out = sales.assign(day=sales["day"].dt.strftime("%Y-%m-%d"), paid=sales["paid"].astype(int))
    out.to_sql("sales", con, index=False)
    yield con
    con.close()


def _pandas_grain(day: pd.Series, grain: str) -> pd.Series:
    if grain == "month":
        return day.dt.strftime("%Y-%m")
    if grain == "quarter":
        return day.dt.to_period("Q").astype(str)
    if grain == "week":
        return day.dt.to_period("W").astype(str)
    if grain == "year":
        return day.dt.year
    return day.dt.strftime("%Y-%m-%d")


def check(run, sales: pd.DataFrame, dialect: str) -> None:
    for func in ["mean", "sum", "count", "min", "max", "nunique"] + (["median", "std", "var"] if dialect != "sqlite" else []):
        got = run(aggregate_sql("sales", [(func, "amount")], by=["region"], dialect=dialect))
        want = getattr(sales.groupby("region")["amount"], func)()
        assert got["region"].tolist() == want.index.tolist(), func
        assert got[f"{func}_amount"].astype(float).round(6).tolist() == want.astype(float).round(6).tolist(), func
    for grain in ["day", "week", "month", "quarter", "year"]:
        got = run(aggregate_sql("sales", [("sum", "units")], grain=(grain, "day"), dialect=dialect))
        want = sales.groupby(_pandas_grain(sales["day"], grain))["units"].sum()
        assert [str(k) for k in got[grain]] == [str(k) for k in want.index], grain
        assert got["sum_units"].astype(int).tolist() == want.tolist(), grain
    sql = aggregate_sql("sales", [("count", None), ("pct_true", "paid")], by=["region"],
                        where=[("amount", ">=", 20.5), ("day", "year", 2023), ("region", "in", ["North", "O'Hare"])],
                        dialect=dialect)
    got = run(sql)
    kept = sales[(sales["amount"] >= 20.5) & (sales["day"].dt.year == 2023) & sales["region"].isin(["North", "O'Hare"])]
    want = kept.groupby("region").agg(rows=("units", "size"), paid=("paid", "mean"))
    assert got["count_rows"].tolist() == want["rows"].tolist()
    assert got["pct_true_paid"].astype(float).round(6).tolist() == (100 * want["paid"]).round(6).tolist()
    top = run(aggregate_sql("sales", [("sum", "units")], by=["region"], order="desc", limit=1, dialect=dialect))
    assert top["region"].tolist() == [sales.groupby("region")["units"].sum().idxmax()]


def test_sqlite_matches_pandas(lite, sales):
    check(lambda q: pd.read_sql_query(q, lite), sales, "sqlite")


def test_sqlite_says_which_aggregates_it_lacks():
    with pytest.raises(ValueError, match="sqlite has no median"):
        aggregate_sql("sales", [("median", "amount")], dialect="sqlite")


@pytest.mark.services
def test_postgres_matches_pandas(sales):
    from sqlalchemy import create_engine, text

    url = service_url("database").replace("postgresql://", "postgresql+psycopg://", 1)
    engine = create_engine(url)
    schema = f"aa_dia_{uuid.uuid4().hex[:8]}"
    with engine.begin() as c:
        c.execute(text(f"CREATE SCHEMA {schema}"))
    try:
        sales.to_sql("sales", engine, schema=schema, index=False)
        with engine.connect() as c:
            c.execute(text(f"SET search_path TO {schema}"))
            check(lambda q: pd.read_sql_query(text(q), c), sales, "postgres")
    finally:
        with engine.begin() as c:
            c.execute(text(f"DROP SCHEMA {schema} CASCADE"))
        engine.dispose()


def test_an_aggregate_across_joined_tables_matches_pandas_and_refuses_inflating_joins():
    from auto_analyst.data.relations import detect_relationships, join_path
    from tests.sources_cases import shop_frames

    f = shop_frames()
    con = sqlite3.connect(":memory:")
    for name, frame in f.items():
        frame.to_sql(name, con, index=False)
    rels = detect_relationships(f)
    path = join_path(rels, "orders", "regions")
    assert path.status == "linked" and len(path.steps) == 2
    sql = aggregate_sql("orders", [("sum", ("orders", "amount")), ("count", None)], by=[("regions", "region_name")],
                        where=[(("orders", "amount"), ">", 10)], joins=path.steps, dialect="sqlite")
    got = pd.read_sql_query(sql, con)
    joined = f["orders"].merge(f["customers"], on="customer_id").merge(f["regions"], on="region_id")
    kept = joined[joined["amount"] > 10]
    want = kept.groupby("region_name").agg(total=("amount", "sum"), rows=("amount", "size"))
    assert got["region_name"].tolist() == want.index.tolist()
    assert got["sum_amount"].round(6).tolist() == want["total"].round(6).tolist()
    assert got["count_rows"].tolist() == want["rows"].tolist()
    # from regions to orders the join repeats each region's row: a sum of a regions column is refused
    back = join_path(rels, "regions", "orders")
    with pytest.raises(ValueError, match="repeats rows of regions"):
        aggregate_sql("regions", [("sum", ("regions", "region_id"))], joins=back.steps, dialect="sqlite")
    # ... while a distinct count is unchanged by the repeats
    assert aggregate_sql("regions", [("nunique", ("orders", "customer_id"))], by=[("regions", "region_name")],
                         joins=back.steps, dialect="sqlite")
