"""What the answer writer reads of a run keeps each value's significant digits (never fixed decimals that erase it)."""

from __future__ import annotations

import json

import pandas as pd

from auto_analyst import Analyst, Settings
from auto_analyst.agents.run_view import significant, tables_json
from auto_analyst.agents.signatures import ENVIRONMENT, AnswerSignature
from auto_analyst.results import TableOut
from tests.scripted import ANSWER, PLANNER, scripted_lm


def test_significant_keeps_small_and_large_values_and_drops_only_float_noise():
    assert significant(8.8e-22) == 8.8e-22 and significant(-3.2e-300) == -3.2e-300
    assert significant(0.1 + 0.2) == 0.3 and significant(1 / 3) == 0.333333333333
    assert significant(12345678.91) == 12345678.91 and significant(123456789012.25) == 123456789012
    assert significant(6.02214076e23) == 6.02214076e23
    assert significant(0.0) == 0.0 and significant(7) == 7 and significant("0.30000000000000004") == "0.30000000000000004"
    assert significant(float("nan")) != significant(float("nan"))  # NaN passes through as it is


def test_an_integral_float_is_read_whole_so_distinct_keys_stay_distinct():
    # 16-digit identifiers in a float column (the keys of a grouped table) and a large total: no float noise to drop
    t = TableOut(name="total amount by account_id", columns=["account_id", "total amount"], n_rows=3,
                 rows=[[1234567890123456.0, 1.1], [1234567890123457.0, 2.2], [3.0, 1234567890123.0]])
    assert json.loads(tables_json([t]))[0]["rows"] == t.rows
    assert significant(-98765432109876.0) == -98765432109876.0 and significant(2.0 ** 60) == 2.0 ** 60


def test_tables_json_writes_a_p_value_in_scientific_notation_never_as_zero():
    t = TableOut(name="t test", columns=["statistic", "p_value"], rows=[[-12.345678901234567, 8.8e-22]], n_rows=1)
    text = tables_json([t])
    assert "8.8e-22" in text and "0.0" not in text and "-12.3456789012" in text
    assert json.loads(text)[0]["rows"] == [[-12.3456789012, 8.8e-22]]


def test_the_answer_writer_reads_what_show_recorded_with_its_significant_digits(tmp_path):
    code = ("show(8.8e-22, name='p value')\n"
            "show(pd.DataFrame({'group': ['a', 'b'], 'mean': [0.1 + 0.2, 12345678.91], 'p': [8.8e-22, 0.5]}), "
            "name='by group')")
    seen = []
    plan = {"intent": "analysis", "standalone_question": "p", "assumptions": [], "decline_reason": "",
            "plan": [{"agent": "statistics", "instruction": "p", "uses": ["df"], "creates": []}], "code": code}
    lm, _ = scripted_lm({PLANNER: lambda p: plan,
                         ANSWER: lambda p: seen.append(p.inputs["tables"]) or {"answer": "p = 8.8e-22", "summary": "s"}})
    with Analyst(settings=Settings.load({"home": tmp_path}), lm=lm) as analyst:
        s = analyst.session()
        s.add_frame("t", pd.DataFrame({"x": [1, 2]}))
        r = s.ask("what is the p value?")
    assert r.status == "ok" and r.trace.unsupported_numbers == []
    tables = json.loads(seen[0])
    assert tables[0]["rows"] == [[8.8e-22]]
    assert tables[1]["rows"] == [["a", 0.3, 8.8e-22], ["b", 12345678.91, 0.5]]
    assert "0.30000000000000004" not in seen[0]


def test_the_contract_asks_for_unrounded_values_and_the_difference_of_a_comparison():
    assert "never round to fixed decimals that erase a value" in ENVIRONMENT
    assert "show the difference" in ENVIRONMENT
    text = " ".join(AnswerSignature.instructions.split())
    assert "an empty list as @name[]" in text and "before any other words" in text and "8.8e-22, never as 0" in text


def test_the_requested_format_lines_come_first_in_their_order_values_unchanged():
    from auto_analyst.agents.answer_format import lead_with_format

    q = "What are the mean and the outliers? @mean_fare[mean] @outliers[list of values]"
    answer = "The mean fare is 34.65; there are no outliers.\n\n- `@outliers[]`\n- **@mean_fare[34.65]**"
    assert lead_with_format(q, answer) == "@mean_fare[34.65]\n@outliers[]\n\nThe mean fare is 34.65; there are no outliers."
    first = "@mean_fare[34.65]\n@outliers[]\n\nText."
    assert lead_with_format(q, first) == first  # already first: unchanged
    assert lead_with_format("no format asked", answer) == answer
    inline = "The value @mean_fare[34.65] is in a sentence."
    assert lead_with_format(q, inline) == inline  # only whole lines move
