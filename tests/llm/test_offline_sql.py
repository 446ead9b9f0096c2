"""The embedded offline model over a SQL database (issue 23): its specs compiled to SQL, read with ``sql("...")``.

The same tables loaded from files and from a SQLite file (and the PostgreSQL test database when it runs) answer the
common kinds of question with the same values; what it cannot compute in the database is declined by name; tables
linked through a middle table are joined when the path is the only one, declined naming the tables otherwise.
"""

from __future__ import annotations

import sqlite3
import uuid

import pandas as pd
import pytest

from auto_analyst import Analyst, Settings
from tests.llm.test_offline_new_kind import hives
from tests.services import service_url
from tests.sources_cases import shop_frames, shown_values

QUESTIONS = [
    "What is the average honey_kg by apiary?",                                      # grouped aggregate
    "What is the total honey_kg?",                                                  # aggregate
    "How many hives in the Orchard apiary have a colony strength above 8?",         # filter, count
    "Which 3 hives have the most honey?",                                           # top N rows
    "Which apiary has the highest total honey_kg?",                                 # the group with the highest
    "Which 2 apiaries have the highest average varroa_per_100_bees?",               # top N groups
    "How many hives are there by apiary?",                                          # count by group
    "What is the maximum colony_strength for hives in the Heath apiary?",           # filter, aggregate
    "What is the total honey_kg by apiary for colony_strength above 6?",            # grouped, filtered
    "Which hive has the lowest varroa_per_100_bees?",                               # top 1, ties listed
]


def _frames() -> dict[str, pd.DataFrame]:
    return {"hives": hives().drop(columns=["queen_marked"]), **shop_frames()}


def _sqlite(path) -> str:
    con = sqlite3.connect(path)
    for name, frame in _frames().items():
        frame.to_sql(name, con, index=False)
    con.close()
    return f"sqlite:///{path}"


def _ask(tmp_path, name: str, questions: list[str], url: str | None = None, active: str = "hives") -> dict:
    with Analyst(settings=Settings.load({"home": tmp_path / name}, environ={})) as analyst:
        s = analyst.session()
        if url:
            s.load(url)
        else:
            for table, frame in _frames().items():
                s.add_frame(table, frame)
        s.use(active)
        out = {}
        for q in questions:
            out[q] = s.ask(q)
            s.settle()
        return out


@pytest.fixture(scope="module")
def from_files(tmp_path_factory):
    return _ask(tmp_path_factory.mktemp("files"), "home", QUESTIONS)


def _same_answers(files: dict, db: dict) -> None:
    for q in QUESTIONS:
        f, d = files[q], db[q]
        assert f.status == "ok", (q, f.answer)
        assert d.status == "ok", (q, d.answer)
        assert "sql(" in d.code and "tables[" not in d.code, (q, d.code)
        assert sorted(shown_values(d)) == sorted(shown_values(f)), (q, d.tables, f.tables)
        assert [t.columns for t in d.tables] == [t.columns for t in f.tables], q


def test_sqlite_answers_the_common_kinds_with_the_values_the_files_give(from_files, tmp_path):
    db = _ask(tmp_path, "db", QUESTIONS, _sqlite(tmp_path / "shop.db"))
    _same_answers(from_files, db)
    df = hives()
    got = {row[0]: row[1] for row in db[QUESTIONS[0]].tables[0].rows}
    assert got == pytest.approx(df.groupby("apiary")["honey_kg"].mean().to_dict())
    assert [row[0] for row in db[QUESTIONS[3]].tables[0].rows] == list(df.nlargest(3, "honey_kg")["hive_id"])


