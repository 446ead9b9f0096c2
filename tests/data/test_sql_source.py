"""A SQL database as a source: described from catalog + sample, queried read-only from scripts via sql()."""

from __future__ import annotations

import sqlite3
import uuid
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from auto_analyst import Analyst
from auto_analyst.data.sql_check import SqlRefused, check_read_only
from auto_analyst.data.sql_source import SqlQueryError, SqlSource
from auto_analyst.sql_runs import literal_queries
from tests.services import service_url

JOIN = ("SELECT c.region, round(sum(o.amount), 2) AS total FROM orders o JOIN customers c "
        "ON o.customer_id = c.customer_id GROUP BY c.region ORDER BY c.region")


def shop_frames() -> tuple[pd.DataFrame, pd.DataFrame]:
    rng = np.random.default_rng(11)
    customers = pd.DataFrame({"customer_id": np.arange(1, 41), "region": rng.choice(["East", "North", "South"], 40)})
    orders = pd.DataFrame({"order_id": np.arange(1, 201), "customer_id": rng.integers(1, 41, 200),
                           "amount": rng.gamma(2.0, 20.0, 200).round(2)})
    return orders, customers


def truth(orders: pd.DataFrame, customers: pd.DataFrame) -> dict[str, float]:
    by = orders.merge(customers, on="customer_id").groupby("region")["amount"].sum().round(2)
    return {k: float(v) for k, v in by.items()}


@pytest.fixture
def shop_db(tmp_path) -> tuple[str, dict[str, float]]:
    orders, customers = shop_frames()
    path = tmp_path / "shop.db"
    con = sqlite3.connect(path)
    con.execute("CREATE TABLE customers (customer_id INTEGER PRIMARY KEY, region TEXT)")
    con.execute("CREATE TABLE orders (order_id INTEGER PRIMARY KEY, "
                "customer_id INTEGER REFERENCES customers(customer_id), amount REAL)")
    con.executemany("INSERT INTO customers VALUES (?, ?)", [(int(a), b) for a, b in customers.itertuples(index=False)])
    con.executemany("INSERT INTO orders VALUES (?, ?, ?)",
                    [(int(a), int(b), float(c)) for a, b, c in orders.itertuples(index=False)])
    con.commit()
    con.close()
    return f"sqlite:///{path}", truth(orders, customers)


@pytest.mark.parametrize("query", [
    "DELETE FROM orders", "DROP TABLE orders", "UPDATE orders SET amount = 0", "INSERT INTO orders VALUES (1, 1, 1)",
    "SELECT 1; DELETE FROM orders", "SELECT * INTO copy FROM orders", "WITH d AS (DELETE FROM orders RETURNING *) SELECT * FROM d",
    "SELECT * FROM orders FOR UPDATE", "COPY orders TO '/tmp/x.csv'", "SELECT pg_read_file('/etc/passwd')",
    "SELECT * FROM read_csv('/etc/passwd')", "SELECT nextval('s')", "PRAGMA writable_schema = 1", "", "SELEC 1 FROM"])
def test_read_only_check_refuses(query):
    with pytest.raises(SqlRefused):
        check_read_only(query, "postgres")


def test_read_only_check_keeps_selects():
    assert check_read_only("WITH t AS (SELECT 1 AS x) SELECT x FROM t;  ", "postgres") == "WITH t AS (SELECT 1 AS x) SELECT x FROM t"
    assert check_read_only("SELECT a FROM x UNION ALL SELECT b FROM y", "sqlite")
    assert check_read_only(JOIN, "duckdb") == JOIN


def test_queries_are_read_from_the_script_text():
    code = ('Q = "SELECT 1 AS a"\nx = sql(Q)\ny = sql("SELECT " + "2 AS b;")\nz = sql(f"SELECT 3")\n'
            'for t in ["a", "b"]:\n    w = sql(f"SELECT * FROM {t}")\n')
    assert literal_queries(code) == ["SELECT 1 AS a", "SELECT 2 AS b", "SELECT 3"]  # the loop's query is not readable


