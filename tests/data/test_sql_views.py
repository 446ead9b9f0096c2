"""A view that is one of the database's tables under another name is not offered as a second table (issue 23's
testers: ``CREATE VIEW v AS SELECT * FROM t`` beside ``t`` left every column in two tables, so nothing was answered
offline); any other view is a table of its own and stays."""

from __future__ import annotations

import sqlite3
import uuid

import pandas as pd
import pytest

from auto_analyst import Analyst, Settings
from auto_analyst.data.sql_views import mirrored_table
from tests.services import service_url

SALES = pd.DataFrame({"item": ["a", "b", "c", "a"], "price": [1.0, 2.0, 3.0, 4.0]})
TABLES = {"sales": ["item", "price"], "other": ["x"]}


@pytest.mark.parametrize("dialect, definition, table", [
    ("sqlite", "CREATE VIEW v AS SELECT * FROM sales", "sales"),
    ("postgres", " SELECT sales.item,\n    sales.price\n   FROM sales;", "sales"),  # how PostgreSQL stores SELECT *
    ("duckdb", "CREATE VIEW v AS SELECT * FROM sales;", "sales"),
    ("sqlite", "CREATE VIEW v AS SELECT item, price FROM sales", "sales"),
    ("sqlite", "CREATE VIEW v AS SELECT * FROM sales WHERE price > 1", None),
    ("sqlite", "CREATE VIEW v AS SELECT item FROM sales", None),
    ("sqlite", "CREATE VIEW v AS SELECT item, price AS cost FROM sales", None),
    ("sqlite", "CREATE VIEW v AS SELECT price, item FROM sales", None),
    ("sqlite", "CREATE VIEW v AS SELECT DISTINCT * FROM sales", None),
    ("sqlite", "CREATE VIEW v AS SELECT * FROM sales JOIN other ON 1 = 1", None),
    ("sqlite", "CREATE VIEW v AS SELECT * FROM sales LIMIT 3", None),
    ("sqlite", "CREATE VIEW v AS SELECT * FROM sales UNION ALL SELECT * FROM sales", None),
    ("postgres", "SELECT * FROM archive.sales", None),  # another schema's table of the same name
    ("sqlite", "not SQL ((", None),
    # a star with a modifier, a sample, a column list on the view: other values, rows or names
    ("duckdb", "CREATE VIEW v AS SELECT * REPLACE ((price * 2) AS price) FROM sales;", None),
    ("duckdb", "CREATE VIEW v AS SELECT * EXCLUDE (item) FROM sales;", None),
    ("duckdb", "CREATE VIEW v AS SELECT * RENAME (price AS cost) FROM sales;", None),
    ("duckdb", "CREATE VIEW v AS SELECT COLUMNS(*) FROM sales;", None),
    ("duckdb", "CREATE VIEW v AS SELECT * FROM sales TABLESAMPLE System(10.0 PERCENT);", None),
    ("duckdb", "CREATE VIEW v AS SELECT * FROM sales USING SAMPLE 10%;", None),
    ("sqlite", "CREATE VIEW v (item, cost) AS SELECT * FROM sales", None),
    ("sqlite", "CREATE VIEW v AS SELECT * FROM sales AS s (item, cost)", None),
    ("sqlite", "CREATE VIEW v AS SELECT * FROM sales ORDER BY price", None),
])
def test_a_view_is_its_tables_rows_only_when_it_reads_every_column_unchanged(dialect, definition, table):
    assert mirrored_table(definition, dialect, TABLES, schemas=("public", "main")) == table


def test_a_view_whose_catalog_columns_differ_is_not_a_mirror():
    # PostgreSQL keeps CREATE VIEW v (a, b) AS SELECT * FROM sales as SELECT sales.item, sales.price: only the
    # catalog's columns of the view say they were renamed
    stored = " SELECT sales.item,\n    sales.price\n   FROM sales;"
    assert mirrored_table(stored, "postgres", TABLES, ("public",), view_columns=["a", "b"]) is None
    assert mirrored_table(stored, "postgres", TABLES, ("public",), view_columns=["item", "price"]) == "sales"


def _ask(tmp_path, url: str, tables: list[str] | None = None):
    with Analyst(settings=Settings.load({"home": tmp_path / "home"}, environ={})) as analyst:
        s = analyst.session()
        s.connect(url, tables) if tables else s.load(url)
        r = s.ask("What is the total price by item?")
        return list(s.tables), s.tables["sales"].report.warnings if "sales" in s.tables else [], r


def test_a_select_star_view_beside_its_table_is_not_a_second_table_and_the_question_is_answered(tmp_path):
    con = sqlite3.connect(tmp_path / "v.db")
    SALES.to_sql("sales", con, index=False)
    con.execute("CREATE VIEW sales_v AS SELECT * FROM sales")
    con.execute("CREATE VIEW big_sales AS SELECT * FROM sales WHERE price > 1.5")  # other rows: a table of its own
    con.commit()
    con.close()
    names, warnings, r = _ask(tmp_path, f"sqlite:///{tmp_path / 'v.db'}")
    assert names == ["sales", "big_sales"]
    assert any("the view 'sales_v' is this table's rows under another name" in w for w in warnings), warnings
    assert r.status == "ok", r.answer
    assert {row[0]: row[1] for row in r.tables[0].rows} == pytest.approx(SALES.groupby("item")["price"].sum().to_dict())


