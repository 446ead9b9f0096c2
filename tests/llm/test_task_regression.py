"""OLS regression plugin, end to end: values checked against statsmodels fitted here independently."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import statsmodels.formula.api as smf
from scipy import stats

from tests.helpers import ask_checked, seeded_sessions, table, value

SEEDS = [0, 1, 2]


def homes(seed: int, n: int = 240) -> pd.DataFrame:
    """Prices that depend on floor area and city, with odd column names and a few missing areas."""
    rng = np.random.default_rng(seed)
    city = rng.choice(["Lyon", "Nice", "Paris"], n)
    area = rng.normal(80, 20, n).round(1)
    rooms = rng.integers(1, 6, n)
    price = 1000 + 25 * area + np.select([city == "Paris", city == "Nice"], [900, 300], 0) + 40 * rooms \
        + rng.normal(0, 150, n)
    df = pd.DataFrame({"listing_id": [f"L{seed}{i:04d}" for i in range(n)], "floor area": area, "rooms #": rooms,
                       "city": city, "price $": price.round(2)})
    df.loc[rng.choice(n, 6, replace=False), "floor area"] = np.nan
    return df


@pytest.fixture(scope="module")
def session(tmp_path_factory):
    yield from seeded_sessions(tmp_path_factory, "homes", homes, SEEDS)


ask = ask_checked


def coef_table(r, target):
    return table(r, f"OLS coefficients of {target}").set_index("term")


@pytest.mark.parametrize("seed", SEEDS)
def test_numeric_and_categorical_predictors(session, seed):
    df = homes(seed)
    r = ask(session, seed, "Regress price $ on floor area, rooms # and city")
    ref = smf.ols("Q('price $') ~ Q('floor area') + Q('rooms #') + C(city)", data=df).fit()
    got = coef_table(r, "price $")
    assert got.loc["floor area", "coef"] == pytest.approx(ref.params["Q('floor area')"], rel=1e-9)
    assert got.loc["rooms #", "p-value"] == pytest.approx(ref.pvalues["Q('rooms #')"], rel=1e-6)
    assert got.loc["city = Paris", "coef"] == pytest.approx(ref.params["C(city)[T.Paris]"], rel=1e-9)
    assert got.loc["Intercept", "std err"] == pytest.approx(ref.bse["Intercept"], rel=1e-9)
    assert value(r, "R-squared of price $") == pytest.approx(ref.rsquared, rel=1e-9)
    assert value(r, "adjusted R-squared of price $") == pytest.approx(ref.rsquared_adj, rel=1e-9)
    assert value(r, "rows used in the regression") == int(ref.nobs) == len(df) - 6


@pytest.mark.parametrize("seed", SEEDS[:2])
def test_effect_of_x_on_y_is_the_slope(session, seed):
    df = homes(seed).dropna()
    r = ask(session, seed, "What is the effect of floor area on price $?")
    ref = stats.linregress(df["floor area"], df["price $"])
    got = coef_table(r, "price $")
    assert list(got.index) == ["Intercept", "floor area"]
    assert got.loc["floor area", "coef"] == pytest.approx(ref.slope, rel=1e-9)
    assert got.loc["floor area", "p-value"] == pytest.approx(ref.pvalue, rel=1e-6, abs=1e-300)
    assert value(r, "R-squared of price $") == pytest.approx(ref.rvalue ** 2, rel=1e-9)


def test_r_squared_against_and_filter(session):
    df = homes(1)
    sub = df[df["city"] == "Lyon"]
    r = ask(session, 1, "R-squared of price $ against rooms # for Lyon")
    ref = smf.ols("Q('price $') ~ Q('rooms #')", data=sub).fit()
    assert value(r, "R-squared of price $") == pytest.approx(ref.rsquared, rel=1e-9)
    assert value(r, "rows used in the regression") == len(sub)


def test_misspelled_predictor_is_taken_and_said(session):
    df = homes(2)
    r = ask(session, 2, "regress price $ on flor area")
    ref = smf.ols("Q('price $') ~ Q('floor area')", data=df).fit()
    assert coef_table(r, "price $").loc["floor area", "coef"] == pytest.approx(ref.params.iloc[1], rel=1e-9)
    assert any("flor area" in a for a in r.trace.assumptions), r.trace.assumptions


def test_all_other_columns_leave_out_the_identifier(session):
    df = homes(0)
    r = ask(session, 0, "linear regression of price $")
    got = coef_table(r, "price $")
    assert not any("listing" in t for t in got.index)
    ref = smf.ols("Q('price $') ~ Q('floor area') + Q('rooms #') + C(city)", data=df).fit()
    assert value(r, "R-squared of price $") == pytest.approx(ref.rsquared, rel=1e-9)
    assert any("listing_id" in a for a in r.trace.assumptions)


@pytest.mark.parametrize("q", [
    "regression of price $ and floor area",          # which one is the outcome?
    "regress city on floor area",                    # categorical outcome
    "regress price $ on garden size",                # no such column
    "regress price $ on listing_id",                 # identifier as predictor
    "regress price $ on floor area by city",         # one regression per group: not supported
])
def test_declines(session, q):
    r = ask(session, 0, q, status="declined")
    assert r.answer