@pytest.mark.services
def test_postgresql_answers_the_common_kinds_with_the_values_the_files_give(from_files, tmp_path):
    from sqlalchemy import create_engine, text

    url = service_url("database")
    schema = f"aa_off_{uuid.uuid4().hex[:8]}"
    admin = create_engine(url.replace("postgresql://", "postgresql+psycopg://", 1))
    with admin.begin() as c:
        c.execute(text(f"CREATE SCHEMA {schema}"))
    try:
        for name, frame in _frames().items():
            frame.to_sql(name, admin, schema=schema, index=False)
        db = _ask(tmp_path, "pg", QUESTIONS, f"{url}?options=-csearch_path%3D{schema}")
        _same_answers(from_files, db)
    finally:
        with admin.begin() as c:
            c.execute(text(f"DROP SCHEMA {schema} CASCADE"))
        admin.dispose()


def test_what_it_cannot_compute_in_the_database_is_declined_by_name(tmp_path):
    qs = ["What is the median honey_kg?", "Is colony strength correlated with honey_kg?",
          "What is the average honey_kg? What is the median colony_strength?"]
    db = _ask(tmp_path, "db", qs, _sqlite(tmp_path / "shop.db"))
    median, corr, part = (db[q] for q in qs)
    assert median.status == "declined" and "median of honey_kg" in median.answer and "sqlite" in median.answer
    assert corr.status == "declined" and "needs every row" in corr.answer and "correlation" in corr.answer
    # the part it can compute is answered, the other named as not answered
    assert part.status == "ok" and part.tables[0].rows[0][0] == pytest.approx(hives()["honey_kg"].mean())
    assert "not answered" in part.answer and "median of colony_strength" in part.answer, part.answer


SHOP_QUESTIONS = ["What is the average amount by region name?", "How many orders are there by region_name?",
                  "What is the total amount by region_name for amount above 40?"]


def _shop_truth() -> dict[str, dict]:
    f = shop_frames()
    j = f["orders"].merge(f["customers"], on="customer_id").merge(f["regions"], on="region_id")
    return {SHOP_QUESTIONS[0]: j.groupby("region_name")["amount"].mean().to_dict(),
            SHOP_QUESTIONS[1]: j.groupby("region_name").size().to_dict(),
            SHOP_QUESTIONS[2]: j[j["amount"] > 40].groupby("region_name")["amount"].sum().to_dict()}


@pytest.mark.parametrize("where", ["files", "sqlite"])
def test_three_tables_join_through_the_middle_table(tmp_path, where):
    url = _sqlite(tmp_path / "shop.db") if where == "sqlite" else None
    got = _ask(tmp_path, where, SHOP_QUESTIONS, url, active="orders")
    for q, want in _shop_truth().items():
        r = got[q]
        assert r.status == "ok", (q, r.answer)
        assert {row[0]: row[1] for row in r.tables[0].rows} == pytest.approx(want), q
        said = " ".join(r.trace.assumptions)
        assert "orders.customer_id = customers.customer_id" in said and "customers.region_id = regions.region_id" in said
    if where == "sqlite":
        assert "LEFT JOIN" in got[SHOP_QUESTIONS[0]].code


def test_order_items_orders_customers_and_rows_without_a_match(tmp_path):
    items = pd.DataFrame({"item_id": range(1, 11), "order_id": [1, 1, 2, 3, 3, 3, 4, 5, 6, 9],
                          "price": [5.0, 7.5, 10.0, 2.5, 2.5, 4.0, 8.0, 1.0, 3.0, 6.0]})
    orders = pd.DataFrame({"order_id": [1, 2, 3, 4, 5, 6], "customer_id": [10, 11, 10, 12, 13, 11]})
    customers = pd.DataFrame({"customer_id": [10, 11, 12], "segment": ["retail", "trade", "retail"]})
    truth = items.merge(orders, on="order_id", how="left").merge(customers, on="customer_id", how="left")
    truth = truth.fillna({"segment": "(no match)"}).groupby("segment")["price"].sum().to_dict()
    con = sqlite3.connect(tmp_path / "items.db")
    for name, frame in {"order_items": items, "orders": orders, "customers": customers}.items():
        frame.to_sql(name, con, index=False)
    con.close()
    q = "What is the total price by customer segment?"
    for url in (None, f"sqlite:///{tmp_path / 'items.db'}"):
        with Analyst(settings=Settings.load({"home": tmp_path / ("db" if url else "files")}, environ={})) as analyst:
            s = analyst.session()
            if url:
                s.load(url)
            else:
                for name, frame in {"order_items": items, "orders": orders, "customers": customers}.items():
                    s.add_frame(name, frame)
            s.use("order_items")
            r = s.ask(q)
        assert r.status == "ok", r.answer
        # order 9 has no order row, order 5's customer 13 no customer row: both in '(no match)', the groups add up
        assert {row[0]: row[1] for row in r.tables[0].rows} == pytest.approx(truth)
    assert truth == {"retail": 29.5, "trade": 13.0, "(no match)": 7.0}


