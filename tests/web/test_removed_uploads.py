"""An upload whose account is removed while it is being written keeps no file (storage.owners, Session.upload).

`users remove NAME --yes` removes the account, then deletes its data and files; an upload of NAME's going on at
the same time finished writing afterwards, into a folder the removal had already swept (or created again), and
its file stayed on disk under the name, for an account added again as NAME (another person) to find.
"""

from __future__ import annotations

from pathlib import Path
from unittest.mock import patch

import pytest
from click.testing import CliRunner

from auto_analyst.cli import cli
from auto_analyst.errors import NotFoundError
from auto_analyst.web import AccountStore, create_app
from auto_analyst.web.conversations import Owner
from tests.web.conftest import Browser


def _remove(settings, name: str) -> None:
    r = CliRunner().invoke(cli, ["users", "remove", name, "--yes"], env={"AUTO_ANALYST_HOME": str(settings.home)})
    assert r.exit_code == 0, r.output


def _files(settings, name: str) -> list[Path]:
    return [p for p in (Path(settings.home) / "uploads" / name).rglob("*") if p.is_file()]


@pytest.fixture
def carol(settings):
    """(app, carol's browser, her conversation's id, her account id): an account signed in with one conversation."""
    store = AccountStore(settings=settings)
    store.add("carol", "carol-password")
    app = create_app({"TESTING": True, "SECRET_KEY": "test-secret", "SETTINGS": settings, "ACCOUNT_SWEEP_SECONDS": 3600})
    browser = Browser(app.test_client(), login=("carol", "carol-password"))
    yield app, browser, browser.new_session(), store.get("carol").id
    app.extensions["auto_analyst"].close()


def test_an_account_removed_between_the_save_and_the_record_keeps_no_uploaded_file(settings, datasets_dir, carol):
    app, browser, sid, _ = carol
    import auto_analyst.session_tables as tables

    real = tables.record_upload

    def removed_first(*args, **kwargs):  # the removal and its sweep run after the save, before the record
        _remove(settings, "carol")
        return real(*args, **kwargs)

    with patch.object(tables, "record_upload", removed_first):
        r = browser.upload(sid, datasets_dir / "grunfeld.csv")
    assert r.status_code == 404 and r.json["error"]["kind"] == "not_found", r.json
    assert "removed" in r.json["error"]["message"]
    assert _files(settings, "carol") == []
    assert app.extensions["auto_analyst"].analyst.memory.history.uploads("carol") == []


def test_an_upload_finishing_after_the_removals_sweep_removes_its_own_file(settings, datasets_dir, carol):
    app, _, sid, account_id = carol
    session = app.extensions["auto_analyst"].get(Owner(account_id, "carol", account=True), sid).session
    data = (datasets_dir / "iris.csv").read_bytes()

    def slow_save(path: Path) -> None:  # the sweep deletes carol's folders; then the bytes land, in a folder made again
        _remove(settings, "carol")
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)

    with pytest.raises(NotFoundError, match="removed"):
        session.upload("iris.csv", slow_save)
    assert _files(settings, "carol") == [] and not (Path(settings.home) / "uploads" / "carol").exists()
    assert app.extensions["auto_analyst"].analyst.memory.history.uploads("carol") == []
    # an account that still exists uploads as before
    session.owner = None
    kept = session.upload("iris.csv", lambda p: p.write_bytes(data))
    assert kept.tables == ("iris",) and Path(kept.path) in _files(settings, "carol")
