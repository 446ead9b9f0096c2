"""`auto-analyst users` and `tokens`, and `serve`'s refusal to open an interface without sign-in."""

from __future__ import annotations

from contextlib import contextmanager
from unittest.mock import patch

from click.testing import CliRunner

from auto_analyst.cli import cli
from auto_analyst.web import AccountStore


@contextmanager
def _a_terminal():
    """``users remove`` asks its question only on a terminal: the test's piped input stands for one."""
    with patch("auto_analyst.cli.confirm.stdin_is_terminal", return_value=True):
        yield


def _run(settings, args, input=None):
    return CliRunner().invoke(cli, args, input=input, env={"AUTO_ANALYST_HOME": str(settings.home)})


def test_users_add_reads_the_password_from_stdin_and_the_account_logs_in(settings):
    r = _run(settings, ["users", "add", "alice", "--role", "admin"], input="s3cret-enough\n")
    assert r.exit_code == 0 and "Added admin alice." in r.output
    store = AccountStore(settings=settings)
    assert store.verify("alice", "s3cret-enough").role == "admin"
    assert store.verify("alice", "wrong-password") is None
    with store.engine.connect() as conn:
        stored = conn.exec_driver_sql("SELECT password_hash FROM accounts").scalar()
    assert stored.startswith("$argon2id$") and "s3cret-enough" not in stored
    again = _run(settings, ["users", "add", "alice"], input="another-pass\n")
    assert again.exit_code == 2 and "exists" in again.output
    short = _run(settings, ["users", "add", "bob"], input="short\n")
    assert short.exit_code == 2 and "at least 8 characters" in short.output
    empty = _run(settings, ["users", "add", "bob"], input="")
    assert empty.exit_code == 2 and "No password on standard input" in empty.output
    bad = _run(settings, ["users", "add", "bob smith"], input="long-enough\n")
    assert bad.exit_code == 2 and "not a usable account name" in bad.output


def test_users_list_set_passwd_remove(settings):
    _run(settings, ["users", "add", "bob"], input="bob-password\n")
    r = _run(settings, ["users", "set", "bob", "--daily-cost", "2.5", "--rate", "6"])
    assert r.exit_code == 0 and "bob: member, cap $2.5/day, 6 questions/min." in r.output
    listed = _run(settings, ["users", "list"]).output
    assert "bob\tmember\tcap $2.5/day\t6 questions/min\tspent today $0.0000" in listed
    assert "no cap" in _run(settings, ["users", "set", "bob", "--daily-cost", "none"]).output
    store = AccountStore(settings=settings)
    store.create_token("bob", "old")
    changed = _run(settings, ["users", "passwd", "bob"], input="new-password\n")
    assert changed.exit_code == 0 and "its 1 API token(s) revoked" in changed.output
    assert store.verify("bob", "bob-password") is None and store.verify("bob", "new-password") is not None
    assert store.get("bob").epoch == 1 and store.tokens("bob") == []  # older logins and tokens end
    piped = _run(settings, ["users", "remove", "bob"], input="y\n")  # a script's stdin does not confirm
    assert piped.exit_code == 2 and "pass --yes to remove without asking" in piped.output, piped.output
    assert "Aborted" not in piped.output and "[y/N]" not in piped.output and store.get("bob") is not None
    assert _run(settings, ["users", "remove", "bob"], input="").exit_code == 2  # `</dev/null`
    with _a_terminal():
        unconfirmed = _run(settings, ["users", "remove", "bob"], input="n\n")
    assert unconfirmed.exit_code == 1 and "delete its data: 0 conversation(s)" in unconfirmed.output
    assert "--keep-data" in unconfirmed.output and store.get("bob") is not None  # not confirmed: nothing removed
    removed = _run(settings, ["users", "remove", "bob", "--keep-data"])
    assert removed.exit_code == 0 and "stay stored under the name 'bob'" in removed.output
    missing = _run(settings, ["users", "remove", "bob"])
    assert missing.exit_code == 2 and "No account 'bob'" in missing.output