def test_a_view_named_on_purpose_is_loaded(tmp_path):
    con = sqlite3.connect(tmp_path / "v.db")
    SALES.to_sql("sales", con, index=False)
    con.execute("CREATE VIEW sales_v AS SELECT * FROM sales")
    con.close()
    with Analyst(settings=Settings.load({"home": tmp_path / "home"}, environ={})) as analyst:
        s = analyst.session()
        s.connect(f"sqlite:///{tmp_path / 'v.db'}", ["sales_v"])
        assert list(s.tables) == ["sales_v"]


def test_duckdb_select_star_view_is_not_a_second_table(tmp_path):
    duckdb = pytest.importorskip("duckdb")
    con = duckdb.connect(str(tmp_path / "v.duckdb"))
    con.execute("CREATE TABLE sales AS SELECT * FROM SALES")
    con.execute("CREATE VIEW sales_v AS SELECT * FROM sales")
    con.close()
    names, warnings, r = _ask(tmp_path, f"duckdb:///{tmp_path / 'v.duckdb'}")
    assert names == ["sales"] and warnings and r.status == "ok", (names, r.answer)


@pytest.mark.services
def test_postgresql_select_star_view_is_not_a_second_table(tmp_path):
    from sqlalchemy import create_engine, text

    url = service_url("database")
    schema = f"aa_view_{uuid.uuid4().hex[:8]}"
    admin = create_engine(url.replace("postgresql://", "postgresql+psycopg://", 1))
    with admin.begin() as c:
        c.execute(text(f"CREATE SCHEMA {schema}"))
    try:
        SALES.to_sql("sales", admin, schema=schema, index=False)
        with admin.begin() as c:
            c.execute(text(f"CREATE VIEW {schema}.sales_v AS SELECT * FROM {schema}.sales"))
        names, warnings, r = _ask(tmp_path, f"{url}?options=-csearch_path%3D{schema}")
        assert names == ["sales"] and warnings, names
        assert r.status == "ok", r.answer
        assert {row[0]: row[1] for row in r.tables[0].rows} == pytest.approx(SALES.groupby("item")["price"].sum().to_dict())
    finally:
        with admin.begin() as c:
            c.execute(text(f"DROP SCHEMA {schema} CASCADE"))
        admin.dispose()


def test_duckdb_and_sqlite_views_that_change_columns_or_rows_are_tables_of_their_own(tmp_path):
    duckdb = pytest.importorskip("duckdb")
    con = duckdb.connect(str(tmp_path / "g.duckdb"))
    con.execute("CREATE TABLE sales AS SELECT * FROM SALES")
    for view, body in [("doubled", "SELECT * REPLACE (price * 2 AS price) FROM sales"),
                       ("no_item", "SELECT * EXCLUDE (item) FROM sales"),
                       ("sampled", "SELECT * FROM sales TABLESAMPLE 10%"),
                       ("renamed (thing, cost)", "SELECT * FROM sales"),
                       ("all_sales", "SELECT * FROM sales")]:
        con.execute(f"CREATE VIEW {view} AS {body}")
    con.close()
    with Analyst(settings=Settings.load({"home": tmp_path / "home"}, environ={})) as analyst:
        s = analyst.session()
        s.load(f"duckdb:///{tmp_path / 'g.duckdb'}")
        assert sorted(s.tables) == ["doubled", "no_item", "renamed", "sales", "sampled"], list(s.tables)
        assert any("the view 'all_sales'" in w for w in s.tables["sales"].report.warnings)
        assert s.tables["doubled"].frame.sample()["price"].tolist() == (2 * SALES["price"]).tolist()
    lite = sqlite3.connect(tmp_path / "r.db")
    SALES.to_sql("sales", lite, index=False)
    lite.execute("CREATE VIEW renamed (thing, cost) AS SELECT * FROM sales")
    lite.commit()
    lite.close()
    names, _, _ = _ask(tmp_path / "lite", f"sqlite:///{tmp_path / 'r.db'}")
    assert names == ["sales", "renamed"], names


def test_a_question_naming_a_mirror_view_is_answered_from_its_table_saying_so(tmp_path):
    con = sqlite3.connect(tmp_path / "m.db")
    SALES.to_sql("sales", con, index=False)
    pd.DataFrame({"product": ["x", "y"], "weight": [100.0, 200.0]}).to_sql("parcels", con, index=False)
    con.execute("CREATE VIEW all_sales AS SELECT * FROM sales")
    con.execute("CREATE VIEW parcel_list AS SELECT * FROM parcels")
    con.commit()
    con.close()
    with Analyst(settings=Settings.load({"home": tmp_path / "home"}, environ={})) as analyst:
        s = analyst.session()
        s.load(f"sqlite:///{tmp_path / 'm.db'}")
        assert sorted(s.tables) == ["parcels", "sales"]
        for question, table, total in [("What is the total price in all_sales?", "sales", SALES["price"].sum()),
                                       ("total weight of parcel_list", "parcels", 300.0)]:
            r = s.ask(question)
            assert r.status == "ok" and r.tables[0].rows[0][0] == pytest.approx(total), (question, r.answer)
            view = question.split()[-1].rstrip("?")
            assert f"'{view}' is a view of the database showing table '{table}' unchanged" in r.answer, r.answer