def test_sqlite_source_describes_from_catalog_and_links_by_foreign_key(shop_db):
    url, _ = shop_db
    s = Analyst().session()
    loaded = s.connect(url)
    assert [t.name for t in loaded] == ["customers", "orders"]
    desc = s.description
    assert desc.source["dialect"] == "sqlite" and desc.source["tables"] == ["customers", "orders"]
    orders = desc.table("orders")
    assert orders.n_rows == 200 and "values described from all 200 rows" in orders.load_notes
    [rel] = desc.relationships
    assert (rel.left, rel.right, rel.kind, rel.checked_on) == ("orders", "customers", "many-to-one", "catalog") or \
        (rel.left, rel.right, rel.kind_from("orders"), rel.checked_on) == ("customers", "orders", "many-to-one", "catalog")
    assert len(s.tables["orders"].frame) == 200 and list(s.tables["orders"].frame.head(2).columns) == \
        ["order_id", "customer_id", "amount"]


def test_script_reads_the_database_with_sql_and_a_delete_changes_nothing(shop_db):
    url, want = shop_db
    s = Analyst().session()
    s.connect(url)
    try:
        r = s.run_code(f"by_region = sql({JOIN!r})\nshow(by_region, name='total by region')\n"
                       "show(round(float(by_region['total'].sum()), 2), name='all')")
        assert r.status == "ok", r.error
        table = r.tables[0]
        assert {row[0]: row[1] for row in table.rows} == want
        # a model reply that deletes is refused before anything runs; the table keeps its rows
        bad = s.run_code("sql('DELETE FROM orders')\nshow(1)")
        assert bad.status == "error" and bad.attempts[0].error.kind == "sql_refused" and "DELETE" in bad.error.message
        assert bad.stdout == "" and not bad.tables
        assert sqlite3.connect(url.removeprefix("sqlite:///")).execute("SELECT count(*) FROM orders").fetchone() == (200,)
        # a query made at run time cannot be read from the text: one clear sentence
        dyn = s.run_code("t = 'orders'\nfor name in [t]:\n    x = sql('SELECT count(*) AS n FROM ' + name)")
        assert dyn.status == "error" and "written out as one string" in dyn.error.message
    finally:
        s.close()


def test_a_big_table_is_described_from_its_first_rows_only(shop_db, monkeypatch):
    import auto_analyst.data.sql_source as sql_source

    monkeypatch.setattr(sql_source, "SAMPLE_ROWS", 50)
    url, _ = shop_db
    src = SqlSource(url)
    desc, facts = src.describe("orders")
    assert desc.n_rows == 200 and len(facts["sample"]) == 50
    assert any("first 50 rows (a sample)" in n for n in desc.load_notes)
    src.close()


def test_row_cap_and_database_errors_are_one_sentence(shop_db):
    url, _ = shop_db
    src = SqlSource(url, max_rows=50)
    with pytest.raises(SqlQueryError, match="more than 50 rows"):
        src.query("SELECT * FROM orders")
    assert len(src.query("SELECT * FROM orders LIMIT 50")) == 50
    with pytest.raises(SqlQueryError, match="no such column"):
        src.query("SELECT nope FROM orders")
    src.close()


def test_timeout_stops_a_long_query(shop_db):
    url, _ = shop_db
    src = SqlSource(url, timeout_s=0.5)
    slow = ("WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 100000000) "
            "SELECT count(*) FROM n")
    with pytest.raises(SqlQueryError, match="limit"):
        src.query(slow)
    src.close()


def test_duckdb_file_is_a_source(tmp_path):
    duckdb = pytest.importorskip("duckdb")
    pytest.importorskip("duckdb_engine")
    orders, customers = shop_frames()
    path = tmp_path / "shop.duckdb"
    con = duckdb.connect(str(path))
    con.register("o", orders)
    con.register("c", customers)
    con.execute("CREATE TABLE orders AS SELECT * FROM o")
    con.execute("CREATE TABLE customers AS SELECT * FROM c")
    con.close()
    src = SqlSource(f"duckdb:///{path}")
    from auto_analyst.data.sql_source import load_sql_tables

    described = {t.name: t.description for t in load_sql_tables(src)}
    assert described["orders"].n_rows == 200 and [c.name for c in described["customers"].columns] == \
        ["customer_id", "region"]
    got = src.query(JOIN)
    assert dict(zip(got["region"], got["total"].astype(float))) == truth(orders, customers)
    with pytest.raises(SqlRefused):
        src.query("DROP TABLE orders")
    src.close()


