"""Outlier plugin (Tukey IQR fences, z-scores, statistics without outliers), end to end against pandas."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from tests.helpers import ask_checked, seeded_sessions, table, value

SEEDS = [6, 7, 8]


def visits(seed: int, n: int = 400) -> pd.DataFrame:
    """Latencies with a heavy tail and a handful of planted spikes; a few missing spends."""
    rng = np.random.default_rng(seed)
    latency = rng.lognormal(4, 0.4, n)
    latency[rng.choice(n, 8, replace=False)] *= 6
    spend = rng.normal(40, 8, n)
    df = pd.DataFrame({"visit_id": np.arange(n), "channel": rng.choice(["web", "app"], n),
                       "latency (ms)": latency.round(1), "spend €": spend.round(2)})
    df.loc[rng.choice(n, 4, replace=False), "spend €"] = np.nan
    return df


def iqr_flags(x: pd.Series, k: float = 1.5) -> pd.Series:
    q1, q3 = x.quantile(0.25), x.quantile(0.75)
    return (x < q1 - k * (q3 - q1)) | (x > q3 + k * (q3 - q1))


def z_flags(x: pd.Series, t: float = 3) -> pd.Series:
    return ((x - x.mean()) / x.std()).abs() > t


@pytest.fixture(scope="module")
def session(tmp_path_factory):
    yield from seeded_sessions(tmp_path_factory, "visits", visits, SEEDS)


ask = ask_checked


@pytest.mark.parametrize("seed", SEEDS)
def test_iqr_outliers_default(session, seed):
    x = visits(seed)["latency (ms)"]
    r = ask(session, seed, "Are there outliers in latency?")
    flags = iqr_flags(x)
    assert value(r, "number of outliers in latency (ms)") == int(flags.sum()) > 0
    q1, q3 = x.quantile(0.25), x.quantile(0.75)
    assert value(r, "upper fence") == pytest.approx(q3 + 1.5 * (q3 - q1))
    rows = table(r, "outlier rows")
    assert sorted(rows["visit_id"]) == sorted(visits(seed).loc[flags, "visit_id"])
    assert any("IQR" in a for a in r.trace.assumptions)


@pytest.mark.parametrize("seed,q,t", [(6, "z-score outliers of latency with threshold 2.5", 2.5),
                                      (7, "outliers in latency (ms) with |z| > 2", 2),
                                      (8, "how many values of latency are more than 3 standard deviations from the mean", 3)])
def test_zscore_thresholds(session, seed, q, t):
    x = visits(seed)["latency (ms)"]
    r = ask(session, seed, q)
    assert value(r, "number of outliers in latency (ms)") == int(z_flags(x, t).sum())
    assert value(r, "lower fence") == pytest.approx(x.mean() - t * x.std())


@pytest.mark.parametrize("seed", SEEDS[:2])
def test_mean_after_removing_outliers(session, seed):
    df = visits(seed)
    r = ask(session, seed, "Remove outliers in latency then compute the mean latency")
    x = df["latency (ms)"]
    assert value(r, "mean latency (ms) without outliers") == pytest.approx(x[~iqr_flags(x)].mean())
    assert value(r, "mean latency (ms) with all rows") == pytest.approx(x.mean())


def test_median_without_zscore_outliers_and_iqr_multiplier(session):
    df = visits(8)
    x = df["latency (ms)"]
    r = ask(session, 8, "median latency excluding outliers by z-score above 2")
    assert value(r, "median latency (ms) without outliers") == pytest.approx(x[~z_flags(x, 2)].median())
    r = ask(session, 8, "outliers of latency using 3 IQR")
    assert value(r, "number of outliers in latency (ms)") == int(iqr_flags(x, 3).sum())


def test_two_columns_and_misspelling(session):
    df = visits(7)
    r = ask(session, 7, "find outliers in latency and spemd €")
    per = table(r, "outliers by column").set_index("column")["outliers"]
    assert per["latency (ms)"] == int(iqr_flags(df["latency (ms)"]).sum())
    assert per["spend €"] == int(iqr_flags(df["spend €"]).sum())
    either = iqr_flags(df["latency (ms)"]) | iqr_flags(df["spend €"])
    assert value(r, "rows with an outlier") == int(either.sum())
    assert any("spemd" in a for a in r.trace.assumptions)


@pytest.mark.parametrize("q", [
    "outliers in basket size",                        # no such column
    "outliers of latency by channel",                 # per-group outliers: not supported
    "outliers in channel",                            # not numeric
    "outliers in latency using z-score and IQR",      # two methods
])
def test_declines(session, q):
    ask(session, 6, q, status="declined")
