"""The walls around a SQL source found by a security review: SQL run from a string (PostgreSQL's query_to_xml with
dblink), files read as tables (DuckDB's ``FROM '/path'``), secrets in a URL's query string, and unbounded work
(queries per script, bytes per result)."""

from __future__ import annotations

import sqlite3
import uuid

import pytest

from auto_analyst import Analyst
from auto_analyst.data.sql_check import SqlRefused, check_read_only
from auto_analyst.data.sql_source import SqlQueryError, SqlSource, _engine_url, safe_url
from auto_analyst.errors import DataLoadError
from auto_analyst.sql_runs import MAX_QUERIES, SqlSandbox
from tests.services import service_url

DELETE_VIA_DBLINK = ("SELECT query_to_xml('SELECT dblink_exec(''host=127.0.0.1 dbname=shop user=postgres'', "
                     "''DELETE FROM orders'') AS r', true, true, '') AS x")


@pytest.mark.parametrize("query", [
    DELETE_VIA_DBLINK,
    "SELECT query_to_xml('DELETE FROM orders RETURNING *', true, true, '')",
    "SELECT pg_catalog.query_to_xml('SELECT 1', true, true, '')",
    "SELECT \"query_to_xml\"('SELECT 1', true, true, '')",
    "SELECT query_to_xml_and_xmlschema('SELECT 1', true, true, '')",
    "SELECT query_to_xmlschema('SELECT 1', true, true, '')",
    "SELECT cursor_to_xml('c', 1, true, true, '')",
    "SELECT table_to_xml('orders', true, true, '')",
    "SELECT schema_to_xml('public', true, true, '')",
    "SELECT database_to_xml(true, true, '')",
    "SELECT dblink_exec('dbname=shop', 'DELETE FROM orders')",
    "SELECT * FROM dblink('dbname=shop', 'SELECT 1') AS t(a int)",
    "SELECT dblink_connect('c', 'dbname=shop')",
    "SELECT lo_import('/etc/passwd')",
    "SELECT pg_read_binary_file('/etc/passwd')",
    "SELECT pg_ls_dir('.')",
    "SELECT pg_stat_file('postgresql.conf')",
    "SELECT pg_file_write('x', 'y', false)",
    "SELECT set_config('default_transaction_read_only', 'off', false)",
    "SELECT current_setting('data_directory')",
    # an extension's function the list does not know, given a statement as a string
    "SELECT some_ext_run('DELETE FROM orders')",
])
def test_functions_that_run_sql_text_or_reach_outside_are_refused(query):
    with pytest.raises(SqlRefused) as err:
        check_read_only(query, "postgres")
    assert str(err.value).endswith(".") and "\n" not in str(err.value)


def test_string_values_that_merely_read_like_sql_are_kept():
    q = "SELECT lower('Select the best'), upper('delete me') AS s, 'set of items' AS t FROM orders"
    assert check_read_only(q, "postgres", tables=["orders"], schemas=("public",)) == q


@pytest.fixture
def duck_file(tmp_path):
    # duckdb is in the [scale] extra: without it this test skips and the file's other tests still run
    duckdb = pytest.importorskip("duckdb", reason="duckdb is in the scale extra: pip install -e '.[scale]'")
    path = tmp_path / "shop.duckdb"
    con = duckdb.connect(str(path))
    con.execute("CREATE TABLE orders (id INT, amount DOUBLE)")
    con.execute("INSERT INTO orders VALUES (1, 2.5), (2, 4.0)")
    con.close()
    secret = tmp_path / "secret.csv"
    secret.write_text("k,v\npassword,hunter2\n")
    (tmp_path / "secret.json").write_text('{"k": "hunter2"}')
    return path, tmp_path


