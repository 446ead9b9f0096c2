"""A file or folder this user may not read gets 'Cannot read PATH: permission denied (...)'; the AUTO_ANALYST_HOME
advice is kept for the tool's own home. Run as root, so the refusal is mocked: os.stat raises PermissionError for
paths under a 'closed' folder and os.access says that folder cannot be entered."""

from __future__ import annotations

import os

import pytest
from click.testing import CliRunner

from auto_analyst.cli import cli
from auto_analyst.cli.context import to_cli_error


@pytest.fixture
def closed(tmp_path, monkeypatch):
    folder = tmp_path / "locked"
    folder.mkdir()
    (folder / "s.csv").write_text("salary\n10\n20\n")
    real_stat, real_access = os.stat, os.access

    def stat(path, *args, **kwargs):
        if str(path).startswith(str(folder) + os.sep):
            raise PermissionError(13, "Permission denied", str(path))
        return real_stat(path, *args, **kwargs)

    monkeypatch.setattr(os, "stat", stat)
    monkeypatch.setattr(os, "access", lambda p, mode, **kw: str(p) != str(folder) and real_access(p, mode, **kw))
    return folder


@pytest.mark.parametrize("name", ["s.csv", "missing.csv"])
def test_a_file_under_a_folder_this_user_cannot_enter_cannot_be_read(closed, name):
    r = CliRunner().invoke(cli, ["ask", str(closed / name), "mean salary"])
    assert r.exit_code == 2, r.output
    assert r.stderr.strip() == (f"Error: Cannot read {closed / name}: permission denied "
                                f"(check the permissions of the folder {closed}).")


def test_a_file_this_user_may_not_open_cannot_be_read(tmp_path, monkeypatch):
    import importlib

    loader = importlib.import_module("auto_analyst.data.load")
    p = tmp_path / "private.csv"
    p.write_text("salary\n10\n20\n")

    def refuse(path, *args, **kwargs):  # the first read of the file's bytes (pyarrow opens it outside Python's open)
        raise PermissionError(13, "Permission denied", str(path))

    monkeypatch.setattr(loader, "check_file", refuse)
    r = CliRunner().invoke(cli, ["ask", str(p), "mean salary"])
    assert r.exit_code == 2, r.output
    assert r.stderr.strip() == f"Error: Cannot read {p}: permission denied (check the file's permissions)."


def test_the_home_advice_is_kept_for_the_home_and_only_there(tmp_path, monkeypatch):
    home = tmp_path / "home"
    monkeypatch.setenv("AUTO_ANALYST_HOME", str(home))
    err = to_cli_error(PermissionError(13, "Permission denied", str(home / "history.sqlite3")))
    assert err.exit_code == 2 and "set AUTO_ANALYST_HOME to a folder it owns" in err.message
    other = tmp_path / "out" / "chart.html"
    err = to_cli_error(PermissionError(13, "Permission denied", str(other)))
    assert err.exit_code == 2 and "AUTO_ANALYST_HOME" not in err.message
    assert err.message == f"Cannot use {other}: permission denied for this user (check its permissions)."
