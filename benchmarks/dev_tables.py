"""Tables for the offline model's development questions (benchmarks/bench_offline_dev.py).

Three public tables the project ships or installs (statsmodels' state crime data, scikit-learn's wine
data, the bundled US macro data) and five generated ones, each with its own vocabulary (units in
column names, abbreviations, yes/no columns, id columns, dates).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

REPO = Path(__file__).resolve().parents[1]


def statecrime() -> pd.DataFrame:
    import statsmodels.api as sm

    return sm.datasets.statecrime.load_pandas().data.reset_index()


def wine() -> pd.DataFrame:
    from sklearn.datasets import load_wine

    return load_wine(as_frame=True).frame


def us_macro() -> pd.DataFrame:
    return pd.read_csv(REPO / "datasets" / "us_macro.csv", parse_dates=["date"])


def trips(seed: int = 0, n: int = 600) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    start = pd.Timestamp("2024-01-01") + pd.to_timedelta(rng.integers(0, 180 * 24 * 60, n), unit="min")
    distance = rng.gamma(2.0, 3.0, n).round(2)
    return pd.DataFrame({
        "trip_id": [f"T{100000 + i}" for i in range(n)],
        "pickup_time": start,
        "borough": rng.choice(["Manhattan", "Brooklyn", "Queens", "Bronx"], n, p=[0.4, 0.25, 0.25, 0.1]),
        "distance_km": distance,
        "fare_usd": (3 + 1.7 * distance + rng.normal(0, 2, n)).round(2).clip(3),
        "tip_usd": rng.exponential(2.0, n).round(2),
        "payment_type": rng.choice(["card", "cash"], n, p=[0.7, 0.3]),
        "passenger_count": rng.integers(1, 5, n),
        "is_airport": rng.random(n) < 0.15,
    })


def patients(seed: int = 1, n: int = 500) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    return pd.DataFrame({
        "patient_id": [f"P{seed}{i:04d}" for i in range(n)],
        "admitted_on": pd.Timestamp("2022-01-01") + pd.to_timedelta(rng.integers(0, 3 * 365, n), unit="D"),
        "ward": rng.choice(["Cardiology", "Oncology", "Surgery", "Pediatrics"], n),
        "age": rng.integers(1, 95, n),
        "stay_days": rng.integers(1, 30, n),
        "readmitted": rng.random(n) < 0.2,
        "systolic_bp": rng.normal(128, 15, n).round(0),
    })


def weather(seed: int = 2) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    days = pd.date_range("2023-01-01", "2024-12-31", freq="D")
    rows = []
    for station, base in (("Oslo", 6.0), ("Bergen", 8.0), ("Tromso", 2.0)):
        season = 10 * np.sin((days.dayofyear - 100) / 365 * 2 * np.pi)
        rows.append(pd.DataFrame({
            "station": station, "obs_date": days,
            "temp_c": (base + season + rng.normal(0, 3, len(days))).round(1),
            "rel_hum_pct": rng.uniform(40, 100, len(days)).round(1),
            "wind_kmh": rng.gamma(2, 6 if station != "Tromso" else 8, len(days)).round(1),
            "precip_mm": np.where(rng.random(len(days)) < 0.4, rng.exponential(4, len(days)), 0).round(1),
            "storm": rng.random(len(days)) < 0.03}))
    return pd.concat(rows, ignore_index=True)


def orders(seed: int = 3, n: int = 800) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    customers = [f"C{k:03d}" for k in range(120)]
    signup = dict(zip(customers, pd.Timestamp("2021-01-01") + pd.to_timedelta(rng.integers(0, 3 * 365, 120), unit="D")))
    cust = rng.choice(customers, n)
    qty = rng.integers(1, 12, n)
    return pd.DataFrame({
        "order_id": np.arange(1, n + 1),
        "customer": cust,
        "country": rng.choice(["Germany", "France", "Spain", "Italy"], n),
        "signup_date": [signup[c] for c in cust],
        "order_date": pd.Timestamp("2023-01-01") + pd.to_timedelta(rng.integers(0, 730, n), unit="D"),
        "sales_eur": (qty * rng.uniform(5, 60, n)).round(2),
        "qty": qty,
        "discount_pct": rng.choice([0, 5, 10, 15], n),
        "is_member": rng.random(n) < 0.35,
    })


def cars(seed: int = 4, n: int = 300) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    cyl = rng.choice([4, 6, 8], n, p=[0.5, 0.25, 0.25])
    weight = (1800 + 450 * cyl + rng.normal(0, 300, n)).round(0)
    return pd.DataFrame({
        "Name": [f"model {k}" for k in range(n)],
        "Miles_per_Gallon": (48 - weight / 160 + rng.normal(0, 2.5, n)).round(1),
        "Cylinders": cyl,
        "Horsepower": (40 + 14 * cyl + rng.normal(0, 12, n)).round(0),
        "Weight_in_lbs": weight,
        "Acceleration": rng.normal(15.5, 2.5, n).round(1),
        "Year": pd.to_datetime(rng.choice(np.arange(1970, 1983), n).astype(str) + "-01-01"),
        "Origin": rng.choice(["USA", "Europe", "Japan"], n, p=[0.6, 0.2, 0.2]),
    })


TABLES = {"statecrime": statecrime, "wine": wine, "us_macro": us_macro, "trips": trips, "patients": patients,
          "weather": weather, "orders": orders, "cars": cars}
