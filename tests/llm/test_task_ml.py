"""Machine-learning plugin (sklearn pipelines, k-means), end to end against sklearn run here with the same seeds,
plus the shared churn case."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from sklearn.cluster import KMeans
from sklearn.compose import ColumnTransformer
from sklearn.ensemble import RandomForestClassifier
from sklearn.impute import SimpleImputer
from sklearn.linear_model import LinearRegression, LogisticRegression
from sklearn.metrics import mean_squared_error, r2_score
from sklearn.model_selection import train_test_split
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import OneHotEncoder, StandardScaler

from auto_analyst import Analyst, Settings
from tests.helpers import table, value

SEEDS = [10, 11, 12]
NUM = ["monthly fee", "tenure", "support calls"]
CAT = ["plan", "region", "autopay"]


def customers(seed: int, n: int = 320) -> pd.DataFrame:
    """Churn driven by support calls (up) and tenure (down); missing values in plan and fee."""
    rng = np.random.default_rng(seed)
    tenure = rng.integers(1, 72, n).astype(float)
    calls = rng.poisson(2, n).astype(float)
    plan = rng.choice(["Basic", "Plus", "Pro"], n).astype(object)
    logit = -0.5 + 0.9 * (calls - 2) - 0.05 * (tenure - 36) + np.where(plan == "Basic", 0.4, 0)
    churned = rng.random(n) < 1 / (1 + np.exp(-logit))
    df = pd.DataFrame({"customer_id": [f"C{seed}{i:04d}" for i in range(n)], "plan": plan,
                       "region": rng.choice(["N", "S", "E", "W"], n), "monthly fee": rng.normal(30, 8, n).round(2),
                       "tenure": tenure, "support calls": calls, "autopay": rng.random(n) < 0.6, "churned": churned,
                       "spend": (20 + 0.8 * tenure + 5 * calls + rng.normal(0, 6, n)).round(2)})
    df.loc[rng.choice(n, 15, replace=False), "plan"] = np.nan
    df.loc[rng.choice(n, 12, replace=False), "monthly fee"] = np.nan
    return df


def reference(df: pd.DataFrame, target: str, features: list[str], model, classify: bool):
    """The same recipe, written here: split 0.25/42 (stratified), median/most-frequent imputation, scaling, one-hot."""
    num = [c for c in features if c in NUM or c == "spend"]
    cat = [c for c in features if c not in num]
    X = df[num + cat].copy()
    for c in cat:
        X[c] = X[c].map(lambda v: np.nan if pd.isna(v) else str(v)).astype(object)
    y = df[target].astype(str) if classify else df[target]
    Xtr, Xte, ytr, yte = train_test_split(X, y, test_size=0.25, random_state=42, stratify=y if classify else None)
    prep = ColumnTransformer([
        ("num", Pipeline([("i", SimpleImputer(strategy="median")), ("s", StandardScaler())]), num),
        ("cat", Pipeline([("i", SimpleImputer(strategy="most_frequent")), ("o", OneHotEncoder(handle_unknown="ignore"))]), cat)])
    pipe = Pipeline([("prep", prep), ("model", model)]).fit(Xtr, ytr)
    return pipe, Xte, yte, ytr


@pytest.fixture(scope="module")
def session(tmp_path_factory, shared_dir):
    analyst = Analyst(settings=Settings.load({"home": tmp_path_factory.mktemp("home")}))
    sessions = {}
    for seed in SEEDS:  # one session per table: questions in one session are turns of one conversation
        sessions[f"customers{seed}"] = analyst.session()
        sessions[f"customers{seed}"].add_frame(f"customers{seed}", customers(seed))
    sessions["churn_case"] = analyst.session()
    sessions["churn_case"].load(shared_dir / "cases" / "12_ml_categorical_missing" / "data.csv", name="churn_case")
    yield sessions
    analyst.close()


def ask(session, name, q, status="ok"):
    r = session[name].ask(q)
    assert r.status == status, (q, r.status, r.answer, r.error, r.code)
    assert r.trace.unsupported_numbers == [], (r.answer, r.trace.unsupported_numbers)
    return r


def test_shared_churn_case(session, shared_dir):
    case = shared_dir / "cases" / "12_ml_categorical_missing"
    expected = json.loads((case / "expected.json").read_text())["answer"]
    r = ask(session, "churn_case", (case / "question.txt").read_text().strip())
    low, high = expected["accuracy_range_acceptable"]
    assert low <= value(r, "accuracy on the test set") <= high
    assert value(r, "majority-class baseline accuracy") < value(r, "accuracy on the test set")
    top = list(table(r, "top features by importance")["feature"][:3])
    assert set(expected["top_drivers_must_include"]) <= set(top), top
    assert [step.agent for step in r.plan] == ["machine_learning"]
    assert "customer_id" not in r.code
    assert "support_calls" in r.answer and "tenure_months" in r.answer


@pytest.mark.parametrize("seed", SEEDS)
def test_logistic_classifier_accuracy_baseline_importance(session, seed):
    df = customers(seed)
    r = ask(session, f"customers{seed}", "Build a model that predicts which customers will churn. How accurate is it?")
    features = ["plan", "region", "monthly fee", "tenure", "support calls", "autopay", "spend"]
    pipe, Xte, yte, ytr = reference(df, "churned", features, LogisticRegression(max_iter=1000), True)
    assert value(r, "accuracy on the test set") == pytest.approx((pipe.predict(Xte) == yte).mean())
    assert value(r, "majority-class baseline accuracy") == pytest.approx((yte == ytr.mode()[0]).mean())
    coef = np.abs(pipe.named_steps["model"].coef_[0])
    got = table(r, "top features by importance")
    assert got["importance"].iloc[0] == pytest.approx(coef.max(), abs=1e-4)
    assert got["feature"].iloc[0] in ("support calls", "tenure")
    assert any("customer_id" in a for a in r.trace.assumptions)


def test_random_forest_and_misspelled_target(session):
    df = customers(11)
    r = ask(session, "customers11", "random forest to predict chruned from tenure, support calls and plan")
    pipe, Xte, yte, _ = reference(df, "churned", ["tenure", "support calls", "plan"],
                                  RandomForestClassifier(n_estimators=200, random_state=42), True)
    assert value(r, "accuracy on the test set") == pytest.approx((pipe.predict(Xte) == yte).mean())
    assert set(table(r, "top features by importance")["feature"]) == {"tenure", "support calls", "plan"}
    assert any("chruned" in a for a in r.trace.assumptions)


@pytest.mark.parametrize("seed", SEEDS[:2])
def test_numeric_target_linear_model(session, seed):
    df = customers(seed)
    r = ask(session, f"customers{seed}", "train a model to predict spend using tenure and support calls")
    pipe, Xte, yte, _ = reference(df, "spend", ["tenure", "support calls"], LinearRegression(), False)
    pred = pipe.predict(Xte)
    assert value(r, "R-squared on the test set") == pytest.approx(r2_score(yte, pred))
    assert value(r, "RMSE on the test set") == pytest.approx(np.sqrt(mean_squared_error(yte, pred)))


@pytest.mark.parametrize("seed,k", [(10, 3), (12, 4)])
def test_kmeans_clusters(session, seed, k):
    df = customers(seed)
    q = "k-means clustering of tenure and spend" if k == 3 else f"cluster the rows into {k} clusters using tenure and spend"
    r = ask(session, f"customers{seed}", q)
    X = df[["tenure", "spend"]].dropna()
    labels = KMeans(n_clusters=k, random_state=42, n_init=10).fit(StandardScaler().fit_transform(X)).labels_
    sizes = table(r, "cluster sizes").set_index("cluster")["rows"]
    assert sizes.to_dict() == pd.Series(labels).value_counts().sort_index().to_dict()
    centers = table(r, "cluster centers").set_index("cluster")
    assert centers.loc[0, "tenure"] == pytest.approx(X["tenure"][labels == 0].mean())
    assert (k == 3) == any("k = 3" in a for a in r.trace.assumptions)


@pytest.mark.parametrize("q", [
    "predict customer_id",                        # an identifier
    "build a model",                              # which target?
    "predict revenue",                            # no such column
    "k-means clustering of plan and region",      # not numeric
    "predict spend with logistic regression",     # logistic on a numeric target
])
def test_declines(session, q):
    ask(session, "customers10", q, status="declined")


def test_a_classifier_asked_for_a_many_valued_number_declines_instead_of_regressing(tmp_path):
    import pandas as pd

    from auto_analyst.api import Analyst
    from auto_analyst.config import Settings

    frame = pd.DataFrame({"age": [22, 27, 32, 37, 42, 27, 32, 22, 37, 42] * 3,
                          "educ": [12, 14, 16, 12, 17, 14, 12, 16, 20, 14] * 3,
                          "children": [0, 1, 2, 3, 4, 5, 0, 1, 2, 3] * 3})
    with Analyst(settings=Settings.load({"home": tmp_path / "home"})) as analyst:
        s = analyst.session()
        s.add_frame("fam", frame)
        r = s.ask("train a random forest classifier to predict children from age and educ")
    assert r.status == "declined" and "classifier was asked" in r.answer, r.answer
