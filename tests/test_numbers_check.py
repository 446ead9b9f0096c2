"""The numbers check (auto_analyst/numbers_check.py) does not flag the period a question names: a decade's ends
('1970s' -> 1970 and 1979) and a short range's end ('1980-85' -> 1985) are not numbers the answer invented; a
number nothing names is still flagged."""

from __future__ import annotations

import pandas as pd
import pytest

from auto_analyst import Analyst, Settings
from auto_analyst.numbers_check import unsupported_numbers


@pytest.mark.parametrize("question, answer, flagged", [
    ("average cpi in the 1990s", "Mean cpi (years 1990–1999): 150.6375.", []),
    ("mean realgdp per quarter in the 1970s", "Mean realgdp, 1970 to 1979: 4000.5.", []),
    ("mean sales in the '80s", "Mean sales (1980–1989): 12.5.", []),
    ("mean sales in the 2000s", "Mean sales (2000–2009): 12.5.", []),
    ("max unemp 1980-85", "The highest unemp from 1980 to 1985 was 10.7.", []),
    ("total from 1998 to 02", "Total 1998–2002: 12.5.", []),
    # a year outside the named period, or next to a decade it does not name, is still the answer's own
    ("average cpi in the 1990s", "Mean cpi (years 1990–2009): 150.6375.", ["2009"]),
    ("mean sales in the 1980s", "Mean sales (1980–1989) rose since 1979: 12.5.", ["1979"]),
])
def test_the_period_a_question_names_is_supported(question, answer, flagged):
    assert unsupported_numbers(answer, ["1990 1980 1970 2000 1998 150.6375 4000.5 12.5 10.7", question]) == flagged


@pytest.fixture(scope="module")
def analyst(tmp_path_factory):
    with Analyst(settings=Settings.load({"home": tmp_path_factory.mktemp("home")})) as a:
        yield a


@pytest.mark.parametrize("file, question", [
    ("us_macro.csv", "average cpi in the 1990s"),
    ("us_macro.csv", "mean realgdp per quarter in the 1970s"),
    ("grunfeld.csv", "mean invest in the 1940s"),  # a second table: years are a plain column here
])
def test_a_right_answer_about_a_decade_carries_no_warning(analyst, datasets_dir, file, question):
    s = analyst.session()
    s.load(datasets_dir / file)
    r = s.ask(question)
    assert r.status == "ok", (r.answer, r.error)
    assert r.trace.unsupported_numbers == [], (r.answer, r.trace.unsupported_numbers)
    decade = int(question.split("in the ")[1][:4])
    frame = pd.read_csv(datasets_dir / file)
    years = frame["year"].between(decade, decade + 9)
    column = question.split()[1]
    if "per quarter" not in question:  # the value itself, computed here
        assert f"{frame.loc[years, column].mean():.4f}".rstrip("0") in r.answer, r.answer
