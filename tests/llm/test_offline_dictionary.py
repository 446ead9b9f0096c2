"""The embedded model reads a column by the name the data dictionary gives it, and says so in its assumptions."""

from __future__ import annotations

import pandas as pd
import pytest

from auto_analyst.api import Analyst
from auto_analyst.config import Settings
from auto_analyst.offline.reader.vocabulary import meaning_name

SALES = pd.DataFrame({"branch": ["north", "south", "north", "east", "south", "east", "north"],
                      "v1": [120.0, 80.0, 200.0, 50.0, 60.0, 90.0, 30.0],
                      "v2": [100.0, 75.0, 180.0, 45.0, 20.0, 85.0, 25.0]})
DICTIONARY = ("# Sales export\n\n| column | meaning |\n|---|---|\n| branch | the store's branch |\n"
              "| v1 | gross amount before refunds |\n| v2 | net amount after refunds, in EUR |\n\n"
              "Rows with a negative v1 are corrections.\n")


@pytest.mark.parametrize("meaning, column, name", [
    ("net amount after refunds, in EUR", "v2", ("net", "amount")),
    ("the customer's key", "cust_id", ("customer", "key")),
    ("sales region of the store", "region", ("sales", "region")),
    ("Rows with a negative qty are refunds.", "qty", ()),  # a sentence that mentions the column names other things
    ("", "x", ()),
])
def test_the_name_a_meaning_gives(meaning, column, name):
    assert meaning_name(meaning, column) == name


def test_a_dictionary_name_reads_the_column_and_is_explained(tmp_path):
    (tmp_path / "sales.csv").write_text(SALES.to_csv(index=False))
    (tmp_path / "data_dictionary.md").write_text(DICTIONARY)
    with Analyst(settings=Settings.load({"home": tmp_path / "home"})) as analyst:
        s = analyst.session()
        s.load(str(tmp_path / "sales.csv"))
        s.load(str(tmp_path / "data_dictionary.md"))
        r = s.ask("What is the total net amount by branch?")
    assert r.status == "ok", r.answer
    got = {row[0]: row[1] for row in r.tables[0].rows}
    assert got == pytest.approx(SALES.groupby("branch")["v2"].sum().to_dict())
    assert any("data dictionary" in a and "`v2`" in a for a in r.trace.assumptions), r.trace.assumptions


def test_without_the_dictionary_the_same_words_are_not_guessed(tmp_path):
    (tmp_path / "sales.csv").write_text(SALES.to_csv(index=False))
    with Analyst(settings=Settings.load({"home": tmp_path / "home"})) as analyst:
        s = analyst.session()
        s.load(str(tmp_path / "sales.csv"))
        r = s.ask("What is the total net amount by branch?")
    assert r.status == "declined", r.answer
