"""The reader beyond the tables it was tuned on (issue 25): codes of small-integer columns, "N or older" filters,
elliptical follow-ups ("and the count?", "what about A and B?"), lists of rows named by the identifying column,
and column names that clip the question's words ("total passengers" for TOTPASS). Every table here is made up."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from auto_analyst.data.description import describe_tables
from auto_analyst.offline.canonical import render
from auto_analyst.offline.reader import read_question


def clinic(n: int = 120) -> pd.DataFrame:
    r = np.random.default_rng(7)
    return pd.DataFrame({"visit_id": range(n), "tier": r.integers(1, 4, n), "smoker": r.integers(0, 2, n),
                         "age": r.integers(18, 90, n), "score": r.normal(50, 10, n).round(1),
                         "weight": r.normal(70, 12, n).round(1), "height": r.normal(170, 9, n).round(1)})


def towns() -> pd.DataFrame:
    r = np.random.default_rng(3)
    return pd.DataFrame({"town": [f"Town{k}" for k in range(30)], "thefts": r.uniform(1, 12, 30).round(1),
                         "income": r.uniform(20, 60, 30).round(1), "TOTPASS": r.uniform(1e3, 9e3, 30).round(0),
                         "NETMARG": r.uniform(1e2, 9e2, 30).round(0)})


def read(frame: pd.DataFrame, *questions: str) -> list[str]:
    """Each question read after the one before (a conversation); the canonical text or 'decline: <problems>'."""
    desc = describe_tables({"t": frame}, active="t")
    out, prev = [], None
    for q in questions:
        specs = read_question(q, desc, prev)
        s = specs[-1]
        out.append(render(s) if s.answerable else "decline: " + " ".join(s.problems))
        prev = s
    return out


@pytest.mark.parametrize("question, text", [
    ("Compare the average score between tier 1 and tier 2", "mean of `score` by `tier` where `tier` == 1 or 2"),
    ("average score for smoker 0 vs smoker 1", "mean of `score` by `smoker` where `smoker` == 0 or 1"),
    ("What is the mean score for tier 3?", "mean of `score` where `tier` == 3"),
    ("mean score for tier level 2", "mean of `score` where `tier` == 2"),
])
def test_a_code_after_a_column_of_few_values_is_that_value(question, text):
    assert read(clinic(), question) == [text]


def test_a_number_after_a_column_of_many_values_is_no_code():
    assert read(clinic(), "mean score for age 40")[0].startswith("decline")


@pytest.mark.parametrize("question, text", [
    ("Average score among visitors aged 60 or older", "mean of `score` where `age` >= 60"),
    ("mean weight for age 30 or under", "mean of `weight` where `age` <= 30"),
    ("mean score for weight 80 or above", "mean of `score` where `weight` >= 80"),
])
def test_n_or_older_keeps_n(question, text):
    assert read(clinic(), question) == [text]


def test_n_or_more_with_no_column_before_it_declines():
    assert read(clinic(), "how many visits are 65 and over")[0].startswith("decline")


def test_and_the_count_carries_the_groups_and_the_filter():
    got = read(clinic(), "mean score by tier", "now only for age above 50", "and the count?")
    assert got == ["mean of `score` by `tier`", "mean of `score` by `tier` where `age` > 50",
                   "count of rows by `tier` where `age` > 50"]


def test_and_a_statistic_alone_after_a_count_of_rows_declines():
    got = read(clinic(), "how many visits by tier", "and the median?")
    assert got[1].startswith("decline") and "counted rows" in got[1]
    got = read(clinic(), "how many visits by tier", "same for weight")
    assert got[1].startswith("decline") and "which statistic" in got[1]


def test_and_a_column_continues_the_measure_and_groups():
    got = read(clinic(), "mean score by tier", "and the mean weight?")
    assert got[1] == "mean of `weight` by `tier`"


def test_what_about_two_columns_after_a_correlation_is_the_new_pair():
    got = read(clinic(), "correlation between score and age", "what about weight and age?", "and height?")
    assert got[0] == "correlation between `score` and `age`"
    assert got[1] == "correlation between `weight` and `age`"
    # one new column: which of the two it replaces, the words do not say
    assert got[2].startswith("decline") and "`height`" in got[2]


def test_which_rows_lists_the_identifying_column_and_follow_ups_count_them():
    got = read(towns(), "Which towns have thefts above 8?", "how many are there?", "what is their average income?")
    assert got == ["values of `thefts` with `town` where `thefts` > 8", "count of rows where `thefts` > 8",
                   "mean of `income` where `thefts` > 8"]


def test_a_name_clipping_the_question_words_links_and_is_said():
    desc = describe_tables({"t": towns()}, active="t")
    s = read_question("What is the correlation between total passengers and net margin?", desc)[0]
    assert render(s) == "correlation between `TOTPASS` and `NETMARG`"
    assert any("'total passengers' as `TOTPASS`" in a for a in s.assumptions)
    assert any("'net margin' as `NETMARG`" in a for a in s.assumptions)
    # two letters of a word that is not whole are not enough ('ne' of 'new', 'tm' of nothing)
    assert read(towns(), "mean of new margins")[0].startswith("decline")


def test_and_the_count_in_a_session_counts_the_filtered_groups(tmp_path):
    from auto_analyst import Analyst, Settings

    frame = clinic()
    with Analyst(settings=Settings.load({"home": tmp_path})) as analyst:
        s = analyst.session()
        s.add_frame("clinic", frame)
        s.ask("mean score by tier")
        s.ask("now only for visitors aged 60 or older")
        r = s.ask("and the count?")
    assert r.status == "ok", r.answer
    want = frame[frame.age >= 60].groupby("tier").size()
    assert {int(k): v for k, v in dict(r.tables[0].rows).items()} == want.to_dict()


def homes() -> pd.DataFrame:
    r = np.random.default_rng(11)
    n = 40
    return pd.DataFrame({"home_id": range(n), "kwh": r.uniform(100, 900, n).round(1),
                         "floor_area_m2": r.uniform(20, 200, n).round(1), "residents_count": r.integers(1, 6, n),
                         "district": r.choice(["North", "South"], n), "status": r.choice(["occupied", "vacant"], n),
                         "population": r.integers(500, 9000, n), "output": r.uniform(1e3, 9e3, n).round(0)})


@pytest.mark.parametrize("question, first, second", [
    ("average energy consumption per square metre", "new column `kwh_per_floor_area_m2` = `kwh` / `floor_area_m2`",
     "mean of `kwh_per_floor_area_m2`"),
    ("average kwh per floor area by district", "new column `kwh_per_floor_area_m2` = `kwh` / `floor_area_m2`",
     "mean of `kwh_per_floor_area_m2` by `district`"),
    ("median output per capita", "new column `output_per_population` = `output` / `population`",
     "median of `output_per_population`"),
])
def test_a_ratio_is_a_new_column_and_its_statistic_said_in_the_assumptions(question, first, second):
    desc = describe_tables({"t": homes()}, active="t")
    specs = read_question(question, desc)
    assert [render(s) for s in specs] == [first, second]
    assert any("row by row" in a and "not the total" in a for a in specs[1].assumptions)


def test_a_total_per_square_metre_and_a_ratio_of_no_column_decline():
    assert read(homes(), "total kwh per square metre")[0].startswith("decline")
    frame = homes().drop(columns=["floor_area_m2"])
    assert read(frame, "average kwh per square metre")[0].startswith("decline")


def test_a_rate_of_a_status_value_is_the_percent_of_rows_and_declines_within_groups():
    desc = describe_tables({"t": homes()}, active="t")
    s = read_question("What is the vacancy rate?", desc)[0]
    # 'vacancy' is no form of 'vacant': nothing links it, so it declines rather than guess
    assert not s.answerable
    s = read_question("What is the occupied rate?", desc)[0]
    assert render(s) == "count of rows where `status` == 'occupied', as a percentage"
    assert any("percent of rows where `status` is 'occupied'" in a for a in s.assumptions)
    assert read(homes(), "occupied rate by district")[0].startswith("decline")
    # inside a subset the percent of the whole table's rows would be another number: declined, not answered
    assert read(homes(), "occupied rate for district North")[0].startswith("decline")
    assert read(homes(), "what is the occupied rate where kwh is above 500")[0].startswith("decline")


def test_a_column_named_x_rate_is_that_column_not_a_rate_of_a_value():
    r = np.random.default_rng(5)
    frame = pd.DataFrame({"fee_type": r.choice(["interest", "flat"], 60), "interest_rate": r.uniform(1, 9, 60).round(2),
                          "plan": r.choice(["Basic", "Pro"], 60)})
    assert read(frame, "what is the mean interest rate")[0] == "mean of `interest_rate`"
    assert read(frame, "mean interest_rate by plan")[0] == "mean of `interest_rate` by `plan`"


def test_a_ratio_in_a_session_is_the_mean_of_the_rows_ratios(tmp_path):
    from auto_analyst import Analyst, Settings

    frame = homes()
    with Analyst(settings=Settings.load({"home": tmp_path})) as analyst:
        s = analyst.session()
        s.add_frame("homes", frame)
        r = s.ask("What is the average energy consumption per square metre?")
    assert r.status == "ok", r.answer
    want = (frame.kwh / frame.floor_area_m2).mean()
    import re

    shown = float(re.search(r"Mean kwh_per_floor_area_m2\**: (\d+(?:\.\d+)?)", r.answer).group(1))
    assert shown == pytest.approx(want, abs=1e-4), r.answer
    assert "row by row" in r.answer


@pytest.mark.parametrize("question, text", [
    ("how many visits per tier?", "count of rows by `tier`"),
    ("average score per tier", "mean of `score` by `tier`"),
    ("average score per age", "mean of `score` by `age`"),  # whole numbers: groups, as before ratios were read
])
def test_per_a_column_of_whole_numbers_is_a_grouping_not_a_ratio(question, text):
    assert read(clinic(), question) == [text]


def test_how_many_on_average_is_the_mean_of_the_column():
    assert read(clinic(), "how many points do visitors score on average?") == ["mean of `score`"]
    assert read(clinic(), "how many visits are there and what is their average score?") != ["mean of `score`"]


def test_a_whole_question_opening_with_and_is_read_alone_and_and_the_x_by_y_keeps_the_rows():
    got = read(clinic(), "mean score by tier where age above 50", "And what is the mean weight by smoker?")
    assert got[1] == "mean of `weight` by `smoker`"
    got = read(clinic(), "mean score by tier where age above 50", "and the mean weight by smoker?")
    assert got[1] == "mean of `weight` by `smoker` where `age` > 50"


def test_an_elliptical_chart_after_a_filtered_turn_says_the_filter_is_not_kept():
    desc = describe_tables({"t": clinic()}, active="t")
    prev = read_question("mean score by tier where age above 50", desc)[0]
    s = read_question("and a histogram of weight?", desc, prev)[0]
    assert s.answerable and render(s) == "histogram of `weight`"
    assert any("`age` > 50" in a and "not kept" in a for a in s.assumptions), s.assumptions


def test_how_old_is_the_oldest_and_over_the_period_add_nothing_of_their_own():
    assert read(clinic(), "How old is the oldest visitor?") == ["top 1 rows by `age` with `visit_id`"]
    assert read(clinic(), "What was the average score over the whole period?") == ["mean of `score`"]
    assert read(clinic(), "average score per period")[0].startswith("decline")  # a grouping by nothing: never dropped


def test_a_later_part_naming_the_column_of_an_earlier_task_is_not_declined():
    desc = describe_tables({"t": clinic()}, active="t")
    specs = read_question("Remove the outliers of score using the IQR method. Do this for the score column only.", desc)
    assert all(s.answerable for s in specs), [s.problems for s in specs]


def test_that_group_after_a_rank_is_the_group_it_named_and_declines_after_several():
    got = read(clinic(), "which tier has the most visits?", "what is the average weight in that group?")
    assert got[1] == "mean of `weight` by `tier` where `tier` among the top 1 by count of rows"
    got = read(clinic(), "mean score by tier", "what is the average weight in that group?")
    assert got[1].startswith("decline") and "which group" in got[1]


@pytest.mark.parametrize("question, table", [("total paid_orders amount", "paid_orders"),
                                             ("total amount in paid orders", "paid_orders"),
                                             ("total orders amount", "orders"), ("total amount", "orders")])
def test_a_table_whose_name_holds_another_tables_name_is_the_one_named(question, table):
    r = np.random.default_rng(1)
    orders = pd.DataFrame({"order_id": range(200), "region": r.choice(["N", "S"], 200),
                           "amount": r.uniform(1, 100, 200).round(2), "status": r.choice(["paid", "open"], 200)})
    desc = describe_tables({"orders": orders, "paid_orders": orders[orders.status == "paid"].reset_index(drop=True)},
                           active="orders")
    assert read_question(question, desc)[-1].table == table
