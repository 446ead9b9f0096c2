"""Facts from answered analyses: one test per kind of answer, values asserted; the offline model's tables and a
hosted model's differently named tables of the same numbers give the same facts."""

from __future__ import annotations

import pytest

from auto_analyst.memory.facts.extract import extract_facts
from auto_analyst.memory.facts.model import fingerprint, render_fact
from auto_analyst.memory.scope import Scope
from auto_analyst.results import PlanStep, Result, TableOut, Trace
from tests.helpers import sales_table

SALES = sales_table()


def scope() -> Scope:
    return Scope(user="alice", session_id="s1", frames={"sales": SALES})


def result(tables: list[TableOut], instruction: str, standalone: str = "", turn: int = 1) -> Result:
    return Result(question=standalone or instruction, status="ok", turn=turn, session_id="s1",
                  plan=[PlanStep(agent="statistics", instruction=instruction, uses=["sales"])],
                  trace=Trace(source="ran_code", standalone_question=standalone or instruction), tables=tables)


def value(v) -> TableOut:
    return TableOut(name="", columns=["value"], rows=[[v]], n_rows=1)


def named(name: str, v) -> TableOut:
    return value(v).model_copy(update={"name": name})


def triples(facts) -> list[tuple]:
    return [(f.kind, f.subject, f.relation, f.object, f.unit, f.filter) for f in facts]


@pytest.fixture(scope="module")
def session_results():
    """The offline model's answers to one question of each kind, on the sales table."""
    from auto_analyst import Analyst, Settings

    import tempfile

    analyst = Analyst(settings=Settings.load({"home": tempfile.mkdtemp()}))
    s = analyst.session()
    s.add_frame("sales", SALES)
    questions = {
        "scalar": "total revenue in 2023",
        "filtered": "mean price for region West",
        "grouped": "mean revenue by region",
        "ranking": "top 3 categories by total revenue",
        "correlation": "correlation between units and price",
        "test": "is there a significant difference in revenue between North and South",
        "model": "predict revenue from units and price",
        "count": "how many orders per category",
        "share": "share of orders by region",
        "chart": "plot revenue by region",
    }
    out = {k: (s.ask(q), s._scope()) for k, q in questions.items()}
    yield out
    analyst.close()


def test_scalar_aggregate_with_year_filter(session_results) -> None:
    r, sc = session_results["scalar"]
    facts = extract_facts(r, sc)
    assert triples(facts) == [("aggregate", "sales", "total revenue", "64293.74", "", "order_date year 2023")]
    assert facts[0].value == pytest.approx(64293.74)
    assert facts[0].fingerprint == fingerprint(SALES) and facts[0].table == "sales"


def test_filtered_aggregate_is_about_the_filter_value(session_results) -> None:
    facts = extract_facts(*session_results["filtered"])
    assert triples(facts) == [("aggregate", "region=West", "mean price", "50.2609", "", "region=West")]
    assert {(lk.entity, lk.role) for lk in facts[0].links} >= {("region=West", "subject"), ("price", "measure")}
    expected = SALES.loc[SALES.region == "West", "price"].mean()
    assert facts[0].value == pytest.approx(expected)


def test_grouped_aggregate_gives_one_fact_per_group(session_results) -> None:
    facts = extract_facts(*session_results["grouped"])
    means = SALES.groupby("region")["revenue"].mean()
    assert [(f.kind, f.subject, f.relation) for f in facts] == [
        ("grouped", f"region={g}", "mean revenue") for g in ["East", "North", "South", "West"]]
    assert [f.value for f in facts] == pytest.approx([means[g] for g in ["East", "North", "South", "West"]])
    assert render_fact(facts[3], when=False) == f"mean revenue for region=West: {means['West']:.4f}"


def test_ranking_keeps_the_places(session_results) -> None:
    facts = extract_facts(*session_results["ranking"])
    totals = SALES.groupby("category")["revenue"].sum().sort_values(ascending=False)
    assert [(f.kind, f.subject, f.stats["rank"]) for f in facts] == [
        ("ranking", f"category={c}", float(i + 1)) for i, c in enumerate(totals.index)]
    assert [f.value for f in facts] == pytest.approx(list(totals.values))
    assert {f.relation for f in facts} == {"total revenue"}


