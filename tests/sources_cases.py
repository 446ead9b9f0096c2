"""Questions over several tables, a database and a data dictionary, with their true answers (from pandas).

Each case writes its material into a folder, names what a session loads (files, a database URL), asks one
question, and computes the values a right answer shows. ``benchmarks/record_sources.py`` records a model's
answers to them (``tests/recordings/sources_<id>.json``); ``tests/data/test_sources_recorded.py`` replays them.
"""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

__all__ = ["Case", "CASES", "shop_frames", "says_unanswerable", "file_and_sqlite_answers"]


def shop_frames(seed: int = 23) -> dict[str, pd.DataFrame]:
    rng = np.random.default_rng(seed)
    regions = pd.DataFrame({"region_id": [1, 2, 3], "region_name": ["East", "North", "South"]})
    customers = pd.DataFrame({"customer_id": np.arange(101, 161), "region_id": rng.integers(1, 4, 60)})
    orders = pd.DataFrame({"order_id": np.arange(1, 241), "customer_id": rng.integers(101, 161, 240),
                           "amount": rng.gamma(2.0, 22.0, 240).round(2)})
    return {"orders": orders, "customers": customers, "regions": regions}


@dataclass
class Case:
    """One recorded question: ``build(folder) -> (sources to load, expected {label: value})``; ``declines``: the
    right answer is none (the question cannot be answered from the tables), said plainly (:func:`says_unanswerable`)."""

    id: str
    question: str
    build: Callable[[Path], tuple[list[str], dict[str, float]]]
    declines: bool = False


def _two_files(folder: Path) -> tuple[list[str], dict[str, float]]:
    f = shop_frames()
    customers = f["customers"].merge(f["regions"], on="region_id")[["customer_id", "region_name"]]
    customers = customers.rename(columns={"region_name": "region"})
    f["orders"].to_csv(folder / "orders.csv", index=False)
    customers.to_csv(folder / "customers.csv", index=False)
    want = f["orders"].merge(customers, on="customer_id").groupby("region")["amount"].sum().round(2)
    return [str(folder / "orders.csv"), str(folder / "customers.csv")], {str(k): float(v) for k, v in want.items()}


def _three_in_sqlite(folder: Path) -> tuple[list[str], dict[str, float]]:
    f = shop_frames()
    path = folder / "shop.db"
    con = sqlite3.connect(path)
    con.execute("CREATE TABLE regions (region_id INTEGER PRIMARY KEY, region_name TEXT)")
    con.execute("CREATE TABLE customers (customer_id INTEGER PRIMARY KEY, region_id INTEGER)")
    con.execute("CREATE TABLE orders (order_id INTEGER PRIMARY KEY, customer_id INTEGER, amount REAL)")
    for name in ("regions", "customers", "orders"):  # no declared foreign keys: the keys are found on the data
        rows = [tuple(v.item() if hasattr(v, "item") else v for v in r) for r in f[name].itertuples(index=False)]
        con.executemany(f"INSERT INTO {name} VALUES ({', '.join('?' * f[name].shape[1])})", rows)
    con.commit()
    con.close()
    joined = f["orders"].merge(f["customers"], on="customer_id").merge(f["regions"], on="region_id")
    want = joined.groupby("region_name")["amount"].mean().round(2)
    return [f"sqlite:///{path}"], {str(k): float(v) for k, v in want.items()}


DICTIONARY = """# Sales extract: data dictionary

The extract comes from the till system, one row per receipt line.

| column | meaning |
|---|---|
| rc_id | receipt id |
| br | branch code: N = North, S = South, W = West |
| v1 | gross amount in EUR, VAT included |
| v2 | net amount in EUR, excluding VAT |
| q | quantity of items |

Amounts are rounded to the cent. Refunds are separate receipts with negative quantities.
"""