@pytest.mark.services
def test_postgresql_source_joins_and_refuses_writes():
    url = service_url("database")
    orders, customers = shop_frames()
    schema = f"aa_src_{uuid.uuid4().hex[:8]}"
    from sqlalchemy import create_engine, text

    admin = create_engine(url.replace("postgresql://", "postgresql+psycopg://", 1))
    with admin.begin() as c:
        c.execute(text(f"CREATE SCHEMA {schema}"))
        c.execute(text(f"CREATE TABLE {schema}.customers (customer_id int PRIMARY KEY, region text)"))
        c.execute(text(f"CREATE TABLE {schema}.orders (order_id int PRIMARY KEY, customer_id int REFERENCES "
                       f"{schema}.customers(customer_id), amount numeric(10,2))"))
        c.execute(text(f"COMMENT ON COLUMN {schema}.orders.amount IS 'order total in euros, VAT included'"))
        # a function that writes: the parser cannot see inside it, the read-only transaction stops it
        c.execute(text(f"CREATE FUNCTION {schema}.wipe() RETURNS bigint LANGUAGE sql AS "
                       f"$$ DELETE FROM {schema}.orders RETURNING 1; SELECT 1::bigint $$"))
        c.execute(text(f"INSERT INTO {schema}.customers VALUES (:a, :b)"),
                  [{"a": int(a), "b": b} for a, b in customers.itertuples(index=False)])
        c.execute(text(f"INSERT INTO {schema}.orders VALUES (:a, :b, :c)"),
                  [{"a": int(a), "b": int(b), "c": float(x)} for a, b, x in orders.itertuples(index=False)])
    try:
        s = Analyst().session()
        s.connect(f"{url}?options=-csearch_path%3D{schema}")
        desc = s.description
        assert desc.source["dialect"] == "postgres"
        assert desc.table("orders").columns[2].meaning == "order total in euros, VAT included"
        assert [r.checked_on for r in desc.relationships] == ["catalog"]
        r = s.run_code(f"t = sql({JOIN!r})\nshow(t, name='by region')")
        assert r.status == "ok", r.error
        assert {row[0]: float(row[1]) for row in r.tables[0].rows} == truth(orders, customers)
        bad = s.run_code("sql('DELETE FROM orders')")
        assert bad.attempts[0].error.kind == "sql_refused"
        # past the parser (a function that deletes), the transaction is read-only
        wiped = s.run_code("sql('SELECT wipe() AS n')")
        assert wiped.attempts[0].error.kind == "sql_error" and "read-only transaction" in wiped.error.message
        s.close()
        with admin.connect() as c:
            assert c.execute(text(f"SELECT count(*) FROM {schema}.orders")).scalar() == 200
    finally:
        with admin.begin() as c:
            c.execute(text(f"DROP SCHEMA {schema} CASCADE"))
        admin.dispose()


def test_parquet_folder_with_hive_partitions_is_read_in_place(tmp_path):
    pytest.importorskip("duckdb_engine")
    orders, customers = shop_frames()
    frame = orders.merge(customers, on="customer_id")
    frame.to_parquet(tmp_path / "sales", partition_cols=["region"], index=False)
    s = Analyst().session()
    try:
        [t] = s.load(tmp_path / "sales")
        assert t.name == "sales" and s.description.source["dialect"] == "duckdb"
        assert "region" in [c.name for c in s.description.table("sales").columns]  # the partition key is a column
        r = s.run_code("t = sql('SELECT region, round(sum(amount), 2) AS total FROM sales GROUP BY region "
                       "ORDER BY region')\nshow(t, name='total')")
        assert r.status == "ok", r.error
        assert {row[0]: row[1] for row in r.tables[0].rows} == truth(orders, customers)
        refused = s.run_code(f"sql(\"SELECT * FROM read_csv('{tmp_path}/x.csv')\")")
        assert refused.attempts[0].error.kind == "sql_refused"
    finally:
        s.close()