def _bobs_data(settings, datasets_dir) -> str:
    """bob (and carol) with a conversation (an upload and an answered question), a profile and an error-fix entry."""
    from auto_analyst.api import Analyst
    from auto_analyst.memory.errorfix.memory import ErrorMemory
    from auto_analyst.web import create_app
    from tests.web.conftest import Browser

    app = create_app({"TESTING": True, "SECRET_KEY": "test-secret", "SETTINGS": settings})
    try:
        for name in ("bob", "carol"):
            who = Browser(app.test_client(), login=(name, f"{name}-password"))
            sid = who.new_session()
            assert who.upload(sid, datasets_dir / "grunfeld.csv").status_code == 201
            who.ask(sid, "total invest")
    finally:
        app.extensions["auto_analyst"].close()
    analyst = Analyst(settings=settings, user="bob")
    try:
        analyst.profile("bob").set(style="concise")
        analyst.profile("carol").set(style="concise")
    finally:
        analyst.close()
    mem = ErrorMemory(settings)
    for name in ("bob", "carol"):
        mem.add("KeyError: 'invset'", "use the column invest", error_type="KeyError", agent="a", agent_version="1",
                dataset_fingerprint="f", user=name)
    mem.close()
    return sid


def _holdings(settings, name: str) -> dict:
    from auto_analyst.api import Analyst

    analyst = Analyst(settings=settings, user=name)
    try:
        return {"conversations": len(analyst.history(name).sessions()), "turns": len(analyst.history(name).turns()),
                "profile": analyst.profile(name).get().style,
                "errors": len(analyst.fix_memory(name).list(scope="user")),
                "uploads": (settings.home / "uploads" / name).is_dir()}
    finally:
        analyst.close()


def test_users_remove_deletes_the_users_data_after_confirmation_and_keep_data_keeps_it(settings, datasets_dir):
    for name in ("bob", "carol", "dave"):
        _run(settings, ["users", "add", name], input=f"{name}-password\n")
    _bobs_data(settings, datasets_dir)
    bob_id = AccountStore(settings=settings).get("bob").id
    before = _holdings(settings, "bob")
    assert before["conversations"] == 1 and before["turns"] == 1 and before["errors"] == 1 and before["uploads"]
    assert before["profile"] == "concise"
    with _a_terminal():
        removed = _run(settings, ["users", "remove", "bob"], input="y\n")
    assert removed.exit_code == 0, removed.output
    assert "delete its data: 1 conversation(s)" in removed.output and "1 error-fix entry" in removed.output
    assert "its data is deleted" in removed.output
    after = _holdings(settings, "bob")
    assert after == {"conversations": 0, "turns": 0, "profile": "balanced", "errors": 0, "uploads": False}, after
    assert not any((settings.home / "sessions").glob("*/*")) or all(  # only carol's session folders are left
        p.parent.name != "bob" for p in (settings.home / "sessions").glob("*/*"))
    store = AccountStore(settings=settings)
    assert store.get("bob") is None
    from sqlalchemy import inspect, text

    left = {}
    for table in inspect(store.engine).get_table_names():
        if any(c["name"] == "user" for c in inspect(store.engine).get_columns(table)):
            with store.engine.connect() as conn:
                left[table] = conn.execute(text(f'SELECT COUNT(*) FROM "{table}" WHERE "user" = \'bob\'')).scalar()
    assert {t for t, n in left.items() if n} == set(), left
    with store.engine.connect() as conn:  # the operator's accounting stays, under the removed account's label
        assert {r[0] for r in conn.execute(text('SELECT "user" FROM usage_daily'))} >= {f"bob~{bob_id}"}
    assert "entity_stream" in left and "turns" in left
    carol = _holdings(settings, "carol")  # another user's data is untouched
    assert carol == {"conversations": 1, "turns": 1, "profile": "concise", "errors": 1, "uploads": True}
    # an account added again as bob starts empty
    _run(settings, ["users", "add", "bob"], input="bob-password\n")
    assert _holdings(settings, "bob")["conversations"] == 0
    # --keep-data keeps it (no question asked)
    kept = _run(settings, ["users", "remove", "carol", "--keep-data"])
    assert kept.exit_code == 0 and "stay stored under the name 'carol'" in kept.output
    assert _holdings(settings, "carol")["conversations"] == 1
    # --yes skips the question
    assert _run(settings, ["users", "remove", "dave", "--yes"]).exit_code == 0


