"""The SQL the offline codegen can emit for a DuckDB table answers what its pandas code answers."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pandas as pd
import pytest

duckdb = pytest.importorskip("duckdb", reason="duckdb is in the scale extra: pip install -e '.[scale]'")

from auto_analyst.data.duck_sql import aggregate_sql, grouped_aggregate_sql, literal, quote  # noqa: E402
from auto_analyst.declines import sql_decline  # noqa: E402
from auto_analyst.llm.capabilities import HOSTED  # noqa: E402
from auto_analyst.offline.engine import offline_lm  # noqa: E402


@pytest.fixture(scope="module")
def sales() -> pd.DataFrame:
    rng = np.random.default_rng(3)
    n = 2000
    frame = pd.DataFrame({
        "region": rng.choice(["North", "South", "O'Hare"], n),
        "city": rng.choice(["Paris", "Oslo", "Rome", "Lima"], n),
        "amount": rng.gamma(2.0, 50.0, n).round(2),
        "units": rng.integers(1, 20, n),
        "paid": rng.choice([True, False], n),
        "day": pd.Timestamp("2022-11-01") + pd.to_timedelta(rng.integers(0, 500, n), unit="D"),
    })
    frame.loc[::13, "amount"] = np.nan
    return frame


@pytest.fixture(scope="module")
def con(sales):
    c = duckdb.connect()
    c.register("sales", sales)
    yield c
    c.close()


def run(con, sql: str) -> pd.DataFrame:
    return con.sql(sql).df()


@pytest.mark.parametrize("func", ["mean", "median", "sum", "count", "min", "max", "std", "var", "nunique"])
def test_each_aggregate_by_group_matches_pandas(con, sales, func):
    got = run(con, aggregate_sql("sales", [(func, "amount")], by=["region"]))
    want = getattr(sales.groupby("region")["amount"], func)()
    assert got["region"].tolist() == want.index.tolist()  # ordered by the groups
    assert got[f"{func}_amount"].astype(float).round(8).tolist() == want.astype(float).round(8).tolist()


def test_rows_count_filters_and_labels(con, sales):
    sql = aggregate_sql("sales", [("count", None), ("sum", "units"), ("pct_true", "paid")], by=["city"],
                        where=[("region", "in", ["North", "O'Hare"]), ("amount", ">=", 20.5), ("day", "year", 2023)],
                        labels=["number of rows", "total units", "percent paid"])
    got = run(con, sql)
    kept = sales[sales["region"].isin(["North", "O'Hare"]) & (sales["amount"] >= 20.5) & (sales["day"].dt.year == 2023)]
    want = kept.groupby("city").agg(rows=("units", "size"), units=("units", "sum"), paid=("paid", "mean"))
    assert got["city"].tolist() == want.index.tolist()
    assert got["number of rows"].tolist() == want["rows"].tolist()
    assert got["total units"].tolist() == want["units"].tolist()
    assert got["percent paid"].round(8).tolist() == (100 * want["paid"]).round(8).tolist()


@pytest.mark.parametrize("grain, pandas_key", [
    ("day", lambda s: s.dt.strftime("%Y-%m-%d")), ("week", lambda s: s.dt.to_period("W").astype(str)),
    ("month", lambda s: s.dt.strftime("%Y-%m")), ("quarter", lambda s: s.dt.to_period("Q").astype(str)),
    ("year", lambda s: s.dt.year)])
def test_time_grains_read_like_pandas(con, sales, grain, pandas_key):
    got = run(con, aggregate_sql("sales", [("sum", "units")], grain=(grain, "day")))
    want = sales.assign(key=pandas_key(sales["day"])).groupby("key")["units"].sum()
    assert got[grain].astype(str).tolist() == [str(k) for k in want.index]
    assert got["sum_units"].tolist() == want.tolist()


def test_top_and_bottom_n_and_ranges(con, sales):
    top = run(con, aggregate_sql("sales", [("sum", "amount")], by=["city"], order="desc", limit=2))
    want = sales.groupby("city")["amount"].sum().sort_values(ascending=False).head(2)
    assert top["city"].tolist() == want.index.tolist()
    low = run(con, aggregate_sql("sales", [("mean", "units")], by=["region"], order="asc", limit=1))
    assert low["region"].tolist() == [sales.groupby("region")["units"].mean().idxmin()]
    kept = run(con, aggregate_sql("sales", [("count", None)], where=[("units", "between", 5, 9),
                                                                     ("day", "years", 2023, None)]))
    assert kept["count_rows"].tolist() == [int(((sales["units"].between(5, 9)) & (sales["day"].dt.year >= 2023)).sum())]


def test_the_simple_form_and_quoting():
    assert grouped_aggregate_sql("big", "grp", "value", "mean") == \
        'SELECT "grp", avg("value") AS "mean_value" FROM "big" GROUP BY "grp" ORDER BY "grp"'
    assert quote('we"ird') == '"we""ird"' and literal("O'Hare") == "'O''Hare'" and literal(True) == "TRUE"
    assert literal(pd.Timestamp("2023-01-02").date()) == "DATE '2023-01-02'"
    injected = aggregate_sql("t", [("count", None)], where=[("c", "==", "x'; DROP TABLE t; --")])
    assert injected.endswith("WHERE \"c\" = 'x''; DROP TABLE t; --'")
    for bad in ({"measures": [("mode", "x")]}, {"measures": [("sum", None)]}, {"measures": [("sum", "x")], "order": "up"},
                {"measures": [("sum", "x")], "grain": ("decade", "d")}, {"measures": [("sum", "x")], "where": [("x", "~", 1)]}):
        with pytest.raises(ValueError):
            aggregate_sql("t", **bad)


def test_the_offline_model_declines_pandas_code_on_a_duckdb_table():
    offline = offline_lm().capabilities  # the record the pipeline reads once per session
    code = "data_1 = big\nvalue_1_0 = data_1['value'].mean()\nshow(value_1_0, name='mean value')"
    said = sql_decline(offline, code, ["big"], "big")
    assert said.startswith("The embedded offline model cannot answer this yet: big is a DuckDB table")
    assert "duckdb_min_mb" in said
    assert sql_decline(offline, "show(len(df))", ["big"], "big")  # df is the DuckDB table
    assert sql_decline(offline, "show(small['x'].mean())", ["big"], "small") == ""  # reads a pandas table only
    assert sql_decline(offline, code, [], "big") == ""
    # what the offline engine says once it writes SQL
    assert sql_decline(replace(offline, writes_duckdb_sql=True), code, ["big"], "big") == ""
    assert sql_decline(HOSTED, code, ["big"], "big") == ""  # other models are told the contract instead
