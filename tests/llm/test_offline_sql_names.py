"""Database table names that are not Python names, asked offline (issue 23's testers): a space, an SQL keyword, quotes.

The session calls ``order items`` ``order_items`` (a name scripts and the user can write); every query the offline
model writes names the database's table, quoted by sqlglot, and a message names the session's table.
"""

from __future__ import annotations

import sqlite3

import pandas as pd
import pytest

from auto_analyst import Analyst, Settings
from auto_analyst.agents.environment import script_environment

ITEMS = pd.DataFrame({"item": ["a", "b", "c", "a", "b"], "order_id": [1, 1, 2, 3, 3],
                      "price": [1.0, 2.0, 3.0, 4.0, 5.5]})
ORDERS = pd.DataFrame({"order_id": [1, 2, 3], "region": ["North", "South", "North"]})


def _db(tmp_path, frames: dict[str, pd.DataFrame]) -> str:
    con = sqlite3.connect(tmp_path / "names.db")
    for name, frame in frames.items():
        frame.to_sql(name, con, index=False)
    con.close()
    return f"sqlite:///{tmp_path / 'names.db'}"


@pytest.mark.parametrize("name, quoted", [("order items", '"order items"'), ("order", '"order"'),
                                          ('o"rders', '"o""rders"'), ("o'rders", '"o\'rders"')])
def test_a_table_named_with_a_space_a_keyword_or_a_quote_is_answered(tmp_path, name, quoted):
    with Analyst(settings=Settings.load({"home": tmp_path / "home"}, environ={})) as analyst:
        s = analyst.session()
        s.load(_db(tmp_path, {name: ITEMS}))
        total = s.ask("What is the total price?")
        by_item = s.ask("What is the total price by item?")
    assert total.status == "ok", total.answer
    assert total.tables[0].rows[0][0] == pytest.approx(ITEMS["price"].sum())
    assert f"FROM {quoted}" in total.code.replace("\\'", "'"), total.code
    assert by_item.status == "ok", by_item.answer
    assert {r[0]: r[1] for r in by_item.tables[0].rows} == pytest.approx(ITEMS.groupby("item")["price"].sum().to_dict())


def test_two_tables_with_spaces_join_and_check_their_key_by_the_database_names(tmp_path):
    url = _db(tmp_path, {"order items": ITEMS, "all orders": ORDERS})
    with Analyst(settings=Settings.load({"home": tmp_path / "home"}, environ={})) as analyst:
        s = analyst.session()
        s.load(url)
        assert set(s.tables) == {"order_items", "all_orders"}
        s.use("order_items")
        r = s.ask("What is the total price by region?")
    assert r.status == "ok", r.answer
    want = ITEMS.merge(ORDERS, on="order_id").groupby("region")["price"].sum().to_dict()
    assert {row[0]: row[1] for row in r.tables[0].rows} == pytest.approx(want)
    assert 'FROM "order items") AS "order items" LEFT JOIN "all orders" ON "order items"."order_id" = ' \
        '"all orders"."order_id"' in r.code
    assert 'count(DISTINCT "order_id") AS k FROM "all orders"' in r.code  # the key check reads the database's table
    # the message a repeated key would give names the table as the session does
    assert "all_orders.order_id repeats in the database" in r.code


def test_the_models_environment_says_the_database_name_of_a_renamed_table():
    source = {"kind": "sql", "dialect": "sqlite", "tables": ["order_items", "orders"], "max_rows": 10,
              "names": {"order_items": "order items"}}
    env = script_environment(["order_items", "orders"], "orders", sql_source=source)
    assert 'order_items (named \\"order items\\" in SQL), orders' in env
    # SQLite's text in number columns (tests/llm/test_offline_sql_storage.py): the model is told how to leave it out
    assert "typeof(col) IN ('integer', 'real')" in env


def test_the_description_maps_session_names_to_database_names_only_where_they_differ(tmp_path):
    url = _db(tmp_path, {"order items": ITEMS, "orders": ORDERS})
    with Analyst(settings=Settings.load({"home": tmp_path / "home"}, environ={})) as analyst:
        s = analyst.session()
        s.load(url)
        source = s.description.source
        # the model path's own SQL with the database's name passes the read-only check and runs
        rows = s.source.query('SELECT count(*) AS n FROM "order items"')
    assert source["names"] == {"order_items": "order items"}
    assert int(rows["n"].iloc[0]) == len(ITEMS)


@pytest.mark.services
def test_postgresql_tables_named_with_a_space_and_a_keyword_join_offline(tmp_path):
    import uuid

    from sqlalchemy import create_engine, text

    from tests.services import service_url

    url = service_url("database")
    schema = f"aa_names_{uuid.uuid4().hex[:8]}"
    admin = create_engine(url.replace("postgresql://", "postgresql+psycopg://", 1))
    with admin.begin() as c:
        c.execute(text(f"CREATE SCHEMA {schema}"))
    try:
        ITEMS.to_sql("order items", admin, schema=schema, index=False)
        ORDERS.to_sql("order", admin, schema=schema, index=False)
        with Analyst(settings=Settings.load({"home": tmp_path / "home"}, environ={})) as analyst:
            s = analyst.session()
            s.load(f"{url}?options=-csearch_path%3D{schema}")
            s.use("order_items")
            r = s.ask("What is the total price by region?")
        assert r.status == "ok", r.answer
        want = ITEMS.merge(ORDERS, on="order_id").groupby("region")["price"].sum().to_dict()
        assert {row[0]: row[1] for row in r.tables[0].rows} == pytest.approx(want)
        assert 'FROM "order items" LEFT JOIN "order"' in r.code
    finally:
        with admin.begin() as c:
            c.execute(text(f"DROP SCHEMA {schema} CASCADE"))
        admin.dispose()
