"""The web upload path meets the loader's refusals and repairs: a bad file is a 4xx with one
sentence (never a 500), a compressed or repaired file is a table with its warnings."""

from __future__ import annotations

import gzip

import pytest

from auto_analyst.web import create_app
from tests.web.conftest import Browser


@pytest.fixture
def browser(settings):
    app = create_app({"TESTING": True, "SECRET_KEY": "test-secret", "SETTINGS": settings})
    yield Browser(app.test_client())
    app.extensions["auto_analyst"].close()


def test_deeply_nested_json_is_refused_with_one_sentence(browser, settings):
    sid = browser.new_session()
    r = browser.upload(sid, name="tree.json", data=("[" + '{"a":' * 50_000 + "1" + "}" * 50_000 + "]").encode())
    assert r.status_code == 400, r.json  # DataLoadError's status (errors.ERROR_KINDS): the file is not a table
    err = r.json["error"]
    assert err["kind"] == "data_load" and err["message"].startswith("tree.json nests objects or lists more than 32")
    assert "\n" not in err["message"] and str(settings.home) not in err["message"]
    assert not list((settings.home / "uploads").rglob("*.*"))


def test_compressed_and_ragged_uploads_load(browser):
    sid = browser.new_session()
    rows = "id,name,qty\n" + "".join(f"{i},n{i},{i}\n" if i != 4 else "4,n4,4,EXTRA\n" for i in range(20))
    r = browser.upload(sid, name="stock.csv.gz", data=gzip.compress(rows.encode()))
    assert r.status_code == 201, r.json
    table = r.json["tables"][0]
    assert table["name"] == "stock" and table["n_rows"] == 20
    assert table["columns"] == ["id", "name", "qty", "column_4"]
    assert table["report"]["compression"] == "gzip"
    assert table["report"]["warnings"] == ["1 row has more fields than the 3 header names (line 6); "
                                           "the extra values are kept in column_4"]
