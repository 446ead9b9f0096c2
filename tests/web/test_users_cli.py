"""`auto-analyst users` and `tokens`, and `serve`'s refusal to open an interface without sign-in."""

from __future__ import annotations

from click.testing import CliRunner

from auto_analyst.cli import cli
from auto_analyst.web import AccountStore


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
    unconfirmed = _run(settings, ["users", "remove", "bob"])
    assert unconfirmed.exit_code == 2 and "--keep-data" in unconfirmed.output and store.get("bob") is not None
    removed = _run(settings, ["users", "remove", "bob", "--keep-data"])
    assert removed.exit_code == 0 and "stay stored under the name 'bob'" in removed.output
    missing = _run(settings, ["users", "remove", "bob"])
    assert missing.exit_code == 2 and "No account 'bob'" in missing.output


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
