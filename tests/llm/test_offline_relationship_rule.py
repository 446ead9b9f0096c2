"""A correlation labelled by the question's own rule ("Consider the relationship to be linear if the p-value is less
than 0.05 and the absolute value of r is greater than or equal to 0.5 ..."), and each format name rounded as the
format says for it (r to two decimals, the p-value to four)."""

from __future__ import annotations

import re

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from auto_analyst import Analyst, Settings
from auto_analyst.offline.answer import format_lines
from auto_analyst.offline.answer_format import relationship_options, relationship_word
from auto_analyst.offline.reader.constraints import relationship_rule

RULE = ("Consider the relationship to be linear if the p-value is less than 0.05 and the absolute value of r is greater "
        "than or equal to 0.5. Consider the relationship to be nonlinear if the p-value is less than 0.05 and the "
        "absolute value of r is less than 0.5. If the p-value is greater than or equal to 0.05, report that there is "
        "no significant correlation.")
FORMAT = ('@correlation_coefficient[r_value] @p_value[p_value] @relationship_type[relationship_type] where "r_value" is '
          'a number between -1 and 1, rounded to two decimal places. "p_value" is a number between 0 and 1, rounded to '
          'four decimal places. "relationship_type" is a string that can either be "linear", "nonlinear", or "none" '
          'based on the conditions specified in the constraints.')


def test_the_rule_and_the_format_words_are_read():
    assert relationship_rule(RULE) == (0.05, 0.5)
    options = relationship_options(FORMAT, "relationship_type")
    assert options == {"linear": "linear", "nonlinear": "nonlinear", "none": "none"}
    assert relationship_word(options, 0.62, 0.001, 0.05, 0.5) == "linear"
    assert relationship_word(options, -0.3, 0.001, 0.05, 0.5) == "nonlinear"
    assert relationship_word(options, 0.9, 0.2, 0.05, 0.5) == "none"
    two = relationship_options('@correlation[c] where "c" is a string that can either be "correlated" or "not correlated".',
                               "correlation")
    assert two == {"correlated": "correlated", "none": "not correlated"}


def test_each_name_is_rounded_as_the_format_says_for_it():
    tables = [{"name": "pearson correlation of a and b", "columns": ["value"], "rows": [[0.123456]]},
              {"name": "p-value of that correlation", "columns": ["value"], "rows": [[0.0456789]]}]
    text = format_lines(["correlation_coefficient", "p_value", "relationship_type"], tables, 2, RULE + " " + FORMAT)
    assert "@correlation_coefficient[0.12]" in text and "@p_value[0.0457]" in text
    assert "@relationship_type[nonlinear]" in text


@pytest.mark.parametrize("seed,strength", [(0, 1.0), (1, 0.05)])
def test_a_question_with_the_rule_is_answered_with_the_label(tmp_path, seed, strength):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=120)
    frame = pd.DataFrame({"height": x, "weight": strength * x + rng.normal(size=120)})
    r, p = stats.pearsonr(frame["height"], frame["weight"])
    want = "none" if p >= 0.05 else ("linear" if abs(r) >= 0.5 else "nonlinear")
    with Analyst(settings=Settings.load({"home": tmp_path})) as analyst:
        s = analyst.session()
        s.add_frame("body", frame)
        res = s.ask("Is there a correlation between height and weight? Calculate the Pearson correlation coefficient (r). "
                    + RULE + " " + FORMAT)
    assert res.status == "ok", res.answer
    given = dict(re.findall(r"@(\w+)\[(.*?)\]", res.answer))
    assert given["relationship_type"] == want, res.answer
    assert float(given["p_value"]) == pytest.approx(round(p, 4), abs=1e-9)
    assert float(given["correlation_coefficient"]) == pytest.approx(round(r, 2), abs=1e-9)