def _dictionary(folder: Path) -> tuple[list[str], dict[str, float]]:
    rng = np.random.default_rng(31)
    n = 150
    net = rng.gamma(2.0, 15.0, n).round(2)
    frame = pd.DataFrame({"rc_id": np.arange(5001, 5001 + n), "br": rng.choice(["N", "S", "W"], n),
                          "v1": (net * 1.2).round(2), "v2": net, "q": rng.integers(1, 6, n)})
    frame.to_csv(folder / "sales.csv", index=False)
    (folder / "data_dictionary.md").write_text(DICTIONARY)
    want = frame.groupby("br")["v2"].sum().round(2)
    return [str(folder / "sales.csv"), str(folder / "data_dictionary.md")], {str(k): float(v) for k, v in want.items()}


def _unlinked(folder: Path) -> tuple[list[str], dict[str, float]]:
    """Orders and regional targets: no column links an order to a region, so 'amount by region' has no answer."""
    f = shop_frames()
    f["orders"].to_csv(folder / "orders.csv", index=False)
    pd.DataFrame({"region": ["East", "North", "South"], "target": [4000.0, 3500.0, 3000.0]}).to_csv(
        folder / "targets.csv", index=False)
    return [str(folder / "orders.csv"), str(folder / "targets.csv")], {}


UNANSWERABLE = re.compile(r"no (?:common |shared |matching )?(?:key|column|field|link|relationship)|not linked|"
                          r"no way to (?:join|link|relate|connect)|cannot (?:be )?(?:join|link|relat|connect|map|attribut)|"
                          r"can't (?:be )?(?:join|link|relat|connect|map|attribut)|does not (?:have|contain|include) (?:a |any )?"
                          r"(?:region|key|link)|do not share|don't share|no region", re.I)


def says_unanswerable(result) -> bool:
    """The product declined, or answered saying the tables cannot be linked, without a table by the asked group."""
    grouped = any("region" in [str(c).lower() for c in t.columns] for t in result.tables)
    return (result.status == "declined" and bool(result.answer.strip())) or \
        (bool(UNANSWERABLE.search(result.answer or "")) and not grouped)


CASES = [
    Case("sources_two_files_join", "What is the total order amount by customer region?", _two_files),
    Case("sources_sqlite_three_tables", "What is the average order amount by region name?", _three_in_sqlite),
    Case("sources_dictionary", "What is the total amount excluding VAT for each branch?", _dictionary),
    Case("sources_unlinked_tables", "What is the total order amount by region?", _unlinked, declines=True),
]


def shown_values(result) -> list[float]:
    """Every number a Result showed (its tables' cells and values), rounded to 2 decimals."""
    out = []
    for t in result.tables:
        for row in t.rows:
            for v in row:
                try:
                    out.append(round(float(v), 2))
                except (TypeError, ValueError):
                    pass
    return out


def file_and_sqlite_answers(folder: Path, table: str, columns: dict[str, str], rows: list[tuple],
                            questions: list[str]) -> dict[str, dict]:
    """The offline answers to ``questions`` over the same ``rows`` as a CSV file and as a SQLite table.

    ``columns``: name -> declared SQLite type, in order. Returns ``{"file": {q: Result}, "db": {q: Result}}``; each
    side in its own home, so no memory crosses between them.
    """
    from auto_analyst import Analyst, Settings

    con = sqlite3.connect(folder / "t.db")
    con.execute(f"CREATE TABLE {table} ({', '.join(f'{c} {t}' for c, t in columns.items())})")
    con.executemany(f"INSERT INTO {table} VALUES ({', '.join('?' * len(columns))})", rows)
    con.commit()
    con.close()
    pd.DataFrame(rows, columns=list(columns)).to_csv(folder / f"{table}.csv", index=False)
    out: dict[str, dict] = {}
    for where in ("file", "db"):
        with Analyst(settings=Settings.load({"home": folder / where}, environ={})) as analyst:
            s = analyst.session()
            s.load(str(folder / f"{table}.csv") if where == "file" else f"sqlite:///{folder / 't.db'}")
            out[where] = {q: s.ask(q) for q in questions}
    return out
