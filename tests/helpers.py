"""Helpers for tests: generated tables and reading values out of a Result."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from auto_analyst.results import Result

REPO = Path(__file__).resolve().parents[1]


def sales_table(seed: int = 0, n: int = 400) -> pd.DataFrame:
    """A sales table with dates over 2022-2024, four regions, three categories and a few missing prices."""
    rng = np.random.default_rng(seed)
    dates = pd.Timestamp("2022-01-01") + pd.to_timedelta(rng.integers(0, 3 * 365, n), unit="D")
    df = pd.DataFrame({
        "order_date": dates,
        "region": rng.choice(["North", "South", "East", "West"], n),
        "category": rng.choice(["Garden", "Kitchen", "Tools"], n),
        "units": rng.integers(1, 20, n),
        "price": rng.normal(50, 12, n).round(2),
    })
    df["revenue"] = (df["units"] * df["price"]).round(2)
    df.loc[rng.choice(n, 7, replace=False), "price"] = np.nan
    return df


def value(result: Result, name: str):
    """The single value the script showed under ``name`` (case-insensitive)."""
    for t in result.tables:
        if _same(t.name, name):
            assert t.columns == ["value"], t
            return t.rows[0][0]
    raise AssertionError(f"no value {name!r}; shown: {[t.name for t in result.tables]}\n{result.answer}\n{result.code}")


def table(result: Result, name: str) -> pd.DataFrame:
    for t in result.tables:
        if _same(t.name, name):
            return pd.DataFrame(t.rows, columns=t.columns)
    raise AssertionError(f"no table {name!r}; shown: {[t.name for t in result.tables]}\n{result.answer}\n{result.code}")


def _same(shown: str, wanted: str) -> bool:
    """Names match, ignoring case and the filters said after them: 'total revenue (region = North)'."""
    shown, wanted = shown.lower(), wanted.lower()
    return shown == wanted or shown.split(" (")[0] == wanted


def seeded_sessions(tmp_path_factory, name: str, build, seeds):
    """One session per generated table (questions in one session are turns of one conversation).

    Yields {seed: Session} with table ``f"{name}{seed}"`` = ``build(seed)``; closes them afterwards.
    """
    from auto_analyst import Analyst, Settings

    analyst = Analyst(settings=Settings.load({"home": tmp_path_factory.mktemp("home")}))
    sessions = {}
    for seed in seeds:
        sessions[seed] = analyst.session()
        sessions[seed].add_frame(f"{name}{seed}", build(seed))
    yield sessions
    analyst.close()


def ask_checked(sessions, key, question: str, status: str = "ok") -> Result:
    """Ask ``question`` in ``sessions[key]``; the status must match and no answer number may be unsupported."""
    r = sessions[key].ask(question)
    assert r.status == status, (question, r.status, r.answer, r.error, r.code)
    assert r.trace.unsupported_numbers == [], (r.answer, r.trace.unsupported_numbers)
    return r