def test_cli_ask_a_database_url_and_chat_connect(shop_db, tmp_path):
    from click.testing import CliRunner

    from auto_analyst.cli import cli

    url, _ = shop_db
    runner = CliRunner()
    # the offline model computes the mean in the database; a median SQLite lacks is declined plainly (exit 3)
    orders, _ = shop_frames()
    r = runner.invoke(cli, ["ask", url, "What is the mean amount?", "--no-code"])
    assert r.exit_code == 0, r.output
    assert f"{orders['amount'].mean():.4f}" in r.stdout and "Traceback" not in r.output
    r = runner.invoke(cli, ["ask", url, "What is the median amount?", "--no-code"])
    assert r.exit_code == 3, r.output
    assert "sqlite has no median" in r.stdout and "Traceback" not in r.output
    r = runner.invoke(cli, ["chat", "--source", url], input="/tables\n")
    assert r.exit_code == 0, r.output
    assert f"orders: {url}#orders, 200 rows x 3 columns" in r.stdout
    r = runner.invoke(cli, ["chat"], input=f"/connect {url}\n/connect\n/connect sqlite:///{tmp_path}/none/x.db\n")
    assert "Loaded: customers (40 rows), orders (200 rows); active: customers" in r.stdout
    assert "Error: /connect needs a database URL" in r.stderr
    assert f"Error: No such sqlite database file: {tmp_path}/none/x.db" in r.stderr
    assert not (tmp_path / "none").exists()


@pytest.fixture
def saved_with_database(shop_db, tmp_path):
    """(analyst, id of a closed session that connected ``shop_db`` and loaded a data dictionary, the db's URL and
    totals): what the resume tests reopen."""
    url, want = shop_db
    doc = tmp_path / "notes.md"
    doc.write_text("- amount: order total in euros\n")
    analyst = Analyst()
    s = analyst.session()
    s.connect(url)
    s.load(doc)
    s.save_state()
    s.close()
    return analyst, s.id, url, want


def test_resume_reconnects_the_database_and_the_dictionary_without_storing_a_password(saved_with_database):
    analyst, sid, _, want = saved_with_database
    again = analyst.resume(sid)
    assert list(again.tables) == ["customers", "orders"] and again.source is not None
    assert again.description.table("orders").columns[2].meaning == "order total in euros"
    r = again.run_code(f"show(sql({JOIN!r}), name='t')")
    assert {row[0]: row[1] for row in r.tables[0].rows} == want
    again.close()


def test_a_password_never_reaches_the_description_or_messages():
    # without psycopg the message is the missing-driver sentence, which never holds the URL to check here
    pytest.importorskip("psycopg", reason="psycopg is in the scale extra: pip install -e '.[scale]'")
    from auto_analyst.data.sql_source import _engine_url

    u = _engine_url("postgresql://me:s3cret@127.0.0.1:1/db")
    assert u.drivername == "postgresql+psycopg" and u.password == "s3cret"
    from auto_analyst.errors import DataLoadError

    with pytest.raises(DataLoadError) as err:
        SqlSource("postgresql://me:s3cret@127.0.0.1:1/db")
    assert "s3cret" not in str(err.value) and "postgresql+psycopg://me@127.0.0.1:1/db" in str(err.value)


