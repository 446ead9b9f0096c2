"""Numbers as people read them: a p-value too small to show is '< 0.001', never '0' or '0.' (the offline answer
writer); the computed values in the Result stay as they are, and so do the '@name[...]' lines the benchmarks compare
exactly. (A result table's CSV download without float noise: tests/web/test_chat.py.)"""

from __future__ import annotations

import re

import numpy as np
import pandas as pd
import pytest
from sklearn.datasets import load_breast_cancer

from auto_analyst import Analyst, Settings
from auto_analyst.offline.answer import write_answer


def _twins(n: int = 400) -> pd.DataFrame:
    """A table built here: 'weight' follows 'height' so closely that every test's p-value underflows to 0.0."""
    rng = np.random.default_rng(3)
    height = rng.normal(170, 10, n)
    return pd.DataFrame({"height": height, "weight": 0.5 * height + rng.normal(0, 0.01, n),
                         "build": np.where(height > 170, "tall", "short")})


@pytest.fixture(scope="module")
def analyst(tmp_path_factory):
    with Analyst(settings=Settings.load({"home": tmp_path_factory.mktemp("home")})) as a:
        yield a


@pytest.mark.parametrize("frame,question,label,computed,text", [
    (load_breast_cancer(as_frame=True).frame, "correlation between mean radius and mean perimeter",
     "P-value of that correlation", 0.0, "< 0.001"),
    (_twins(), "correlation between height and weight", "P-value of that correlation", 0.0, "< 0.001"),
    (_twins(), "t-test of height by build", "P-value", 1.4424109320771675e-85, "1.44e-85"),  # tiny, not 0: as is
], ids=["breast-cancer", "twins-correlation", "twins-t-test"])
def test_a_p_value_that_underflows_to_zero_reads_below_a_bound(analyst, frame, question, label, computed, text):
    s = analyst.session()
    s.add_frame("t", frame)
    r = s.ask(question)
    assert r.status == "ok", (r.answer, r.error)
    shown = {t.name: t.rows for t in r.tables}
    assert shown[label[0].lower() + label[1:]] == [[computed]]  # the computed value is untouched
    assert f"**{label}**: {text}." in r.answer, r.answer
    assert not re.search(r"\*\*: 0\.?$", r.answer, re.M), r.answer
    assert not r.trace.unsupported_numbers, (r.answer, r.trace.unsupported_numbers)


def test_the_answer_format_line_keeps_the_value_as_computed(analyst):
    s = analyst.session()
    s.add_frame("t", _twins())
    r = s.ask("What is the Pearson correlation between height and weight and its p-value? "
              "@correlation_coefficient[r_value], "
              "@p_value[p_value] where r_value and p_value are numbers rounded to four decimal places.")
    assert r.status == "ok", (r.answer, r.error)
    assert "@p_value[0]" in r.answer and "@correlation_coefficient[1]" in r.answer, r.answer


def test_p_values_in_a_table_of_terms_read_below_a_bound_and_other_zeros_stay_zero():
    terms = {"name": "coefficients", "columns": ["term", "coefficient", "p-value"], "n_rows": 2,
             "rows": [["a", 2.0, 0.0], ["const", 0.0, 0.4183]]}
    wide = {"name": "test", "columns": ["test", "statistic", "p-value", "df", "n", "effect"], "n_rows": 1,
            "rows": [["anova", 812.5, 0.0, 2, 150, 0.0]]}
    text = write_answer([terms, wide], [], [], "")
    assert "- a: 2, < 0.001" in text and "- const: 0, 0.4183" in text, text
    assert "- anova: statistic 812.5, p-value < 0.001, df 2, n 150, effect 0" in text, text
    assert write_answer([terms], [], [], "", digits=4).count("< 0.0001") == 1


def _shifts() -> pd.DataFrame:
    """A table built here: Welch's t-test of 'output' between the shifts has p = 0.036 (day against night)."""
    return pd.DataFrame({"shift": ["day"] * 8 + ["night"] * 8,
                         "output": [10, 12, 11, 14, 13, 12, 15, 11, 12, 14, 13, 15, 16, 13, 14, 15]})


@pytest.mark.parametrize("frame,question,text", [
    (_shifts(), "what is the p-value of a t-test of output between day and night, rounded to 1 decimal place?",
     "< 0.1"),  # 0.036 is 0.0 at 1 decimal: never '< 0.001'
    (_shifts(), "is there a significant difference in output between day and night? round to the nearest whole number",
     "0 (rounded to a whole number as asked)"),  # '< 1' says nothing of a p-value: the value as asked, marked
    (load_breast_cancer(as_frame=True).frame.assign(target=lambda f: f["target"].map({0: "malignant", 1: "benign"})),
     "t-test of mean smoothness between malignant and benign, rounded to 2 decimal places", "< 0.01"),
], ids=["shifts-1-decimal", "shifts-whole-number", "breast-cancer-2-decimals"])
def test_a_p_value_rounded_as_asked_reads_no_tighter_bound_than_those_decimals(analyst, frame, question, text):
    s = analyst.session()
    s.add_frame("t", frame)
    r = s.ask(question)
    assert r.status == "ok", (r.answer, r.error)
    assert f"**P-value**: {text}." in r.answer, r.answer
    assert "< 0.001" not in r.answer, r.answer
    assert not r.trace.unsupported_numbers, (r.answer, r.trace.unsupported_numbers)


def test_the_bound_follows_the_decimals_asked():
    from auto_analyst.offline.answer import shown

    assert [shown("p-value", 0.0, rounded=d) for d in (None, 4, 2, 1)] == ["< 0.001", "< 0.001", "< 0.01", "< 0.1"]
    assert shown("p-value", 0.0, 0) == shown("p-value", 0.0, rounded=0) == "0 (rounded to a whole number as asked)"
    assert shown("p-value", 0.04, rounded=0) == "0.04"  # a value the script left unrounded is shown as it is
