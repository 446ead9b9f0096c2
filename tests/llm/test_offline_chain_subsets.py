"""Conversations a blind set answered wrong (issue 25 item 1/2), each on two tables, checked with pandas.

'What percent of them is that?' after a count narrowed from an earlier count is a percent of that earlier set, never
of the whole table (or a decline when no earlier set is there); a yes/no question ('is there any airport above
10000 ft?') is answered yes or no with its count; 'how many players' on rows repeating a player's id counts the
different players; a value of another column than the kept one ('France' after 'Asia') is never a silent
'No rows match'.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from auto_analyst import Analyst, Settings


def airports() -> pd.DataFrame:
    rng = np.random.default_rng(5)
    n = 200
    frame = pd.DataFrame({"iata": [f"A{i:03d}" for i in range(n)], "state": rng.choice(["TX", "CA", "CO", "NY"], n),
                          "elevation_ft": rng.integers(0, 3000, n), "runways": rng.integers(1, 5, n)})
    frame.loc[frame.index[frame.state == "CO"][:2], "elevation_ft"] = 10500
    return frame


def cars() -> pd.DataFrame:
    rng = np.random.default_rng(8)
    n = 90
    return pd.DataFrame({"model": [f"car{i}" for i in range(n)], "origin": rng.choice(["USA", "Europe", "Japan"], n),
                         "cylinders": rng.choice([4, 6, 8], n), "mpg": np.round(rng.uniform(10, 40, n), 1)})


def players() -> pd.DataFrame:  # three seasons a player: rows repeat the player's id
    rng = np.random.default_rng(2)
    return pd.DataFrame({"player_id": np.repeat(np.arange(1, 31), 3), "season": np.tile([2021, 2022, 2023], 30),
                         "team": np.repeat(rng.choice(["Hawks", "Bears", "Lions"], 30), 3),
                         "points": rng.integers(0, 40, 90)})


def survey() -> pd.DataFrame:  # two waves a respondent
    rng = np.random.default_rng(4)
    return pd.DataFrame({"respondent": np.repeat(np.arange(100, 140), 2), "wave": np.tile([1, 2], 40),
                         "region": np.repeat(rng.choice(["North", "South"], 40), 2), "score": rng.integers(0, 10, 80)})


@pytest.fixture
def analyst(tmp_path):
    a = Analyst(settings=Settings.load({"home": tmp_path}), user="noor")
    yield a
    a.close()


def chat(analyst, name, frame):
    s = analyst.session()
    s.add_frame(name, frame)
    return s


def last(r) -> float:
    assert r.status == "ok", r.answer
    return r.tables[-1].rows[0][0]


@pytest.mark.parametrize("name, make, first, second, wide, narrow", [
    ("airports", airports, "How many airports are in TX?", "And how many of those are above 1000 ft?",
     lambda f: f.state == "TX", lambda f: (f.state == "TX") & (f.elevation_ft > 1000)),
    ("cars", cars, "How many cars are from Japan?", "How many of those have 4 cylinders?",
     lambda f: f.origin == "Japan", lambda f: (f.origin == "Japan") & (f.cylinders == 4)),
])
def test_percent_of_them_is_of_the_earlier_set(analyst, name, make, first, second, wide, narrow):
    f, s = make(), chat(analyst, name, make())
    assert last(s.ask(first)) == wide(f).sum()
    assert last(s.ask(second)) == narrow(f).sum()
    r = s.ask("What percent of them is that?")
    assert last(r) == pytest.approx(round(100 * narrow(f).sum() / wide(f).sum(), 2)), r.answer
    assert "as a percent of the whole table" not in r.answer


@pytest.mark.parametrize("name, make, first, second, third, narrow", [
    ("airports", airports, "How many airports are in TX?", "And how many of those are above 1000 ft?",
     "What percent of all airports is that?", lambda f: (f.state == "TX") & (f.elevation_ft > 1000)),
    ("cars", cars, "How many cars are from Japan?", "How many of those have 4 cylinders?",
     "What percentage of all cars is that?", lambda f: (f.origin == "Japan") & (f.cylinders == 4)),
])
def test_percent_of_all_is_of_the_whole_table_keeping_the_conditions(analyst, name, make, first, second, third, narrow):
    f, s = make(), chat(analyst, name, make())
    s.ask(first)
    s.ask(second)
    r = s.ask(third)
    assert last(r) == pytest.approx(round(100 * narrow(f).mean(), 2)) and "of the whole table" in r.answer, r.answer


@pytest.mark.parametrize("name, make, question", [
    ("airports", airports, "How many airports are in TX?"), ("cars", cars, "How many cars are from Japan?")])
def test_percent_of_them_with_no_earlier_set_declines(analyst, name, make, question):
    s = chat(analyst, name, make())
    s.ask(question)
    r = s.ask("What percent of them is that?")
    assert r.status == "declined" and "'them'" in r.answer, r.answer


def test_percent_after_a_replaced_value_is_not_of_the_earlier_set(analyst):
    f, s = airports(), chat(analyst, "airports", airports())
    s.ask("How many airports are in TX?")
    s.ask("What about CA?")  # not a narrowing of TX: 'them' has no wider set
    r = s.ask("What percent of those is that?")
    assert r.status == "declined", r.answer
    r = s.ask("What percent of all airports are in CA?")
    assert last(r) == pytest.approx(round(100 * (f.state == "CA").mean(), 2)), r.answer


@pytest.mark.parametrize("name, make, question, kept", [
    ("airports", airports, "Is there any airport above 10000 ft?", lambda f: f.elevation_ft > 10000),
    ("airports", airports, "Are there any airports in NY with more than 8 runways?",
     lambda f: (f.state == "NY") & (f.runways > 8)),
    ("cars", cars, "Are there any cars with more than 8 cylinders?", lambda f: f.cylinders > 8),
    ("cars", cars, "Did Japan have any cars with mpg above 35?", lambda f: (f.origin == "Japan") & (f.mpg > 35)),
])
def test_a_yes_no_question_says_yes_or_no_with_the_count(analyst, name, make, question, kept):
    n = int(kept(make()).sum())
    r = chat(analyst, name, make()).ask(question)
    assert r.status == "ok", r.answer
    assert r.tables[0].rows[0][0] == ("yes" if n else "no") and r.tables[1].rows[0][0] == n, r.answer


def test_a_yes_no_question_does_not_stay_one_in_the_next_turn(analyst):
    f, s = airports(), chat(analyst, "airports", airports())
    s.ask("Is there any airport above 10000 ft?")
    r = s.ask("And how many of those are in CO?")
    assert r.status == "ok" and len(r.tables) == 1, r.answer
    assert last(r) == ((f.elevation_ft > 10000) & (f.state == "CO")).sum()


@pytest.mark.parametrize("name, make, question, ident, kept", [
    ("players", players, "How many players are there?", "player_id", lambda f: f.index >= 0),
    ("players", players, "How many players are on the Hawks?", "player_id", lambda f: f.team == "Hawks"),
    ("survey", survey, "How many respondents are from the North?", "respondent", lambda f: f.region == "North"),
    ("survey", survey, "How many people are there?", "respondent", lambda f: f.index >= 0),
])
def test_a_noun_of_a_repeated_id_counts_the_different_ids(analyst, name, make, question, ident, kept):
    f = make()
    r = chat(analyst, name, make()).ask(question)
    assert last(r) == f[kept(f)][ident].nunique(), r.answer
    assert "different values" in r.answer


@pytest.mark.parametrize("name, make", [("players", players), ("survey", survey)])
def test_rows_and_records_still_count_rows(analyst, name, make):
    assert last(chat(analyst, name, make()).ask("How many rows are there?")) == len(make())


def births() -> pd.DataFrame:
    rng = np.random.default_rng(9)
    places = {"Brazil": "Americas", "Chile": "Americas", "France": "Europe", "Spain": "Europe", "Japan": "Asia",
              "India": "Asia"}
    return pd.DataFrame([(c, r, y, int(rng.integers(150, 900))) for c, r in places.items() for y in range(2018, 2024)],
                        columns=["country", "continent", "year", "births"])


def sales() -> pd.DataFrame:
    rng = np.random.default_rng(6)
    places = {"Lyon": "East", "Nice": "East", "Brest": "West", "Nantes": "West"}
    return pd.DataFrame([(c, r, y, round(float(rng.uniform(10, 100)), 1)) for c, r in places.items()
                         for y in (2021, 2022) for _ in range(3)], columns=["city", "zone", "year", "revenue"])


def tips() -> pd.DataFrame:  # meal and sex cross: every meal has both sexes
    rng = np.random.default_rng(1)
    n = 60
    return pd.DataFrame({"meal": rng.choice(["Lunch", "Dinner", "Brunch"], n), "sex": np.tile(["Female", "Male"], n // 2),
                         "tip": np.round(rng.uniform(1, 6, n), 2)})


@pytest.mark.parametrize("name, make, turns, expected", [
    ("births", births, ["What is the average births in Asia?", "What about France?"],
     lambda f: f[f.country == "France"].births.mean()),
    ("births", births, ["What is the average births in France?", "How about Asia?"],
     lambda f: f[f.continent == "Asia"].births.mean()),
    ("sales", sales, ["What is the total revenue in 2021?", "And in the East zone?", "What about Brest?"],
     lambda f: f[(f.year == 2021) & (f.city == "Brest")].revenue.sum()),
])
def test_a_value_of_a_nesting_column_replaces_the_kept_one(analyst, name, make, turns, expected):
    f, s = make(), chat(analyst, name, make())
    for q in turns[:-1]:
        assert s.ask(q).status == "ok"
    r = s.ask(turns[-1])
    assert last(r) == pytest.approx(expected(f)) and "in place of" in r.answer, r.answer


def test_the_turn_after_a_replaced_value_keeps_the_new_one(analyst):
    f, s = births(), chat(analyst, "births", births())
    s.ask("What is the average births in Asia?")
    s.ask("What about France?")
    r = s.ask("And in 2020?")
    assert last(r) == pytest.approx(f[(f.country == "France") & (f.year == 2020)].births.mean()), r.answer


def test_a_value_of_a_crossing_column_declines_naming_both(analyst):
    s = chat(analyst, "tips", tips())
    s.ask("What is the average tip at Lunch?")
    r = s.ask("What about Female?")
    assert r.status != "ok" and "cross" in r.answer and "meal = Lunch" in r.answer, r.answer


@pytest.mark.parametrize("name, make, first, second, words", [
    ("births", births, "What is the average births in Asia?", "Now only France.", "continent = Europe"),
    ("sales", sales, "What is the total revenue in the West zone?", "Now only Lyon.", "zone = East"),
])
def test_two_values_no_row_has_together_say_why(analyst, name, make, first, second, words):
    s = chat(analyst, name, make())
    s.ask(first)
    r = s.ask(second)
    assert r.status != "ok" and "No row has both" in r.answer and words in r.answer, r.answer


def test_percent_of_them_and_yes_no_give_the_same_answer_on_a_database_table(tmp_path):
    from tests.sources_cases import file_and_sqlite_answers

    f = airports()
    asked = ["How many airports are in TX?", "And how many of those are above 1000 ft?", "What percent of them is that?",
             "Is there any airport above 10000 ft?"]
    out = file_and_sqlite_answers(tmp_path, "airports", {"iata": "TEXT", "state": "TEXT", "elevation_ft": "INTEGER",
                                                        "runways": "INTEGER"}, list(f.itertuples(index=False)), asked)
    tx, high = f.state == "TX", (f.state == "TX") & (f.elevation_ft > 1000)
    for where in ("file", "db"):
        assert last(out[where][asked[2]]) == pytest.approx(round(100 * high.sum() / tx.sum(), 2)), where
        r = out[where][asked[3]]
        assert [t.rows[0][0] for t in r.tables] == ["yes", (f.elevation_ft > 10000).sum()], (where, r.answer)


@pytest.mark.parametrize("name, make, question, ident, kept", [
    ("players", players, "How many players scored more than 30 points?", "player_id", lambda f: f.points > 30),
    ("survey", survey, "How many respondents scored above 7?", "respondent", lambda f: f.score > 7),
])
def test_a_condition_column_said_again_still_counts_the_different_ids(analyst, name, make, question, ident, kept):
    f = make()
    r = chat(analyst, name, make()).ask(question)
    assert last(r) == f[kept(f)][ident].nunique(), r.answer


@pytest.mark.parametrize("question, column", [("How many respondents have children?", "children"),
                                              ("How many households have pets?", "pets")])
def test_have_an_amount_counts_the_rows_where_it_is_above_zero(analyst, question, column):
    rng = np.random.default_rng(3)
    f = pd.DataFrame({"children": rng.choice([0.0, 0.0, 1.0, 2.5], 50), "pets": rng.choice([0, 0, 1, 3], 50),
                      "age": rng.integers(20, 60, 50)})
    r = chat(analyst, "households", f).ask(question)
    assert last(r) == (f[column] > 0).sum(), r.answer


@pytest.mark.parametrize("name, make, question, ident, column", [
    ("players", lambda: players().assign(fouls=np.tile([0, 1, 2], 30)), "How many players had any fouls?", "player_id",
     "fouls"),
    ("survey", lambda: survey().assign(kids=np.tile([1, 1, 0, 0], 20)), "How many respondents have kids?", "respondent",
     "kids"),
])
def test_presence_on_repeated_ids_counts_the_different_ids(analyst, name, make, question, ident, column):
    f = make()
    r = chat(analyst, name, make()).ask(question)
    assert last(r) == f[f[column] > 0][ident].nunique(), r.answer


@pytest.mark.parametrize("name, make, first, second, wide, narrow", [
    ("airports", airports, "How many airports are in TX?", "What percent of them are above 1000 ft?",
     lambda f: f.state == "TX", lambda f: (f.state == "TX") & (f.elevation_ft > 1000)),
    ("births", births, "What is the total births in Europe?", "What percent of those is France?",
     lambda f: f.continent == "Europe", lambda f: f.country == "France"),
])
def test_percent_of_those_with_a_new_condition_is_of_the_previous_set(analyst, name, make, first, second, wide, narrow):
    f, s = make(), chat(analyst, name, make())
    s.ask(first)
    r = s.ask(second)
    col = "births" if name == "births" else None
    share = (f[narrow(f)][col].sum() / f[wide(f)][col].sum()) if col else narrow(f).sum() / wide(f).sum()
    assert last(r) == pytest.approx(round(100 * share, 2)), r.answer


@pytest.mark.parametrize("name, make, first", [("sales", sales, "What is the average revenue in the East zone?"),
                                               ("births", births, "What is the average births in Asia?")])
def test_percent_of_a_mean_declines(analyst, name, make, first):
    s = chat(analyst, name, make())
    s.ask(first)
    r = s.ask("What percent of them is that?")
    assert r.status == "declined" and "count of rows or of a total" in r.answer, r.answer


@pytest.mark.parametrize("name, make, first, second, kept", [
    ("airports", airports, "How many airports are in TX?", "Are there any above 2900 ft?",
     lambda f: (f.state == "TX") & (f.elevation_ft > 2900)),
    ("cars", cars, "How many cars are from Japan?", "Are there any with mpg above 38?",
     lambda f: (f.origin == "Japan") & (f.mpg > 38)),
])
def test_a_yes_no_follow_up_naming_no_rows_asks_about_the_earlier_ones(analyst, name, make, first, second, kept):
    n, s = int(kept(make()).sum()), chat(analyst, name, make())
    s.ask(first)
    r = s.ask(second)
    assert r.status == "ok" and [t.rows[0][0] for t in r.tables] == [("yes" if n else "no"), n], r.answer


@pytest.mark.parametrize("name, make, question, kept", [
    ("players", players, "How many seasons are there?", lambda f: f.index >= 0),
    ("harvests", lambda: pd.DataFrame({"orchard": np.repeat(["Hill", "Oak", "Mead"], 4), "season": np.tile([2019, 2020,
                                       2021, 2022], 3), "picked_kg": np.arange(12) * 10.0}),
     "How many seasons are there?", lambda f: f.index >= 0),
])
def test_a_repeated_period_column_counts_its_different_values(analyst, name, make, question, kept):
    f = make()
    r = chat(analyst, name, make()).ask(question)
    assert last(r) == f[kept(f)].season.nunique(), r.answer


@pytest.mark.parametrize("name, make, first, second, kept", [
    ("tips", tips, "What is the average tip at Lunch for Female?", "What about Dinner?",
     lambda f: (f.meal == "Dinner") & (f.sex == "Female")),
    ("homes", lambda: pd.DataFrame({"city": np.tile(["London", "Paris", "Rome"], 8), "kind": np.repeat(["flat", "house"], 12),
                                    "price": np.arange(24) * 1000.0}),
     "What is the average price of flat in London?", "What about Paris?", lambda f: (f.city == "Paris") & (f.kind == "flat")),
])
def test_a_value_of_the_same_column_replaces_it_and_keeps_the_others(analyst, name, make, first, second, kept):
    f, s = make(), chat(analyst, name, make())
    assert s.ask(first).status == "ok"
    r = s.ask(second)
    col = "tip" if name == "tips" else "price"
    assert last(r) == pytest.approx(f[kept(f)][col].mean()), r.answer


@pytest.mark.parametrize("name, make, first, second, ident, kept", [
    ("players", players, "How many players are on the Hawks?", "And how many of those scored above 35?", "player_id",
     lambda f: (f.team == "Hawks") & (f.points > 35)),
    ("survey", survey, "How many respondents are from the North?", "And how many of those scored above 7?",
     "respondent", lambda f: (f.region == "North") & (f.score > 7)),
])
def test_how_many_of_those_after_different_ids_counts_them_again(analyst, name, make, first, second, ident, kept):
    f, s = make(), chat(analyst, name, make())
    s.ask(first)
    r = s.ask(second)
    assert last(r) == f[kept(f)][ident].nunique(), r.answer


@pytest.mark.parametrize("name, make, first, second, kept", [
    ("cars", cars, "How many cars have 8 cylinders?", "Is there any from Japan?",
     lambda f: (f.cylinders == 8) & (f.origin == "Japan")),
    ("airports", airports, "How many airports are in TX?", "Is there any with 4 runways?",
     lambda f: (f.state == "TX") & (f.runways == 4)),
])
def test_a_yes_no_follow_up_with_a_condition_after_any_keeps_the_earlier_rows(analyst, name, make, first, second, kept):
    n, s = int(kept(make()).sum()), chat(analyst, name, make())
    s.ask(first)
    r = s.ask(second)
    assert r.status == "ok" and [t.rows[0][0] for t in r.tables] == [("yes" if n else "no"), n], r.answer


@pytest.mark.parametrize("name, make, first, second", [
    ("players", players, "How many teams are there?", "How many rows have points above 30?"),
    ("airports", airports, "How many states are there?", "How many rows have runways above 2?"),
])
def test_percent_of_them_after_a_count_of_other_things_declines(analyst, name, make, first, second):
    s = chat(analyst, name, make())
    s.ask(first)
    s.ask(second)
    r = s.ask("What percent of them is that?")
    assert r.status == "declined", r.answer