def test_a_model_reply_that_deletes_is_refused_the_fixer_is_told_and_nothing_changes(shop_db, tmp_path):
    import json

    from auto_analyst.config import Settings
    from tests.scripted import ANALYST, ANSWER, ERROR_SUMMARY, FIXER, PLANNER, SUMMARY, scripted_lm

    url, want = shop_db
    step = [{"agent": "statistics", "instruction": "total by region", "uses": [], "creates": []}]
    lm, engine = scripted_lm({
        PLANNER: lambda p: {"intent": "analysis", "standalone_question": p.inputs["goal"], "plan": step,
                            "assumptions": [], "decline_reason": ""},
        ANALYST: lambda p: {"code": "sql('DELETE FROM orders')\nx = sql('SELECT count(*) AS n FROM orders')\nshow(x)",
                            "summary": "cleans first"},
        # the fixer is told why; its script reads only
        FIXER: lambda p: {"fixed_script": f"t = sql({JOIN!r})\nshow(t, name='total by region')",
                          "explanation": "only SELECT runs"},
        ANSWER: lambda p: {"answer": "Totals by region."},
        SUMMARY: lambda p: {"summary": "totals"},
        ERROR_SUMMARY: lambda p: {"summary": "use SELECT only"},
    })
    with Analyst(settings=Settings.load({"home": tmp_path / "home"}), lm=lm) as analyst:
        s = analyst.session()
        s.connect(url)
        r = s.ask("What is the total order amount by customer region?")
        s.settle()
        read = s.memory.items[-1].tables  # follow-ups know which tables the turn read, from its SQL
    assert r.status == "ok", r.answer
    assert read == ["customers", "orders"]
    assert r.attempts[0].error.kind == "sql_refused" and "DELETE" in r.attempts[0].error.message
    fixer = engine.calls(FIXER)[0]
    assert "Only a SELECT query runs" in fixer.inputs["error"]
    assert {row[0]: row[1] for row in r.tables[0].rows} == want
    env = json.loads(engine.calls(ANALYST)[0].inputs["environment"])
    assert "sql" in env["preloaded"] and "sqlite" in env["preloaded"]["sql"] and "orders" not in env["preloaded"]
    assert sqlite3.connect(url.removeprefix("sqlite:///")).execute("SELECT count(*) FROM orders").fetchone() == (200,)



def test_an_exported_script_reads_the_database_with_its_own_sql(shop_db, tmp_path):
    import subprocess
    import sys

    from auto_analyst.export import export_script

    url, want = shop_db
    s = Analyst().session()
    s.connect(url)
    assert s.run_code(f"t = sql({JOIN!r})\nshow(t, name='total by region')").status == "ok"
    script = export_script(s)
    s.close()
    assert "def sql(query)" in script and "read_table(HERE / 'shop.db" not in script
    path = tmp_path / "analysis.py"
    path.write_text(script)
    out = subprocess.run([sys.executable, str(path)], capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    for region, total in want.items():
        assert region in out.stdout and f"{total}" in out.stdout


def test_resume_leaves_out_a_database_it_cannot_reach(saved_with_database, tmp_path):
    analyst, sid, url, _ = saved_with_database
    Path(url.removeprefix("sqlite:///")).rename(tmp_path / "moved.db")
    again = analyst.resume(sid)  # the dictionary comes back; the database is left out, no error
    assert again.tables == {} and again.dictionary is not None


def test_a_mistyped_database_scheme_says_which_schemes_work(tmp_path):
    from click.testing import CliRunner

    from auto_analyst.cli import cli

    r = CliRunner().invoke(cli, ["ask", "sqlte:///shop.db", "mean amount"], env={"AUTO_ANALYST_HOME": str(tmp_path)})
    assert r.exit_code == 2, r.output
    assert "'sqlte://' is not a database this reads" in r.stderr and "sqlite://" in r.stderr


def test_a_file_url_with_two_slashes_and_a_web_address_say_what_to_write(tmp_path):
    from click.testing import CliRunner

    from auto_analyst.cli import cli

    env = {"AUTO_ANALYST_HOME": str(tmp_path)}
    r = CliRunner().invoke(cli, ["ask", "sqlite://shop.db", "mean amount"], env=env)
    assert r.exit_code == 2, r.output
    assert "three slashes, sqlite:///shop.db" in r.stderr and "PGPASSWORD" not in r.stderr
    r = CliRunner().invoke(cli, ["ask", "https://example.com/data.csv", "mean amount"], env=env)
    assert r.exit_code == 2, r.output
    assert "download the file and give its path" in r.stderr and "not a database" not in r.stderr