def test_two_paths_through_different_middle_tables_decline_naming_them(tmp_path):
    orders = pd.DataFrame({"order_id": range(1, 7), "customer_id": [1, 2, 3, 1, 2, 3], "shop_id": [7, 8, 7, 8, 7, 8],
                           "amount": [10.0, 20.0, 30.0, 40.0, 50.0, 60.0]})
    customers = pd.DataFrame({"customer_id": [1, 2, 3], "zone_id": [100, 200, 100]})
    shops = pd.DataFrame({"shop_id": [7, 8], "zone_id": [100, 200]})
    zones = pd.DataFrame({"zone_id": [100, 200], "zone_name": ["Inner", "Outer"]})
    with Analyst(settings=Settings.load({"home": tmp_path}, environ={})) as analyst:
        s = analyst.session()
        for name, frame in {"orders": orders, "customers": customers, "shops": shops, "zones": zones}.items():
            s.add_frame(name, frame)
        s.use("orders")
        r = s.ask("What is the total amount by zone_name?")
    # the customer's zone or the shop's zone: two answers, so none
    assert r.status == "declined", r.answer
    assert "customers" in r.answer and "shops" in r.answer and "several ways" in r.answer, r.answer


def test_a_path_that_repeats_rows_declines_saying_so(tmp_path):
    orders = pd.DataFrame({"order_id": range(1, 7), "customer_id": [1, 2, 3, 1, 2, 3], "product_id": [7, 8, 7, 8, 7, 8],
                           "amount": [10.0, 20.0, 30.0, 40.0, 50.0, 60.0]})
    customers = pd.DataFrame({"customer_id": [1, 2, 3], "age": [30, 40, 50]})
    products = pd.DataFrame({"product_id": [7, 8], "category": ["Toys", "Books"]})
    with Analyst(settings=Settings.load({"home": tmp_path}, environ={})) as analyst:
        s = analyst.session()
        for name, frame in {"orders": orders, "customers": customers, "products": products}.items():
            s.add_frame(name, frame)
        s.use("customers")
        r = s.ask("What is the average age by category?")
    # customers → orders repeats each customer once per order: an average age per category would weigh them so
    assert r.status == "declined" and "repeats" in r.answer and "customers" in r.answer, r.answer


DATED = ["What is the total amount by month?", "What is the average amount by store in 2023?",
         "How many sales were there by quarter?", "What is the average amount per week?",
         "What is the total amount in March 2023?", "Which store has the highest total amount in 2023?",
         "What is the total amount by month of the year?"]