def test_a_duckdb_source_reads_only_its_own_tables(duck_file):
    pytest.importorskip("duckdb_engine")
    path, folder = duck_file
    src = SqlSource(f"duckdb:///{path}")
    try:
        for q in [f"SELECT * FROM '{folder}/secret.csv'", f'SELECT * FROM "{folder}/secret.csv"',
                  f"FROM '{folder}/*.csv'", f"SELECT * FROM '{folder}/secret.json'",
                  f"SELECT * FROM '{path}'", f"SELECT * FROM orders UNION ALL SELECT * FROM '{folder}/secret.csv'",
                  f"SELECT * FROM '{folder}/secret.csv' AS x(a, b)", "SELECT * FROM other.main.orders",
                  "SELECT * FROM information_schema.tables", "SELECT * FROM duckdb_databases()",
                  f"SELECT * FROM system.main.read_csv('{folder}/secret.csv')"]:
            with pytest.raises(SqlRefused) as err:
                src.query(q)
            assert "hunter2" not in str(err.value)
        with pytest.raises(SqlRefused) as err:
            src.query(f"SELECT * FROM '{folder}/secret.csv'")
        assert "the tables are: orders." in str(err.value)
        # the source's own tables, qualified by its schema, a CTE and a number series still run
        q = "WITH o AS (SELECT * FROM main.orders) SELECT sum(amount) AS s FROM o, range(1)"
        assert src.query(q).iloc[0, 0] == 6.5
        # the second wall: the connection itself cannot reach a file, even for a query the check never saw
        from sqlalchemy import text

        with src.engine.connect() as conn, pytest.raises(Exception, match="disabled by configuration"):
            conn.execute(text(f"SELECT * FROM '{folder}/secret.csv'")).fetchall()
    finally:
        src.close()


def test_a_parquet_folder_source_reads_its_view_but_no_other_file(tmp_path):
    pytest.importorskip("duckdb_engine")
    import pandas as pd

    pd.DataFrame({"region": ["a", "b"], "amount": [1.0, 2.0]}).to_parquet(tmp_path / "sales", partition_cols=["region"])
    (tmp_path / "secret.csv").write_text("k\nhunter2\n")
    s = Analyst().session()
    try:
        s.load(tmp_path / "sales")
        ok = s.run_code("show(sql('SELECT sum(amount) AS s FROM sales'), name='s')")
        assert ok.status == "ok" and ok.tables[0].rows[0][0] == 3.0
        bad = s.run_code(f"sql(\"SELECT * FROM '{tmp_path}/secret.csv'\")")
        assert bad.attempts[0].error.kind == "sql_refused" and "the tables are: sales." in bad.error.message
    finally:
        s.close()


@pytest.mark.parametrize("url, secret", [
    ("postgresql://bob@h/db?password=S3cretPw", "S3cretPw"),
    ("postgresql://bob:Pw0rd@h/db?sslpassword=K3yPass&sslmode=require", "K3yPass"),
    ("duckdb:///md:db?motherduck_token=eyTok3n", "eyTok3n"),
    ("postgresql://bob@h/db?sslkey=/k&password=S3cretPw&application_name=aa", "S3cretPw"),
])
def test_safe_url_drops_secrets_in_the_query_string(url, secret):
    shown = safe_url(_engine_url(url))
    assert secret not in shown and "Pw0rd" not in shown
    assert ("sslmode=require" in shown) == ("sslmode" in url)  # how to reach the database stays


def test_a_secret_in_the_query_string_is_in_no_message():
    with pytest.raises(DataLoadError) as err:
        SqlSource("postgresql://bob@127.0.0.1:1/db?password=S3cretPw&sslpassword=K3yPass")
    assert "S3cretPw" not in str(err.value) and "K3yPass" not in str(err.value)
    assert "postgresql+psycopg://bob@127.0.0.1:1/db" in str(err.value)
    with pytest.raises(DataLoadError) as err:
        SqlSource("postgresql://bob@[bad/db?password=S3cretPw")
    assert "S3cretPw" not in str(err.value)


def test_a_script_runs_at_most_max_queries(tmp_path):
    path = tmp_path / "t.db"
    con = sqlite3.connect(path)
    con.execute("CREATE TABLE t (a INT)")
    con.commit()
    con.close()
    src = SqlSource(f"sqlite:///{path}")

    class Inner:
        ran = 0

        def run(self, code, cancel=None):
            Inner.ran += 1

    code = "if False:\n" + "".join(f"    sql('SELECT {i} AS a FROM t')\n" for i in range(MAX_QUERIES + 1))
    r = SqlSandbox(Inner(), src).run(code)
    assert r.ok is False and r.error.kind == "sql_refused" and f"at most {MAX_QUERIES} run" in r.error.message
    assert Inner.ran == 0
    src.close()


