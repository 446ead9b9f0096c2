"""Never wrong down a conversation (issue 25 item 1): a follow-up inherits only what the turn before really answered.

After a declined turn, "the top one", "those three" and "same for X" decline with a sentence naming that
turn (they were read against the table alone, or against the turn before the decline); a first question
saying them declines too. A question of its own after a decline is answered as usual.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from auto_analyst import Analyst, Settings


def web(seed: int = 0, n: int = 300) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    return pd.DataFrame({"session_id": range(n), "landing_page": rng.choice(["/home", "/pricing", "/blog", "/docs"], n),
                         "session_duration_s": rng.integers(5, 600, n), "bounced": rng.random(n) < 0.4})


@pytest.fixture
def chat(tmp_path):
    analyst = Analyst(settings=Settings.load({"home": tmp_path}), user="ines")
    s = analyst.session()
    s.add_frame("web", web())
    yield s
    analyst.close()


def test_follow_ups_of_a_declined_turn_decline_and_name_it(chat):
    first = chat.ask("Which landing pages had the most zorbles?")
    assert first.status == "declined"
    for q in ("What is the bounce rate of the top one?", "For those three pages, what is the average session duration?",
              "Same for bounced."):
        r = chat.ask(q)
        assert r.status == "declined", (q, r.answer)
        assert "which I could not answer" in r.answer and "earlier question '" in r.answer, r.answer
    assert "'Which landing pages had the most zorbles?'" in chat.results[1].answer


def test_a_question_of_its_own_after_a_decline_is_answered(chat):
    chat.ask("Which landing pages had the most zorbles?")
    r = chat.ask("What is the mean session_duration_s by landing_page?")
    assert r.status == "ok", r.answer
    want = web().groupby("landing_page")["session_duration_s"].mean()
    got = dict(r.tables[0].rows)
    assert got == pytest.approx(want.to_dict())


@pytest.mark.parametrize("q", ["What is the bounce rate of the top one?", "Same for /blog.",
                               "For those three pages, what is the mean session duration?"])
def test_a_first_question_that_refers_back_declines(chat, q):
    r = chat.ask(q)
    assert r.status == "declined" and "earlier answer" in r.answer, r.answer


def test_a_declined_turn_is_kept_in_short_term_memory_as_not_answered(chat):
    chat.ask("Which landing pages had the most zorbles?")
    chat.settle()
    item = chat.memory.items[-1]
    assert item.answered is False and item.summary.startswith("Not answered:")
    assert chat.memory.messages(10_000)[-1]["answered"] == "no"


def test_the_top_one_and_those_three_are_the_groups_the_earlier_answers_showed(chat):
    frame = web()
    top = frame.groupby("landing_page").size().sort_values(ascending=False, kind="stable")
    first = chat.ask("Which 3 landing pages had the most sessions?")
    assert first.status == "ok", first.answer
    r = chat.ask("What is the bounce rate of the top one?")
    best = top.index[0]
    assert r.status == "ok", r.answer
    assert dict(r.tables[0].rows) == pytest.approx({best: 100 * frame[frame.landing_page == best].bounced.mean()})
    # 'those three' after an answer showing one page: not determined by the turn before, so declined
    r = chat.ask("For those three pages, what is the average session duration?")
    assert r.status == "declined", r.answer
    chat.ask("Which 3 landing pages had the most sessions?")
    r = chat.ask("For those three pages, what is the average session duration?")
    pages = set(dict(first.tables[0].rows))
    want = frame[frame.landing_page.isin(pages)].groupby("landing_page").session_duration_s.mean()
    assert dict(r.tables[0].rows) == pytest.approx(want.to_dict()), r.answer


def test_a_question_of_its_own_that_says_the_n_is_not_a_follow_up_of_a_decline(chat):
    chat.ask("Which landing pages had the most zorbles?")
    r = chat.ask("What are the 3 landing pages with the longest session duration?")
    assert r.status == "ok", r.answer


def test_same_for_x_after_an_answer_recalled_from_memory_declines(tmp_path):
    frame = pd.DataFrame({"plan": ["Basic", "Premium", "Pro"] * 20, "monthly_fee": [9.0, 19.0, 29.0] * 20})
    with Analyst(settings=Settings.load({"home": tmp_path})) as analyst:
        s = analyst.session()
        s.add_frame("subs", frame)
        s.ask("What is the average monthly_fee for the Premium plan?")
        s.ask("How many rows are there by plan?")
        recalled = s.ask("What was the average fee we found for the Premium plan earlier?")
        assert recalled.trace.source == "memory", recalled.answer
        r = s.ask("Same for Basic.")
    # not the count of the turn before the recall: declined, saying which turn it builds on
    assert r.status == "declined" and "recalled an earlier answer" in r.answer, r.answer


@pytest.mark.parametrize("follow_up", ["how many are there?", "what is their average price?", "what do they cost on average?"])
def test_pronouns_and_elliptical_follow_ups_after_a_declined_turn_decline(tmp_path, follow_up):
    import pandas as pd

    from auto_analyst.api import Analyst
    from auto_analyst.config import Settings

    frame = pd.DataFrame({"shop": list("abcdefgh"), "price": [3.0, 9.0, 4.0, 12.0, 7.0, 8.5, 2.0, 10.0],
                          "region": ["n", "s", "n", "s", "e", "e", "n", "s"]})
    with Analyst(settings=Settings.load({"home": tmp_path / "home"})) as analyst:
        s = analyst.session()
        s.add_frame("shops", frame)
        first = s.ask("Which shops have a zibble quotient above 8?")
        r = s.ask(follow_up)
    assert first.status == "declined", first.answer
    assert r.status == "declined" and "earlier question" in r.answer, r.answer


def test_a_spelling_correction_never_turns_a_word_into_its_negation(tmp_path):
    import pandas as pd

    from auto_analyst.api import Analyst
    from auto_analyst.config import Settings

    frame = pd.DataFrame({"year": [2001, 2002, 2003], "unemployment": [5.1, 6.2, 4.8], "gdp": [1.0, 1.1, 1.2]})
    with Analyst(settings=Settings.load({"home": tmp_path / "home"})) as analyst:
        s = analyst.session()
        s.add_frame("macro", frame)
        wrong_word = s.ask("What is the average employment?")
        typo = s.ask("What is the average unemploymnet?")
    assert wrong_word.status == "declined", wrong_word.answer  # not the mean of unemployment
    assert typo.status == "ok" and "5.3" in typo.answer, typo.answer
