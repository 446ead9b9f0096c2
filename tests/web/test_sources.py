"""Connecting a database from the page: off by default, read-only when on; a dictionary upload is not a table."""

from __future__ import annotations

import sqlite3

import pytest

from auto_analyst.config import Settings
from auto_analyst.web import create_app
from tests.web.conftest import Browser


@pytest.fixture
def shop(tmp_path) -> str:
    path = tmp_path / "shop.db"
    con = sqlite3.connect(path)
    con.execute("CREATE TABLE orders (order_id INTEGER PRIMARY KEY, region TEXT, amount REAL)")
    con.executemany("INSERT INTO orders VALUES (?, ?, ?)", [(1, "East", 10.5), (2, "North", 4.25), (3, "East", 1.0)])
    con.commit()
    con.close()
    return f"sqlite:///{path}"


def test_connect_is_off_by_default_and_the_form_is_not_shown(browser, shop):
    sid = browser.new_session()
    r = browser.post(f"/api/sessions/{sid}/sources", json={"url": shop})
    assert r.status_code == 403 and "web_connect" in r.json["error"]["message"]
    assert b'id="connect-form"' not in browser.get("/").data


def test_connect_when_allowed_previews_the_tables_and_runs_sql(tmp_path, shop):
    settings = Settings.load({"home": tmp_path / "home", "web_connect": True}, environ={})
    app = create_app({"TESTING": True, "SECRET_KEY": "k", "SETTINGS": settings})
    try:
        b = Browser(app.test_client())
        assert b'id="connect-form"' in b.get("/").data
        sid = b.new_session()
        assert b.post(f"/api/sessions/{sid}/sources", json={"url": "not a url"}).status_code == 400
        r = b.post(f"/api/sessions/{sid}/sources", json={"url": shop})
        assert r.status_code == 201, r.json
        [t] = r.json["tables"]
        assert (t["name"], t["n_rows"], t["n_columns"]) == ("orders", 3, 3)
        events, final = b.run_job(sid, "run", {"code": "x = sql('SELECT region, sum(amount) AS total FROM orders "
                                                        "GROUP BY region ORDER BY region')\nshow(x, name='t')"})
        assert events[-1][0] == "result", final
        assert final["tables"][0]["rows"] == [["East", 11.5], ["North", 4.25]]
    finally:
        app.extensions["auto_analyst"].close()


def test_a_dictionary_upload_is_kept_beside_the_tables(browser, tmp_path):
    sid = browser.new_session()
    csv = tmp_path / "sales.csv"
    csv.write_text("br,v2\nN,1.5\nS,2.5\n")
    assert browser.upload(sid, csv).status_code == 201
    r = browser.upload(sid, name="data_dictionary.md", data=b"| column | meaning |\n|---|---|\n| v2 | net amount |\n")
    assert r.status_code == 201 and r.json["tables"] == []