def test_dates_kept_as_text_in_sqlite_group_and_filter_as_in_files(tmp_path):
    import numpy as np

    rng = np.random.default_rng(3)
    n = 300
    sales = pd.DataFrame({"sale_id": range(n), "store": rng.choice(["Uptown", "Harbor", "Mall"], n),
                          "day": pd.Timestamp("2022-11-01") + pd.to_timedelta(rng.integers(0, 400, n), unit="D"),
                          "amount": rng.gamma(2, 30, n).round(2)})
    con = sqlite3.connect(tmp_path / "sales.db")
    sales.to_sql("sales", con, index=False)  # SQLite has no date type: the days are ISO text there
    con.close()
    got = {}
    for where in ("files", "db"):
        with Analyst(settings=Settings.load({"home": tmp_path / where}, environ={})) as analyst:
            s = analyst.session()
            s.add_frame("sales", sales) if where == "files" else s.load(f"sqlite:///{tmp_path / 'sales.db'}")
            got[where] = {q: s.ask(q) for q in DATED}
    for q in DATED:
        f, d = got["files"][q], got["db"][q]
        assert f.status == d.status == "ok", (q, f.answer, d.answer)
        assert sorted(shown_values(d)) == sorted(shown_values(f)), q
    monthly = {row[0]: row[1] for row in got["db"][DATED[0]].tables[0].rows}
    assert monthly == pytest.approx(sales.groupby(sales["day"].dt.strftime("%Y-%m"))["amount"].sum().to_dict())


def test_a_file_table_joined_to_a_database_table_is_declined_saying_so(tmp_path):
    f = shop_frames()
    con = sqlite3.connect(tmp_path / "orders.db")
    f["orders"].to_sql("orders", con, index=False)
    con.close()
    customers = f["customers"].merge(f["regions"], on="region_id")[["customer_id", "region_name"]]
    with Analyst(settings=Settings.load({"home": tmp_path / "home"}, environ={})) as analyst:
        s = analyst.session()
        s.load(f"sqlite:///{tmp_path / 'orders.db'}")
        s.add_frame("customers", customers)
        s.use("orders")
        r = s.ask("What is the total amount by region_name?")
    assert r.status == "declined" and "customers" in r.answer and "loaded file" in r.answer, r.answer


def test_a_number_compared_with_a_text_column_of_the_database_is_declined(tmp_path):
    con = sqlite3.connect(tmp_path / "t.db")
    con.execute("CREATE TABLE items (name TEXT, price TEXT)")  # SQLite would compare '250' > 100 as text
    con.executemany("INSERT INTO items VALUES (?, ?)", [(f"i{i}", str([5, 12.5, 99, 100, 250, 1000][i % 6])) for i in range(30)])
    con.commit()
    con.close()
    with Analyst(settings=Settings.load({"home": tmp_path / "home"}, environ={})) as analyst:
        s = analyst.session()
        s.load(f"sqlite:///{tmp_path / 't.db'}")
        r = s.ask("how many items where price is greater than 100")
    # declined naming the column before any SQL is written (reader/comparable.py; sqlcode.py checks it too)
    assert r.status == "declined" and "`price` holds text" in r.answer


def test_a_join_key_that_repeats_past_the_sample_stops_the_run_instead_of_counting_twice(tmp_path):
    con = sqlite3.connect(tmp_path / "j.db")
    con.execute("CREATE TABLE customers (customer_id INTEGER, region TEXT)")
    con.executemany("INSERT INTO customers VALUES (?, ?)", [(c, "NS"[c % 2]) for c in range(1, 1001)]
                    + [(c, "West") for c in range(1, 101)])  # ids 1..100 again, after the first 1000 rows
    con.execute("CREATE TABLE orders (order_id INTEGER, customer_id INTEGER, amount REAL)")
    con.executemany("INSERT INTO orders VALUES (?, ?, ?)", [(o, 1 + o % 1000, 10.0) for o in range(3000)])
    con.commit()
    con.close()
    with Analyst(settings=Settings.load({"home": tmp_path / "home"}, environ={})) as analyst:
        s = analyst.session()
        s.load(f"sqlite:///{tmp_path / 'j.db'}")
        s.use("orders")
        r = s.ask("total amount by region")
    assert r.status != "ok" and "West" not in (r.answer or "")
    # the first 1000 rows (the sample) made both keys look unique; the run checks them in the database
    assert "customer_id repeats in the database" in (r.answer or "") + str(r.error)
