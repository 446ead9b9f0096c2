"""Follow-ups pointing at the one group the previous answer named (issue 25 item 1).

"its", "from there", "that year", "that orchard" after "which orchard had the most ...?" mean the group that
answer named, taken from its Result (typed), never a figure over every row; after an answer that named
several groups or none, they decline instead of answering over all rows. 'any rainfall' is rainfall > 0.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from auto_analyst import Analyst, Settings


def harvests() -> pd.DataFrame:
    rng = np.random.default_rng(7)
    n = 240
    frame = pd.DataFrame({"orchard": rng.choice(["Hillside", "Riverbend", "Oakridge", "Meadow"], n),
                          "season": rng.choice([2019, 2020, 2021], n),
                          "picked_kg": rng.integers(50, 900, n).astype(float),
                          "frost_hours": np.where(rng.random(n) < 0.6, 0.0, rng.integers(1, 30, n).astype(float))})
    frame.loc[frame.orchard == "Oakridge", "picked_kg"] += 400  # one clear winner
    return frame


@pytest.fixture
def chat(tmp_path):
    analyst = Analyst(settings=Settings.load({"home": tmp_path}), user="noor")
    s = analyst.session()
    s.add_frame("harvests", harvests())
    yield s
    analyst.close()


def value(r) -> float:
    assert r.status == "ok", r.answer
    return r.tables[0].rows[0][0]


def test_its_and_from_there_are_the_group_the_rank_named(chat):
    f = harvests()
    top = chat.ask("Which orchard had the highest total picked_kg in 2020?")
    assert top.tables[0].rows[0][0] == "Oakridge", top.answer
    r = chat.ask("What was its total frost_hours over all seasons?")
    assert value(r) == pytest.approx(f[f.orchard == "Oakridge"].frost_hours.sum())
    chat.ask("Which orchard had the highest total picked_kg in 2020?")
    r = chat.ask("How many rows come from there?")
    assert value(r) == (f[(f.orchard == "Oakridge") & (f.season == 2020)]).shape[0]


def test_that_season_is_the_season_the_answer_named(chat):
    f = harvests()
    best = f.groupby("season").picked_kg.sum().idxmax()
    first = chat.ask("Which season had the highest total picked_kg?")
    assert str(first.tables[0].rows[0][0]) == str(best), first.answer
    r = chat.ask("What was the mean frost_hours in that season?")
    assert value(r) == pytest.approx(f[f.season == best].frost_hours.mean())


def test_its_after_an_answer_of_several_groups_declines(chat):
    chat.ask("What is the total picked_kg by orchard?")
    r = chat.ask("What was its total frost_hours?")
    assert r.status == "declined" and "'its'" in r.answer, r.answer


def test_its_after_a_declined_turn_declines_naming_it(chat):
    chat.ask("Which orchard had the most zorbles?")
    r = chat.ask("What was its total frost_hours?")
    assert r.status == "declined" and "'Which orchard had the most zorbles?'" in r.answer, r.answer


def test_any_amount_counts_rows_above_zero(chat):
    f = harvests()
    r = chat.ask("On how many rows were there any frost_hours at all?")
    assert value(r) == int((f.frost_hours > 0).sum())


def test_that_condition_word_is_not_a_measure(chat):
    f = harvests()
    chat.ask("What was the total picked_kg of Meadow in 2021?")
    r = chat.ask("And its total frost_hours that season?")
    want = f[(f.orchard == "Meadow") & (f.season == 2021)].frost_hours.sum()
    assert value(r) == pytest.approx(want) and len(r.tables) == 1, r.answer


@pytest.mark.parametrize("follow_up", ["now by orchard", "and by season?", "which one is the highest?"])
def test_a_follow_up_word_after_a_decline_names_that_turn(chat, follow_up):
    chat.ask("What is the mean picked_kg of the zorbles?")
    r = chat.ask(follow_up)
    assert r.status == "declined" and "'What is the mean picked_kg of the zorbles?'" in r.answer, r.answer


def test_its_after_an_answer_kept_to_one_group_is_that_group(chat):
    f = harvests()
    chat.ask("Which 3 orchards have the highest mean picked_kg?")
    chat.ask("What is the mean frost_hours of the top one?")
    r = chat.ask("and its total picked_kg?")
    assert r.status == "ok", r.answer
    assert dict(r.tables[0].rows) == pytest.approx({"Oakridge": f[f.orchard == "Oakridge"].picked_kg.sum()})


def test_its_after_a_column_of_the_same_question_is_that_column(chat):
    f = harvests()
    chat.ask("What is the total picked_kg by orchard?")
    r = chat.ask("What is the mean frost_hours and its standard deviation?")
    assert r.status == "ok", r.answer
    got = [t.rows[0][0] for t in r.tables]
    assert got == pytest.approx([f.frost_hours.mean(), f.frost_hours.std()]), r.answer


def test_that_season_said_after_the_measure_is_the_season_named_not_a_measure(chat):
    f = harvests()
    best = f.groupby("season").picked_kg.sum().idxmax()
    chat.ask("Which season had the highest total picked_kg?")
    r = chat.ask("What was the mean frost_hours that season?")
    assert value(r) == pytest.approx(f[f.season == best].frost_hours.mean()) and len(r.tables) == 1, r.answer


def test_a_follow_up_of_a_turn_stopped_by_an_error_declines_naming_it(chat, monkeypatch):
    import auto_analyst.offline.coding as coding

    chat.ask("What is the total picked_kg of Meadow?")
    real = coding.code_for
    monkeypatch.setattr(coding, "code_for", lambda *a, **k: "raise LookupError('No value there')")
    stopped = chat.ask("What is the mean frost_hours of Hillside?")
    assert stopped.status == "error", stopped.answer
    monkeypatch.setattr(coding, "code_for", real)
    # never the total picked_kg of Riverbend (a follow-up of the turn before the error)
    r = chat.ask("Same for Riverbend.")
    assert r.status == "declined" and "'What is the mean frost_hours of Hillside?'" in r.answer, r.answer
