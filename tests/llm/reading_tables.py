"""Small generated tables with different vocabularies for the reading-table test (tests/llm/test_reading_table.py).

Each table has the kinds of names real files have: units in names (``temp_c``, ``distance_km``),
abbreviations (``rel_hum_pct``, ``qty``, ``systolic_bp``), camel and snake case (``Miles_per_Gallon``),
yes/no columns (``is_member``, ``storm``), id columns (``patient_id``) and several dates.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from auto_analyst.data.description import DatasetDescription, describe_tables


def _rng(seed: int) -> np.random.Generator:
    return np.random.default_rng(seed)


def shop(n: int = 120) -> pd.DataFrame:
    r = _rng(1)
    customers = [f"C{k:02d}" for k in range(40)]
    return pd.DataFrame({
        "order_id": np.arange(1, n + 1), "customer": r.choice(customers, n),
        "country": r.choice(["Germany", "France", "Spain", "Italy"], n),
        "signup_date": pd.Timestamp("2021-01-01") + pd.to_timedelta(r.integers(0, 900, n), unit="D"),
        "order_date": pd.Timestamp("2023-01-01") + pd.to_timedelta(r.integers(0, 700, n), unit="D"),
        "sales_eur": r.uniform(5, 500, n).round(2), "qty": r.integers(1, 12, n),
        "discount_pct": r.choice([0, 5, 10, 15], n), "is_member": r.random(n) < 0.4})


def weather(n: int = 150) -> pd.DataFrame:
    r = _rng(2)
    return pd.DataFrame({
        "station": r.choice(["Oslo", "Bergen", "Tromso"], n),
        "obs_date": pd.Timestamp("2023-01-01") + pd.to_timedelta(r.integers(0, 700, n), unit="D"),
        "temp_c": r.normal(7, 8, n).round(1), "rel_hum_pct": r.uniform(40, 100, n).round(1),
        "wind_kmh": r.gamma(2, 6, n).round(1), "precip_mm": r.exponential(3, n).round(1), "storm": r.random(n) < 0.05})


def cars(n: int = 100) -> pd.DataFrame:
    r = _rng(3)
    cyl = r.choice([4, 6, 8], n)
    return pd.DataFrame({
        "Name": [f"model {k}" for k in range(n)], "Miles_per_Gallon": r.normal(24, 6, n).round(1), "Cylinders": cyl,
        "Horsepower": (40 + 14 * cyl + r.normal(0, 10, n)).round(0), "Weight_in_lbs": (1800 + 450 * cyl).astype(float),
        "Acceleration": r.normal(15, 2, n).round(1),
        "Year": pd.to_datetime(r.choice(np.arange(1970, 1983), n).astype(str) + "-01-01"),
        "Origin": r.choice(["USA", "Europe", "Japan"], n)})


def clinic(n: int = 120) -> pd.DataFrame:
    r = _rng(4)
    return pd.DataFrame({
        "patient_id": [f"P{k:04d}" for k in range(n)],
        "admitted_on": pd.Timestamp("2022-01-01") + pd.to_timedelta(r.integers(0, 1000, n), unit="D"),
        "ward": r.choice(["Cardiology", "Oncology", "Surgery"], n), "age": r.integers(1, 95, n),
        "stay_days": r.integers(1, 30, n), "readmitted": r.random(n) < 0.2, "systolic_bp": r.normal(128, 15, n).round(0)})


def stocks(n: int = 150) -> pd.DataFrame:
    r = _rng(5)
    return pd.DataFrame({"symbol": r.choice(["AAPL", "MSFT", "IBM"], n),
                         "date": pd.Timestamp("2003-01-01") + pd.to_timedelta(r.integers(0, 2500, n), unit="D"),
                         "price": r.uniform(10, 200, n).round(2)})


def macro(n: int = 80) -> pd.DataFrame:
    r = _rng(6)
    dates = pd.date_range("1990-01-01", periods=n, freq="QS")
    return pd.DataFrame({"date": dates, "year": dates.year, "quarter": dates.quarter,
                         "realgdp": r.normal(9000, 500, n).round(1), "unemp": r.uniform(3, 10, n).round(1),
                         "infl": r.normal(3, 2, n).round(2), "tbilrate": r.uniform(0, 8, n).round(2)})


def sensors(n: int = 90) -> pd.DataFrame:
    """A logger's table: short upper-case names (one of them, AT, also an English word) and missing readings."""
    r = _rng(7)
    at = r.normal(12, 6, n).round(1)
    at[r.random(n) < 0.1] = np.nan
    return pd.DataFrame({"reading_time": pd.Timestamp("2024-01-01") + pd.to_timedelta(np.arange(n) * 6, unit="h"),
                         "site": r.choice(["North", "South"], n), "AT": at, "RH": r.uniform(30, 95, n).round(1)})


def staff(n: int = 80) -> pd.DataFrame:
    """People in a firm: the job title is a text column whose values the description does not list in full."""
    r = _rng(8)
    return pd.DataFrame({"employee_id": np.arange(1, n + 1), "job_title": [f"title {k}" for k in r.integers(0, 30, n)],
                         "department": r.choice(["Engineering", "Sales", "Marketing"], n),
                         "salary": r.normal(60000, 12000, n).round(0), "hired_on": pd.Timestamp("2015-01-01")
                         + pd.to_timedelta(r.integers(0, 3000, n), unit="D")})


def roles(n: int = 50) -> pd.DataFrame:
    """Visits to a club: the role's values are nouns the lexicon also knows as names of rows (student, member)."""
    r = _rng(11)
    return pd.DataFrame({"visit_id": np.arange(1, n + 1), "role": r.choice(["student", "member", "visitor"], n),
                         "fee": r.uniform(0, 40, n).round(2)})


def products(n: int = 60) -> pd.DataFrame:
    r = _rng(9)
    return pd.DataFrame({"model": [f"M{k:03d}" for k in range(n)], "brand": r.choice(["Acme", "Globex", "Initech"], n),
                         "price": r.uniform(5, 90, n).round(2), "weight_kg": r.uniform(0.2, 9, n).round(2)})


def nations(n: int = 30) -> pd.DataFrame:
    """One row per country: the text column is an identifier (every value distinct)."""
    r = _rng(10)
    return pd.DataFrame({"country": [f"Country {chr(65 + k // 26)}{chr(65 + k % 26)}" for k in range(n)],
                         "continent": r.choice(["Africa", "Asia", "Europe"], n),
                         "population": r.uniform(1, 200, n).round(1), "gdp_usd": r.uniform(1e9, 5e12, n).round(0)})


BUILDERS = {"shop": shop, "weather": weather, "cars": cars, "clinic": clinic, "stocks": stocks, "macro": macro,
            "sensors": sensors, "staff": staff, "roles": roles, "products": products, "nations": nations}


def descriptions() -> dict[str, DatasetDescription]:
    """Table name → a one-table dataset description."""
    return {name: describe_tables({name: build()}) for name, build in BUILDERS.items()}