def test_correlation_has_r_and_p(session_results) -> None:
    from scipy import stats

    facts = extract_facts(*session_results["correlation"])
    ok = SALES[["units", "price"]].dropna()
    r, p = stats.pearsonr(ok["units"], ok["price"])
    assert triples(facts) == [("correlation", "units", "correlates_with", "price", "", "")]
    assert facts[0].stats == pytest.approx({"r": r, "p": p})
    assert facts[0].value == pytest.approx(r)


def test_test_result_has_statistic_p_and_groups(session_results) -> None:
    from scipy import stats

    facts = extract_facts(*session_results["test"])
    test = facts[0]
    north = SALES.loc[SALES.region == "North", "revenue"]
    south = SALES.loc[SALES.region == "South", "revenue"]
    t, p = stats.ttest_ind(north, south, equal_var=False)
    assert (test.kind, test.subject, test.relation, test.object) == (
        "test", "revenue", "t-test of revenue by region (North vs South)", "region")
    assert test.stats == pytest.approx({"statistic": t, "p": p})
    # the group statistics shown beside the test are facts too
    assert ("grouped", "region=North", "mean revenue") in [(f.kind, f.subject, f.relation) for f in facts]


def test_model_metrics_and_coefficients(session_results) -> None:
    facts = extract_facts(*session_results["model"])
    by = {(f.subject, f.relation): f for f in facts}
    r2 = by[("revenue", "r-squared of linear regression on units, price")]
    assert r2.kind == "model_metric" and r2.value == pytest.approx(0.9586, abs=1e-4)
    assert r2.stats["n"] == SALES[["units", "price", "revenue"]].dropna().shape[0]
    coef = by[("units", "coefficient for revenue (linear regression)")]
    assert coef.value == pytest.approx(49.01, abs=0.01) and "p" in coef.stats


def test_counts_and_shares(session_results) -> None:
    counts = extract_facts(*session_results["count"])
    sizes = SALES.groupby("category").size()
    assert [(f.kind, f.subject, f.relation, f.value, f.unit) for f in counts] == [
        ("count", f"category={c}", "number of rows", float(sizes[c]), "rows") for c in sizes.index]
    shares = [f for f in extract_facts(*session_results["share"]) if f.kind == "share"]
    expected = SALES.region.value_counts(normalize=True) * 100
    assert {f.subject: f.value for f in shares} == pytest.approx({f"region={g}": expected[g] for g in expected.index})
    assert {f.unit for f in shares} == {"%"}


def test_a_chart_gives_facts_only_through_its_shown_table(session_results) -> None:
    r, sc = session_results["chart"]
    facts = extract_facts(r, sc)
    assert r.figures and len(facts) == 4 and all(f.source == r.tables[0].name for f in facts)
    chart_only = r.model_copy(update={"tables": []})
    assert extract_facts(chart_only, sc) == []


def test_declined_errors_and_memory_answers_give_no_facts(session_results) -> None:
    r, sc = session_results["grouped"]
    assert extract_facts(r.model_copy(update={"status": "error"}), sc) == []
    assert extract_facts(r.model_copy(update={"trace": Trace(source="memory")}), sc) == []


def test_a_hosted_model_naming_tables_its_own_way_gives_the_same_facts(session_results) -> None:
    """A hosted model's script: the Series is named after the column, the table 'Average revenue per region'."""
    offline, sc = session_results["grouped"]
    rows = [[g, v] for g, v in SALES.groupby("region")["revenue"].mean().items()]
    hosted = result([TableOut(name="Average revenue per region", columns=["region", "revenue"], rows=rows, n_rows=4)],
                    "Group the sales by region and compute the average revenue of each region.")
    key = lambda f: (f.kind, f.subject, f.relation, f.object, f.unit, f.filter, f.fingerprint)  # noqa: E731
    assert [key(f) for f in extract_facts(hosted, sc)] == [key(f) for f in extract_facts(offline, sc)]


def test_hosted_shapes_for_correlation_test_and_metrics() -> None:
    corr = result([named("r", -0.41), named("p", 0.003)], "Compute the Pearson correlation of units with price.")
    f = extract_facts(corr, scope())
    assert triples(f) == [("correlation", "units", "correlates_with", "price", "", "")]
    assert f[0].stats == {"r": -0.41, "p": 0.003}
    test = result([named("chi2", 4.92), named("p-value", 0.55), named("dof", 6)],
                  "Run a chi-square test of independence between region and category.")
    t = extract_facts(test, scope())[0]
    assert (t.kind, t.relation, t.stats) == ("test", "chi-square test of region by category",
                                              {"statistic": 4.92, "p": 0.55, "df": 6.0})
    metrics = result([TableOut(name="metrics", columns=["accuracy", "f1"], rows=[[0.81, 0.77]], n_rows=1)],
                     "Fit a random forest classifier predicting region from units and price.")
    m = extract_facts(metrics, scope())
    assert [(x.kind, x.subject, x.relation, x.value) for x in m] == [
        ("model_metric", "region", "accuracy of random forest on units, price", 0.81),
        ("model_metric", "region", "f1 of random forest on units, price", 0.77)]


