"""One STATISTICS table (issue 25 item 4): the reader, the code writer, canonical text and answer formats read it."""

from __future__ import annotations

import re

from auto_analyst.offline import pycode, spec
from auto_analyst.offline.reader import words
from auto_analyst.offline.statistics import BY_NAME, NAMES, NUMERIC_ONLY, STATISTICS
from auto_analyst.offline.templates import FUNC_TEXT


def test_every_part_of_the_model_reads_its_statistics_from_the_one_table():
    assert set(spec.FUNC_WORDS) == set(NAMES) and set(FUNC_TEXT.values()) == set(NAMES)
    assert {f for _, f in words.FUNC_PATTERNS} == {s.name for s in STATISTICS if s.pattern}
    assert all(pycode.FUNC_CALL[n] == BY_NAME[n].pandas for n in pycode.FUNC_CALL)
    assert "count" not in NUMERIC_ONLY and "mean" in NUMERIC_ONLY


def test_the_reading_order_puts_the_longer_phrase_first():
    def read(text):
        return next(f for p, f in words.FUNC_PATTERNS if re.search(p, text))

    assert read("the population standard deviation of x") == "std_pop"
    assert read("how many distinct cities") == "nunique"
    assert read("the standard deviation of x") == "std"
