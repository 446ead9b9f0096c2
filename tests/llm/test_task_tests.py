"""Hypothesis-test plugin (Welch t-test, ANOVA, chi-square, normality), end to end against scipy."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from tests.helpers import ask_checked, seeded_sessions, table, value

SEEDS = [3, 4, 5]


def trial(seed: int, n: int = 300) -> pd.DataFrame:
    """Scores by arm and site; 'site' and 'outcome' are associated; a few missing scores."""
    rng = np.random.default_rng(seed)
    arm = rng.choice(["control", "treatment"], n)
    site = rng.choice(["Oslo", "Bergen", "Tromso", "Bodo"], n)
    score = rng.normal(50, 10, n) + np.where(arm == "treatment", 3, 0) + np.where(site == "Oslo", 4, 0)
    outcome = np.where(rng.random(n) < np.where(site == "Oslo", 0.6, 0.35), "improved", "same")
    df = pd.DataFrame({"patient id": [f"P{seed}-{i}" for i in range(n)], "arm": arm, "site": site,
                       "blood pressure": score.round(1), "wait days": rng.exponential(5, n).round(2),
                       "outcome": outcome})
    df.loc[rng.choice(n, 5, replace=False), "blood pressure"] = np.nan
    return df


@pytest.fixture(scope="module")
def session(tmp_path_factory):
    yield from seeded_sessions(tmp_path_factory, "trial", trial, SEEDS)


ask = ask_checked


def conclusion(r) -> str:
    return value(r, "conclusion")


@pytest.mark.parametrize("seed", SEEDS)
def test_welch_t_test_between_two_arms(session, seed):
    df = trial(seed)
    r = ask(session, seed, "Is there a significant difference in blood pressure between control and treatment?")
    a = df.loc[df["arm"] == "control", "blood pressure"].dropna()
    b = df.loc[df["arm"] == "treatment", "blood pressure"].dropna()
    ref = stats.ttest_ind(a, b, equal_var=False)
    assert value(r, "t statistic") == pytest.approx(ref.statistic, rel=1e-9)
    assert value(r, "p-value") == pytest.approx(ref.pvalue, rel=1e-6)
    assert conclusion(r).startswith("p = ") and ("< alpha 0.05" in conclusion(r)) == (ref.pvalue < 0.05)
    groups = table(r, "blood pressure by arm").set_index("arm")
    assert groups.loc["treatment", "mean"] == pytest.approx(b.mean())
    assert "significance level alpha = 0.05" in r.trace.assumptions


def test_t_test_of_two_named_sites_at_given_alpha(session):
    df = trial(4)
    r = ask(session, 4, "t-test of blood pressure between Oslo and Bergen at alpha 0.01")
    a = df.loc[df["site"] == "Oslo", "blood pressure"].dropna()
    b = df.loc[df["site"] == "Bergen", "blood pressure"].dropna()
    ref = stats.ttest_ind(a, b, equal_var=False)
    assert value(r, "t statistic") == pytest.approx(ref.statistic, rel=1e-9)
    assert ("alpha 0.01" in conclusion(r)) and not any("alpha = 0.05" in x for x in r.trace.assumptions)


@pytest.mark.parametrize("seed", SEEDS[:2])
def test_anova_across_sites(session, seed):
    df = trial(seed).dropna(subset=["blood pressure"])
    r = ask(session, seed, "Does blood pressure differ across sites?")
    ref = stats.f_oneway(*[g["blood pressure"] for _, g in df.groupby("site")])
    assert value(r, "F statistic") == pytest.approx(ref.statistic, rel=1e-9)
    assert value(r, "p-value") == pytest.approx(ref.pvalue, rel=1e-6)
    assert any("ANOVA" in a for a in r.trace.assumptions)


@pytest.mark.parametrize("seed", SEEDS[:2])
def test_chi_square_of_two_categories(session, seed):
    df = trial(seed)
    r = ask(session, seed, "chi-square test of site and outcome")
    chi2, p, dof, _ = stats.chi2_contingency(pd.crosstab(df["site"], df["outcome"]))
    assert value(r, "chi-square statistic") == pytest.approx(chi2, rel=1e-9)
    assert value(r, "p-value") == pytest.approx(p, rel=1e-6)
    assert value(r, "degrees of freedom") == dof == 3


def test_chi_square_from_independence_words(session):
    df = trial(5)
    r = ask(session, 5, "Are arm and outcome independent?")
    chi2, _, _, _ = stats.chi2_contingency(pd.crosstab(df["arm"], df["outcome"]))  # 2x2: Yates correction
    assert value(r, "chi-square statistic") == pytest.approx(chi2, rel=1e-9)


@pytest.mark.parametrize("seed,column,normal", [(3, "blood pressure", True), (4, "wait days", False)])
def test_normality(session, seed, column, normal):
    df = trial(seed)
    r = ask(session, seed, f"Is {column} normally distributed?")
    ref = stats.shapiro(df[column].dropna())
    assert value(r, "test used").startswith("Shapiro-Wilk")
    assert value(r, "test statistic") == pytest.approx(ref.statistic, rel=1e-9)
    assert value(r, "p-value") == pytest.approx(ref.pvalue, rel=1e-6, abs=1e-12)
    assert ("< alpha" not in conclusion(r)) == normal == (ref.pvalue >= 0.05)


@pytest.mark.parametrize("seed,column", [(3, "blood pressure"), (4, "wait days")])
def test_a_normality_decision_is_written_in_the_words_the_format_offers(session, seed, column):
    df = trial(seed)
    ref = stats.shapiro(df[column].dropna())
    r = ask(session, seed, f"Is {column} normally distributed? If the p-value is less than 0.01, consider the data "
                           "to be non-normally distributed. Otherwise, consider it to be normally distributed. "
                           '@p_value[p_value] @normality_status[status] where "status" is a string that is either '
                           '"Normal" or "Not Normal", and "p_value" is rounded to four decimal places.')
    word = "Normal" if ref.pvalue >= 0.01 else "Not Normal"  # the level the rule states, not the default 0.05
    assert r.answer.startswith(f"@p_value[{round(ref.pvalue, 4):g}]\n@normality_status[{word}]"), r.answer


@pytest.mark.parametrize("q", [
    # another test than the ones run offline, named only by the answer format
    "Is blood pressure normally distributed? @ks_test_p_value[p] @normality_decision[d] where \"d\" is either "
    "\"normal\" or \"not normal\"",
    # a rule read the other way round from the usual one
    "Is blood pressure normally distributed? If the p-value is less than 0.05, consider the data to be normally "
    "distributed. @normality_status[status] where \"status\" is either \"Normal\" or \"Not Normal\"",
    # two words that do not say normal / not normal
    "Is blood pressure normally distributed? @normality_status[status] where \"status\" is \"A\", \"B\" or \"C\"",
])
def test_normality_formats_that_leave_the_answer_undetermined_decline(session, q):
    ask(session, 3, q, status="declined")


def test_misspelled_column(session):
    df = trial(3)
    r = ask(session, 3, "anova of blood presure by site")
    ref = stats.f_oneway(*[g["blood pressure"].dropna() for _, g in df.groupby("site")])
    assert value(r, "F statistic") == pytest.approx(ref.statistic, rel=1e-9)
    assert any("presure" in a for a in r.trace.assumptions)


@pytest.mark.parametrize("q", [
    "t-test of blood pressure by site",            # four sites: which two?
    "t-test of heart rate between control and treatment",  # no such column
    "chi-square test of blood pressure and site",  # numeric column
    "is blood pressure normally distributed by site",  # per-group normality not supported
    "is the difference significant",               # no columns
])
def test_declines(session, q):
    ask(session, 3, q, status="declined")
