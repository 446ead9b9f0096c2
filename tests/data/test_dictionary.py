"""The data dictionary: each column's meaning, and the passages a question is about when the document is long."""

from __future__ import annotations

import pandas as pd

from auto_analyst.data.catalog import describe_session, for_question
from auto_analyst.data.dictionary import BUDGET_CHARS, DataDictionary, is_dictionary_file

FILLER = ("This section is kept for completeness; it repeats the rules of the payment network in force since the "
          "last revision and applies to every merchant equally. ")


def manual() -> str:
    """A long manual (DABstep style): many sections, two of which are about the question asked below."""
    parts = ["# Merchant manual", ""]
    for k in range(12):
        parts += [f"## Network rule {k}", FILLER * 3, ""]
    parts += ["## Account types", "",
              "- account_type: the merchant's account class. R = Enterprise Retail, D = Enterprise Digital, "
              "H = Hospitality, F = Platform Franchise.", "",
              "## Fraud", "", "A transaction is fraudulent when has_fraudulent_dispute is True; the fraud rate is the "
              "share of such transactions in the volume of the account.", ""]
    for k in range(12, 20):
        parts += [f"## Network rule {k}", FILLER * 3, ""]
    return "\n".join(parts)


def test_dictionary_files_are_told_apart_from_tables(tmp_path):
    assert is_dictionary_file("manual.md") and is_dictionary_file("data_dictionary.txt")
    assert is_dictionary_file("README.txt") and not is_dictionary_file("sales.txt") and not is_dictionary_file("a.csv")


def test_meanings_from_table_rows_list_items_and_plain_lines():
    d = DataDictionary("| column | meaning |\n|---|---|\n| amt | order total in EUR |\n"
                       "- cust_id: the customer's key\nregion = sales region of the store\n"
                       "Rows with a negative qty are refunds.\n")
    assert d.meaning_of("amt") == "order total in EUR"
    assert d.meaning_of("cust_id") == "the customer's key"
    assert d.meaning_of("region") == "sales region of the store"
    assert d.meaning_of("qty") == "Rows with a negative qty are refunds."
    assert d.meaning_of("unknown_col") == ""


def test_a_long_manual_gives_only_the_passages_the_question_is_about():
    d = DataDictionary(manual())
    assert len(d.text) > 3 * BUDGET_CHARS
    got = d.passages("What is the fraud rate for each account type?")
    text = " ".join(got)
    assert "account_type: the merchant's account class" in text and "has_fraudulent_dispute" in text
    assert sum(len(p) for p in got) <= BUDGET_CHARS + 100
    assert "Network rule" not in text or len(got) < 6  # the filler sections do not crowd out the relevant ones
    assert d.passages("zzz qqq") == []


def test_the_description_carries_meanings_and_passages():
    frame = pd.DataFrame({"account_type": ["R", "D", "H"], "has_fraudulent_dispute": [True, False, False],
                          "eur_amount": [10.0, 20.0, 30.0]})
    d = DataDictionary(manual())
    desc = describe_session({"payments": frame}, "payments", d)
    cols = {c.name: c.meaning for c in desc.table("payments").columns}
    assert cols["account_type"].startswith("the merchant's account class")
    assert desc.dictionary == []  # passages depend on the question
    q = for_question(desc, "fraud rate by account type", d)
    assert q.dictionary and "has_fraudulent_dispute" in " ".join(q.dictionary)
    assert "account_type: the merchant" in q.to_prompt()