def test_raw_rows_and_restated_picks_are_not_facts() -> None:
    head = SALES.head(5)
    raw = result([TableOut(name="first rows", columns=list(head.columns), n_rows=5,
                           rows=[[str(v) if k == 0 else v for k, v in enumerate(r)] for r in head.itertuples(index=False)])],
                 "Show the first rows.")
    assert extract_facts(raw, scope()) == []
    totals = SALES.groupby("region")["revenue"].sum().sort_values(ascending=False)
    picked = result([named("its total revenue", float(totals.iloc[0])),
                     TableOut(name="total revenue by region", columns=["region", "total revenue"],
                              rows=[[g, float(v)] for g, v in totals.items()], n_rows=4)],
                    "Compute: region with the highest total of `revenue`.")
    facts = extract_facts(picked, scope())
    assert all(f.subject.startswith("region=") for f in facts)  # the picked value is South's, not the table's


def test_fact_ids_are_stable_and_per_turn() -> None:
    r = result([named("mean price", 50.0)], "Compute the mean price.")
    a, b = extract_facts(r, scope()), extract_facts(r, scope())
    assert a[0].id == b[0].id and len(a[0].id) == 16
    assert extract_facts(r.model_copy(update={"turn": 2}), scope())[0].id != a[0].id


def test_findings_carry_their_numeric_conditions_and_a_top_n_listing_ranks_only_its_measure(tmp_path) -> None:
    """The offline model's answers on a cars table: a value computed on filtered rows says the filter (cyl=4 and
    wt<2; gear=4), a table grouped by a number column gives one fact per group, 'its mean mpg' of the top group is
    not a finding of all gear=4 rows, and the other columns of the 5 heaviest cars are not 'max mpg' of a car."""
    import pandas as pd

    from auto_analyst import Analyst, Settings

    cars = pd.DataFrame({"model": [f"car {i}" for i in range(10)], "cyl": [4, 4, 4, 6, 6, 8, 8, 8, 4, 6],
                         "gear": [4, 4, 3, 4, 3, 3, 3, 5, 5, 4], "wt": [1.5, 1.9, 2.4, 2.9, 3.2, 3.6, 4.1, 5.4, 2.1, 3.0],
                         "mpg": [33.0, 30.0, 24.0, 21.0, 18.0, 16.0, 15.0, 10.0, 26.0, 19.0]})
    analyst = Analyst(settings=Settings.load({"home": tmp_path}))
    with analyst:
        s = analyst.session()
        s.add_frame("cars", cars)
        lines = {}
        for q in ["average mpg by cyl", "now only for gear 4", "which of those is the highest?",
                  "mean mpg for cyl 4 and wt < 2", "5 heaviest cars"]:
            r = s.ask(q)
            assert r.status == "ok", (q, r.answer)
            lines[q] = [f.line(when=False) for f in extract_facts(r, s._scope())]
    assert lines["average mpg by cyl"] == ["mean mpg for cyl=4: 28.25", "mean mpg for cyl=6: 19.3333",
                                           "mean mpg for cyl=8: 13.6667"]
    assert lines["now only for gear 4"] == ["mean mpg for cyl=4: 31.5 [where gear=4]",
                                            "mean mpg for cyl=6: 20 [where gear=4]"]
    assert "mean mpg for gear=4: 31.5" not in lines["which of those is the highest?"]
    assert all("[where gear=4]" in x for x in lines["which of those is the highest?"]), lines
    assert lines["mean mpg for cyl 4 and wt < 2"] == ["mean mpg: 31.5 [where cyl=4; wt<2]"]
    assert lines["5 heaviest cars"][0] == "max wt for model=car 7 (rank 1): 5.4"
    assert len(lines["5 heaviest cars"]) == 5 and not any("mpg" in x for x in lines["5 heaviest cars"])