def test_a_result_over_the_byte_cap_is_refused(tmp_path, monkeypatch):
    import auto_analyst.data.sql_source as sql_source

    path = tmp_path / "t.db"
    sqlite3.connect(path).close()
    src = SqlSource(f"sqlite:///{path}")
    monkeypatch.setattr(sql_source, "MAX_RESULT_BYTES", 100_000)
    with pytest.raises(SqlQueryError, match="more than the 0 MB limit"):
        src.query("SELECT randomblob(200000) AS b")
    assert len(src.query("SELECT randomblob(1000) AS b")) == 1
    src.close()


@pytest.mark.services
def test_postgresql_query_to_xml_with_dblink_deletes_nothing_and_a_query_string_password_is_never_shown():
    url = service_url("database")
    from sqlalchemy import create_engine, make_url, text

    admin = create_engine(url.replace("postgresql://", "postgresql+psycopg://", 1))
    schema = f"aa_guard_{uuid.uuid4().hex[:8]}"
    role, pw = f"aa_ro_{uuid.uuid4().hex[:6]}", f"Pw{uuid.uuid4().hex[:10]}"
    with admin.begin() as c:
        c.execute(text(f"CREATE SCHEMA {schema}"))
        c.execute(text(f"CREATE TABLE {schema}.orders (id int PRIMARY KEY, amount numeric)"))
        c.execute(text(f"INSERT INTO {schema}.orders SELECT g, g FROM generate_series(1, 5) g"))
        c.execute(text(f"CREATE ROLE {role} LOGIN PASSWORD '{pw}'"))
        c.execute(text(f"GRANT USAGE ON SCHEMA {schema} TO {role}"))
        c.execute(text(f"GRANT SELECT ON ALL TABLES IN SCHEMA {schema} TO {role}"))
        has_dblink = c.execute(text("SELECT count(*) FROM pg_available_extensions WHERE name = 'dblink'")).scalar()
        if has_dblink:
            c.execute(text("CREATE EXTENSION IF NOT EXISTS dblink"))
    u = make_url(url)
    try:
        # the test service's own (superuser) URL: the worst case the check must hold against
        src = SqlSource(f"{url}?options=-csearch_path%3D{schema}")
        dsn = f"host={u.host} port={u.port} dbname={u.database} user={u.username}"
        for q in [DELETE_VIA_DBLINK.replace("host=127.0.0.1 dbname=shop user=postgres", dsn),
                  f"SELECT dblink_exec('{dsn}', 'DELETE FROM {schema}.orders')",
                  "SELECT query_to_xml('SELECT pg_read_file(''/etc/hostname'') AS f', true, true, '')",
                  "SELECT pg_read_file('/etc/hostname')"]:
            with pytest.raises(SqlRefused):
                src.query(q)
        src.close()
        # a password in the query string: used to connect, never shown (description, history row, title)
        ro_url = f"postgresql://{role}@{u.host}:{u.port}/{u.database}?password={pw}&options=-csearch_path%3D{schema}"
        s = Analyst().session()
        [t] = s.connect(ro_url)
        shown = [s.source.safe_url, t.report.path, repr(s.source), str(s.description.source),
                 " ".join(s.description.table("orders").load_notes)]
        assert all(pw not in x for x in shown), shown
        assert t.report.path.endswith("#orders") and "search_path" in t.report.path
        import json

        from auto_analyst.session_state import snapshot

        saved = json.dumps(snapshot(s.tables, s.active, s.memory, s.turn), default=str)  # what save_state stores
        assert "#orders" in saved and pw not in saved
        s.close()
        with admin.connect() as c:
            assert c.execute(text(f"SELECT count(*) FROM {schema}.orders")).scalar() == 5
    finally:
        with admin.begin() as c:
            c.execute(text(f"DROP SCHEMA {schema} CASCADE"))
            c.execute(text(f"DROP ROLE {role}"))
        admin.dispose()
