"""anonymize(): a global entry made from one user's failure must carry none of that user's names or values."""

from __future__ import annotations

from auto_analyst.memory.errorfix.anonymize import anonymize
from auto_analyst.memory.errorfix.memory import anonymize as reexported


def test_column_names_and_values_are_replaced():
    text = ("ValueError: could not convert string to float: 'Basic' in df['Plan Type'].astype(float); "
            "plan type Premium customers of Acme Corp")
    out = anonymize(text, ["Plan Type", "Revenue"], ["Basic", "Premium", "Acme Corp"])
    for secret in ("Basic", "Plan Type", "plan type", "Premium", "Acme"):
        assert secret not in out
    assert out == ("ValueError: could not convert string to float: '<value1>' in df['<col1>'].astype(float); "
                   "<col1> <value2> customers of <value3>")
    assert reexported is anonymize


def test_same_failure_on_two_datasets_gives_the_same_text():
    a = anonymize("KeyError: 'Sales' in df.groupby('Region')['Sales'].sum()", ["Sales", "Region"], [])
    b = anonymize("KeyError: 'Umsatz' in df.groupby('Land')['Umsatz'].sum()", ["Umsatz", "Land"], [])
    assert a == b == "KeyError: '<col1>' in df.groupby('<col2>')['<col1>'].sum()"


def test_unlisted_literals_and_data_like_numbers_are_replaced_but_code_options_kept():
    text = ("could not convert 'Gold Plus' for customer 100234 paid 99.95; "
            "pd.merge(a, b, how='left'); s.astype('float'); x.resample('ME'); axis=1, n=10; can't parse it")
    out = anonymize(text, [], [])
    assert "Gold Plus" not in out and "100234" not in out and "99.95" not in out
    assert "how='left'" in out and "astype('float')" in out and "resample('ME')" in out
    assert "axis=1" in out and "n=10" in out and "can't parse it" in out


def test_longer_names_win_and_words_inside_identifiers_are_kept():
    out = anonymize("Price and Unit Price ($) differ; UnitPriceError and price_list stay", ["Price", "Unit Price ($)"], [])
    assert out == "<col1> and <col2> differ; UnitPriceError and price_list stay"


def test_single_characters_and_empty_input():
    assert anonymize("", ["a"], ["b"]) == ""
    assert anonymize("sex is M or F", [], ["M", "F"]) == "sex is M or F"
