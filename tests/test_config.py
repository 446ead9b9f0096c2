"""Settings: precedence, conversion errors, and docs generated from the code."""

from pathlib import Path

import pytest

from auto_analyst.config import Settings, settings_markdown
from auto_analyst.errors import BadInputError

REPO = Path(__file__).resolve().parents[1]


def test_overrides_beat_environment_beat_defaults(tmp_path):
    env = {"AUTO_ANALYST_MAX_FIX_ATTEMPTS": "5", "AUTO_ANALYST_MODEL": "openai/gpt-4o-mini",
           "AUTO_ANALYST_HOME": str(tmp_path)}
    s = Settings.load({"model": "anthropic/claude-3-5-haiku-latest"}, environ=env)
    assert s.max_fix_attempts == 5 and s.model == "anthropic/claude-3-5-haiku-latest" and s.home == tmp_path
    assert Settings.load(environ={}).max_fix_attempts == 3
    assert Settings.load(environ={}).is_offline


def test_bad_values_say_which_variable(tmp_path):
    with pytest.raises(BadInputError, match="AUTO_ANALYST_RUN_TIMEOUT"):
        Settings.load(environ={"AUTO_ANALYST_RUN_TIMEOUT": "soon"})
    with pytest.raises(BadInputError, match="Unknown setting 'colour'"):
        Settings.load({"colour": "red"}, environ={})


def test_settings_doc_is_generated_from_the_code():
    assert (REPO / "docs" / "settings.md").read_text() == settings_markdown()


def test_importing_the_package_is_cheap():
    import subprocess
    import sys

    code = ("import sys, auto_analyst; heavy = [m for m in ('chromadb', 'dspy', 'litellm', 'pandas', 'flask') "
            "if m in sys.modules]; print(heavy)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_home_is_created_private_and_an_open_one_of_ours_is_closed(tmp_path: Path) -> None:
    # issue: history (questions and answers), uploads and tables under home were readable by every local user
    new = tmp_path / "a" / "home"
    Settings.load(environ={"AUTO_ANALYST_HOME": str(new)})
    assert new.stat().st_mode & 0o777 == 0o700
    old = tmp_path / "old"
    old.mkdir(mode=0o755)
    old.chmod(0o755)
    (old / "history.sqlite3").write_text("x")
    Settings.load(environ={"AUTO_ANALYST_HOME": str(old)})
    assert old.stat().st_mode & 0o777 == 0o700
    assert (old / "history.sqlite3").read_text() == "x"