def test_tokens_create_list_revoke(settings):
    _run(settings, ["users", "add", "carol"], input="carol-password\n")
    made = _run(settings, ["tokens", "create", "carol", "--label", "notebook"])
    assert made.exit_code == 0
    token = made.stdout.strip().splitlines()[0]
    store = AccountStore(settings=settings)
    assert token.startswith("aa_") and store.check_token(token).name == "carol"
    tid = store.tokens("carol")[0].id
    assert f"{tid}\tcarol\tnotebook" in _run(settings, ["tokens", "list"]).output
    assert _run(settings, ["tokens", "revoke", tid]).exit_code == 0
    assert store.check_token(token) is None
    assert "No account 'dave'" in _run(settings, ["tokens", "create", "dave"]).output


def test_serve_refuses_an_open_interface_without_sign_in(settings):
    r = _run(settings, ["serve", "--host", "0.0.0.0", "--port", "18811"])
    assert r.exit_code == 2
    assert "Serving on 0.0.0.0 needs sign-in: add an account" in r.output and "TRUSTED_PROXIES" in r.output
    r = _run(settings, ["serve", "--host", "0.0.0.0", "--port", "18811", "--no-auth"])
    assert r.exit_code == 2 and "--no-auth is for loopback only" in r.output


def test_serve_on_loopback_prints_the_token_link_and_refuses_requests_without_it(tmp_path):
    import os
    import re
    import subprocess
    import sys
    import time

    import requests

    from tests.helpers import REPO

    port = 18823
    env = dict(os.environ, AUTO_ANALYST_HOME=str(tmp_path / "home"), PYTHONPATH=str(REPO))
    env.pop("AUTO_ANALYST_WEB_TOKEN", None)
    proc = subprocess.Popen([sys.executable, "-m", "auto_analyst.cli", "serve", "--port", str(port)], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        out, link, deadline = "", None, time.time() + 120
        while link is None and time.time() < deadline and proc.poll() is None:
            out += proc.stdout.readline()
            m = re.search(rf"^    (http://127\.0\.0\.1:{port}/\?token=[\w-]+)$", out, re.M)
            link = m.group(1) if m else None
        assert link, out
        assert "open this link to sign in" in out
        base = f"http://127.0.0.1:{port}"
        assert requests.get(base + "/api/state", timeout=30).status_code == 401
        assert requests.get(base + "/", timeout=30, allow_redirects=False).status_code == 302
        assert requests.get(base + "/?token=wrong", timeout=30).url.startswith(base + "/login")
        browser = requests.Session()
        assert browser.get(link, timeout=30).url == base + "/"
        assert browser.get(base + "/api/state", timeout=30).json()["ok"] is True
    finally:
        proc.terminate()
        proc.wait(30)


def test_the_sign_in_token_is_blanked_in_the_request_log():
    import logging

    from auto_analyst.cli.serve import _RedactToken

    record = logging.LogRecord("werkzeug", logging.INFO, __file__, 1, '%s - - "%s" %s',
                               ("127.0.0.1", "GET /?token=s3cretTOKEN&next=/x HTTP/1.1", "302"), None)
    assert _RedactToken().filter(record)
    line = record.getMessage()
    assert "s3cretTOKEN" not in line and "token=[hidden]&next=/x" in line
