"""Script text on a terminal is shown, not obeyed; ``--json`` stays valid; ``doctor`` lists the protections."""

from __future__ import annotations

import json

from click.testing import CliRunner

from auto_analyst.results import Result
from auto_analyst.cli.terminal_text import ascii_json, escape, escape_result

HOSTILE = "a\x1b]0;title\x07b\x1b[2J\rc\x1b]8;;http://x\x1b\\d\x1b]52;c;ZXZpbA==\x07e\u202ef\x9b31m\u2066g\tok\n"


def test_escape_shows_every_control_and_bidi_character():
    out = escape(HOSTILE)
    assert out == ("a\\x1b]0;title\\x07b\\x1b[2J\\x0dc\\x1b]8;;http://x\\x1b\\d\\x1b]52;c;ZXZpbA==\\x07e\\u202ef\\x9b31m"
                   "\\u2066g\tok\n")
    assert all(ord(c) >= 0x20 or c in "\t\n" for c in out)
    assert escape("plain text, é and 日本") == "plain text, é and 日本"


def test_result_is_escaped_for_people_and_ascii_for_programs(capsys):
    from auto_analyst.cli.output import print_result

    r = Result(question="q", status="ok", answer=HOSTILE, stdout=HOSTILE, code="print(1)")
    assert escape_result(r).answer == escape(HOSTILE)
    print_result(r)
    shown = capsys.readouterr().out
    assert "\x1b" not in shown and "\u202e" not in shown and "\x9b" not in shown and "\\x1b]52;" in shown
    print_result(r, as_json=True)
    line = capsys.readouterr().out
    assert line.isascii() and json.loads(line)["answer"] == HOSTILE
    assert json.loads(ascii_json(r.model_dump_json()))["stdout"] == HOSTILE


def test_doctor_lists_the_protections():
    from auto_analyst.cli import cli
    from auto_analyst.execution import wall

    out = CliRunner().invoke(cli, ["doctor", "--json"])
    assert out.exit_code == 0, out.output
    items = {p["name"]: p for p in json.loads(out.output.splitlines()[0])["protections"]}
    assert items["OS sandbox (bubblewrap)"]["active"] is wall.probe()[0]
    assert "system-call filter (seccomp)" in items and "resource limits" in items
    assert items["wall in force"]["detail"].startswith("full: " if wall.probe()[0] else ("namespace-free: ", "none: "))
    text = CliRunner().invoke(cli, ["doctor"]).output
    assert text.startswith("[on ] wall in force: full: bubblewrap") if wall.probe()[0] else "[OFF] OS sandbox" in text
