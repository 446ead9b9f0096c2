"""'Top N <periods> by <statistic> X' ranks the periods, never the N largest rows summed: 'top 2 years by total
revenue' groups by the year column, 'total tip for the top 2 days' by the day column, 'which 2 years have the highest
mean rate' by year on a table of quarters. 'The N largest values summed' is read only when no group word is there
('the total of the top 3 amount values'); a group word the table has no column for declines. The tables are made up
(a shop panel, restaurant bills, a quarterly index, an orders log): none is shipped; values are checked with pandas."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from auto_analyst import Analyst, Settings
from auto_analyst.data.description import describe_tables
from auto_analyst.offline.canonical import render
from auto_analyst.offline.reader import read_question


def panel() -> pd.DataFrame:
    """Six shops a year over 2010-2019: several rows per year."""
    r = np.random.default_rng(21)
    shops, years = ["Ash", "Birch", "Cedar", "Dogwood", "Elm", "Fir"], range(2010, 2020)
    rows = [(s, y) for s in shops for y in years]
    return pd.DataFrame({"shop": [s for s, _ in rows], "year": [y for _, y in rows],
                         "revenue": r.gamma(3, 400, len(rows)).round(2), "staff": r.integers(2, 30, len(rows))})


def bills(n: int = 300) -> pd.DataFrame:
    r = np.random.default_rng(8)
    return pd.DataFrame({"bill": r.uniform(8, 90, n).round(2), "tip": r.uniform(0.5, 12, n).round(2),
                         "day": r.choice(["Mon", "Tue", "Wed", "Thu", "Fri"], n), "party": r.integers(1, 7, n)})


def quarterly() -> pd.DataFrame:
    r = np.random.default_rng(4)
    years = np.repeat(np.arange(2000, 2012), 4)
    return pd.DataFrame({"year": years, "quarter": np.tile([1, 2, 3, 4], 12),
                         "jobless_rate": r.uniform(3, 11, 48).round(2), "output": r.uniform(900, 1500, 48).round(1)})


def orders(n: int = 80) -> pd.DataFrame:
    r = np.random.default_rng(3)
    return pd.DataFrame({"order_no": np.arange(1, n + 1), "amount": r.uniform(5, 400, n).round(2),
                         "channel": r.choice(["web", "phone"], n)})


def read(frame: pd.DataFrame, question: str, name: str = "t") -> str:
    desc = describe_tables({name: frame}, active=name)
    s = read_question(question, desc, None)[-1]
    return render(s) if s.answerable else "decline: " + " ".join(s.problems)


ASKS = {
    "top_years": (panel, "top 2 years by total revenue"),
    "bottom_years": (panel, "bottom 2 years by total revenue"),
    "which_years": (panel, "which 3 years have the highest mean staff?"),
    "tip_days": (bills, "total tip for the top 2 days"),
    "top_days": (bills, "top 2 days by total tip"),
    "years_of_quarters": (quarterly, "which 2 years have the highest mean jobless rate?"),
    "quarters_mean": (quarterly, "top 2 quarters by mean output"),
    "quarter_rows": (quarterly, "the 3 quarters with the highest jobless rate"),
    "summed": (orders, "what is the total of the top 3 amount values?"),
    "count_years": (quarterly, "how many years had a jobless rate above 9?"),
    "count_quarters": (quarterly, "how many quarters had a jobless rate above 9?"),
}


@pytest.fixture(scope="module")
def answers(tmp_path_factory):
    out = {}
    with Analyst(settings=Settings.load({"home": tmp_path_factory.mktemp("periods")})) as analyst:
        for key, (build, question) in ASKS.items():
            session = analyst.session()
            session.add_frame(build.__name__, build())
            out[key] = session.ask(question)
    return out


def ranked(r) -> list[tuple]:
    assert r.status == "ok", r.answer
    return [tuple(row) for row in r.tables[0].rows]


def expect(series: pd.Series) -> list[tuple]:
    return [(k, pytest.approx(v, abs=0.01)) for k, v in series.items()]


def test_top_and_bottom_years_by_a_total_group_by_year(answers):
    p = panel()
    totals = p.groupby("year").revenue.sum()
    assert ranked(answers["top_years"]) == expect(totals.nlargest(2))
    assert ranked(answers["bottom_years"]) == expect(totals.nsmallest(2))
    assert ranked(answers["which_years"]) == expect(p.groupby("year").staff.mean().nlargest(3))


def test_days_group_by_the_day_column_whichever_side_the_statistic_is(answers):
    totals = bills().groupby("day").tip.sum().nlargest(2)
    assert ranked(answers["tip_days"]) == expect(totals)
    assert ranked(answers["top_days"]) == expect(totals)


def test_periods_on_a_table_of_quarters(answers):
    q = quarterly()
    assert ranked(answers["years_of_quarters"]) == expect(q.groupby("year").jobless_rate.mean().nlargest(2))
    assert ranked(answers["quarters_mean"]) == expect(q.groupby("quarter").output.mean().nlargest(2))
    # no statistic: each row is a quarter of a year, so the three rows with the highest rate
    rows = answers["quarter_rows"]
    assert rows.status == "ok", rows.answer
    shown = [row[0] for row in rows.tables[0].rows]
    assert shown == pytest.approx(list(q.jobless_rate.nlargest(3)))


def test_the_n_largest_summed_only_without_a_group_word(answers):
    assert answers["summed"].tables[0].rows[0][0] == pytest.approx(orders().amount.nlargest(3).sum())


@pytest.mark.parametrize("frame, question, expected", [
    (panel(), "top 3 years by total revenue", "top 3 `year` by total of `revenue`"),
    (panel(), "top 3 years by revenue", "top 3 `year` by total of `revenue`"),  # several rows a year: the groups
    (bills(), "the 3 days with the highest tip", "top 3 `day` by total of `tip`"),
    (quarterly(), "top 3 years by mean output", "top 3 `year` by mean of `output`"),
    # a ranking by a statistic with no column for its groups declines, never the N largest rows summed
    (orders(), "top 3 weeks by total amount", "decline: 'weeks' should group the rows"),
    (orders(), "total amount for the top 3 months", "decline: 'months' should group the rows"),
    (orders().drop(columns="order_no"), "top 3 orders by total amount", "decline: A top 3 by a total ranks groups"),
    (orders().drop(columns="order_no"), "total amount of the top 3 orders", "total of the top 3 `amount`"),
])
def test_readings(frame, question, expected):
    assert read(frame, question, name="orders").startswith(expected)


def test_how_many_periods_counts_the_periods_not_the_rows(answers):
    q = quarterly()
    high = q[q.jobless_rate > 9]
    assert answers["count_years"].tables[0].rows[0][0] == high.year.nunique()
    assert high.year.nunique() < len(high)  # the figure differs from the count of rows
    assert answers["count_quarters"].tables[0].rows[0][0] == len(high)  # each row is a quarter of a year
