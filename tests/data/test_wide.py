"""Wide tables by retrieval: the columns a question names or resembles are described in full,
the rest as patterns with their types and ranges, and every column name stays listed."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from auto_analyst.data.description import DatasetDescription, describe_tables
from auto_analyst.data.retrieval import compact_names, expand_names, name_words, relevant_columns


def _plant(seed: int = 0) -> pd.DataFrame:
    """100 columns: 80 numbered sensors, a site, and 19 named measures."""
    rng = np.random.default_rng(seed)
    n = 60
    frame = pd.DataFrame({"site": rng.choice(["Berlin", "Oslo", "New York"], n)})
    for i in range(1, 81):
        frame[f"sensor_{i:02d}"] = rng.random(n).round(4)
    named = ["lineSpeed", "avg_temp_c", "operator_name", "shift_code", "total_output_kg", "reject_rate",
             "humidity_pct", "oilPressure", "vibration_rms", "motor_current_a", "belt_tension", "dust_level",
             "noise_db", "coolant_flow", "batch_size", "setup_minutes", "downtime_minutes", "energy_kwh",
             "maintenance_due"]
    for name in named:
        frame[name] = rng.integers(0, 500, n)
    frame["operator_name"] = rng.choice(["Ada", "Grace", "Linus"], n)
    return frame


def test_a_question_about_column_75_of_100_gets_that_column_in_full():
    frame = _plant()
    assert frame.shape[1] == 100
    d = describe_tables({"plant": frame}, question="What is the average of sensor 75?").table()
    assert d.matched_columns == ["sensor_75"]
    info = next(c for c in d.columns if c.name == "sensor_75")
    assert info.mean == pytest.approx(frame["sensor_75"].mean(), abs=1e-6)
    assert (info.min, info.max) == (frame["sensor_75"].min(), frame["sensor_75"].max())
    assert d.columns[0].name == "sensor_75"
    assert d.column_names() == [str(c) for c in frame.columns]


@pytest.mark.parametrize("question, expected", [
    ("mean sensor_07 by site", ["site", "sensor_07"]),  # equal evidence: table order
    ("compare Sensor75 with sensor 76", ["sensor_75", "sensor_76"]),
    ("average temprature per shift code", ["shift_code", "avg_temp_c"]),  # the exact name first
    ("line speed when oil pressure is high", ["lineSpeed", "oilPressure"]),
    ("how many batches did Grace run", ["operator_name"]),
    ("output in New York", ["site"]),
    ("how many rows are there", []),
])
def test_columns_found_by_name_words_resemblance_and_values(question, expected):
    assert relevant_columns(_plant(), question) == expected


def test_without_a_question_every_name_is_listed_and_patterns_carry_ranges():
    frame = _plant()
    d = describe_tables({"plant": frame}, "plant").table()
    assert d.matched_columns == []
    assert d.all_columns[:2] == ["site", "sensor_01..sensor_80"] and len(d.all_columns) == 21
    lo, hi = frame.filter(like="sensor_").min().min(), frame.filter(like="sensor_").max().max()
    assert d.column_patterns[0] == (f"numbered columns sensor_{{n}} 1..80 (80 numeric columns: float64, "
                                    f"{lo:.4g}..{hi:.4g}, no missing; e.g. 'sensor_01' … 'sensor_80')")
    assert [c.name for c in d.columns] == ["site"] + [c for c in frame.columns[81:]]
    text = describe_tables({"plant": frame}, "plant").to_prompt()
    back = DatasetDescription.from_prompt(text).table()
    assert back.column_names() == [str(c) for c in frame.columns]


def test_hundreds_of_unpatterned_columns_are_summarised_and_still_named():
    rng = np.random.default_rng(3)
    words = ["alpha", "bravo", "delta", "echo", "foxtrot", "golf", "hotel", "india", "kilo", "lima", "mike",
             "oscar", "papa", "romeo", "sierra"]
    names = [f"{a}_{b}" for a in words for b in words if a != b][:150]
    frame = pd.DataFrame(rng.normal(size=(20, 150)).round(3), columns=names)
    target = names[120]
    d = describe_tables({"t": frame}, question=f"distribution of {target.replace('_', ' ')}").table()
    swapped = "_".join(reversed(target.split("_")))  # the same two words: it resembles the question too
    assert d.matched_columns == [target, swapped]
    assert len(d.columns) == 40 and d.columns[0].name == target
    assert d.column_patterns[-1].startswith("110 more columns not described one by one (float64, ")
    assert d.column_patterns[-1].endswith("; their names are in all_columns")
    assert d.column_names() == names
    assert len(describe_tables({"t": frame}).to_prompt()) < 12_000


def test_compact_names_round_trip():
    names = (["id"] + [f"x_{i}" for i in range(8, 13)] + ["a1b", "a2b", "q_01", "q_02", "q_03", "z_10", "z_9"]
             + [f"2024-03-{d:02d}" for d in range(1, 32)] + ["odd..name"])
    folded = compact_names(names)
    assert folded == ["id", "x_8..x_12", "a1b", "a2b", "q_01..q_03", "z_10", "z_9", "2024-03-01..2024-03-31",
                      "odd..name"]
    assert expand_names(folded) == names
    assert name_words("totalRevenue_2023-Q4") == ["total", "revenue", "2023", "q", "4"]
    assert name_words("HTTPServerError") == ["http", "server", "error"]


def test_narrow_tables_ignore_the_question():
    frame = pd.DataFrame({"a": [1, 2], "b": ["x", "y"]})
    with_q = describe_tables({"t": frame}, question="mean of a").to_prompt()
    assert with_q == describe_tables({"t": frame}).to_prompt()
    assert "all_columns" not in with_q and "matched_columns" not in with_q
