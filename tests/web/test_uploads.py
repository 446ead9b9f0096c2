"""Uploads: stored under generated names, previewed with the load report, bad files refused in the page's terms."""

from __future__ import annotations

import pytest

from auto_analyst.config import Settings
from auto_analyst.web import create_app
from tests.web.conftest import Browser


def test_upload_stores_a_generated_name_and_returns_a_preview(browser, settings, datasets_dir):
    sid = browser.new_session()
    r = browser.upload(sid, datasets_dir / "grunfeld.csv", name="My Grunfeld (final).csv")
    assert r.status_code == 201, r.json
    t = r.json["tables"][0]
    assert t["name"] == "my_grunfeld_final" and t["n_rows"] == 220 and t["file"] == "My Grunfeld (final).csv"
    assert t["columns"] == ["invest", "value", "capital", "firm", "year"] and len(t["rows"]) == 20
    assert t["report"]["path"] == "My Grunfeld (final).csv" and t["report"]["format"] == "csv"
    stored = list((settings.home / "uploads").rglob("*.csv"))
    assert len(stored) == 1 and "Grunfeld" not in str(stored[0]) and stored[0].stem.isalnum()
    assert str(settings.home) not in r.get_data(as_text=True)
    detail = browser.get(f"/api/sessions/{sid}").json["session"]
    assert detail["tables"] == [{"name": "my_grunfeld_final", "file": "My Grunfeld (final).csv", "sheet": None,
                                 "n_rows": 220, "n_columns": 5}]


def test_a_path_in_the_file_name_is_only_metadata(browser, settings):
    sid = browser.new_session()
    r = browser.upload(sid, name="../../../etc/evil.csv", data=b"a,b\n1,2\n")
    assert r.status_code == 201
    assert r.json["tables"][0]["name"] == "evil"
    assert all(p.is_relative_to(settings.home / "uploads") for p in settings.home.rglob("*.csv") if "uploads" in str(p))


@pytest.mark.parametrize("name,data,status,kind", [
    ("tool.exe", b"MZ\x90\x00", 400, "bad_upload"),
    ("noextension", b"a,b\n1,2\n", 400, "bad_upload"),
    ("empty.csv", b"", 400, "data_load"),
    ("binary.csv", bytes(range(256)) * 40, 400, "data_load"),
    ("broken.xlsx", b"not a zip file at all", 400, "data_load"),
])
def test_bad_uploads_are_refused_with_a_reason(browser, settings, name, data, status, kind):
    sid = browser.new_session()
    r = browser.upload(sid, name=name, data=data)
    assert r.status_code == status, r.json
    assert r.json["ok"] is False and r.json["error"]["kind"] == kind and r.json["error"]["message"]
    assert str(settings.home) not in r.json["error"]["message"]
    assert not list((settings.home / "uploads").rglob("*.*"))  # nothing left behind


def test_upload_without_a_file_is_a_400(browser):
    sid = browser.new_session()
    r = browser.post(f"/api/sessions/{sid}/uploads", data={}, content_type="multipart/form-data")
    assert r.status_code == 400 and r.json["error"]["kind"] == "bad_upload"


def test_upload_over_the_size_limit_is_a_413(tmp_path):
    settings = Settings.load({"home": tmp_path / "home", "max_file_mb": 1})
    app = create_app({"TESTING": True, "SECRET_KEY": "k", "SETTINGS": settings})
    try:
        b = Browser(app.test_client())
        sid = b.new_session()
        r = b.upload(sid, name="big.csv", data=b"a,b\n" + b"1,2\n" * 600_000)
        assert r.status_code == 413 and r.json["error"]["kind"] == "too_large"
        assert "1 MB" in r.json["error"]["message"]
    finally:
        app.extensions["auto_analyst"].close()


def test_several_tables_preview_and_switch(browser, datasets_dir):
    sid = browser.new_session()
    browser.upload(sid, datasets_dir / "iris.csv")
    r = browser.upload(sid, datasets_dir / "grunfeld.csv")
    assert r.json["active"] == "grunfeld"
    assert browser.get(f"/api/sessions/{sid}/tables/iris").json["table"]["n_rows"] == 150
    assert browser.get(f"/api/sessions/{sid}/tables/nope").status_code == 404
    r = browser.post(f"/api/sessions/{sid}/active", json={"name": "iris"})
    assert r.status_code == 200 and r.json["active"] == "iris"
    assert browser.get(f"/api/sessions/{sid}").json["session"]["active"] == "iris"
    assert browser.post(f"/api/sessions/{sid}/active", json={"name": "nope"}).status_code == 404
    assert browser.post(f"/api/sessions/{sid}/active", json=None, data="x",
                        content_type="text/plain").json["error"]["kind"] == "bad_request"
