"""Shared fixtures: every test runs offline, with its own AUTO_ANALYST_HOME and no DSPy disk cache."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")


def _shared_dir() -> Path:
    env = os.environ.get("AUTO_ANALYST_SHARED")
    candidates = [Path(env)] if env else []
    candidates += [REPO.parent / "shared", REPO.parent.parent / "shared"]
    for c in candidates:
        if (c / "cases").is_dir():
            return c
    raise RuntimeError("../shared (cases/, bench/) not found beside the repository; set AUTO_ANALYST_SHARED.")


@pytest.fixture(scope="session")
def shared_dir() -> Path:
    """The read-only ../shared folder (cases, bench); used in place, never copied.

    CI always has it beside the clone; elsewhere the tests that need it are skipped, saying why.
    """
    try:
        return _shared_dir()
    except RuntimeError as exc:
        if os.environ.get("CI"):
            raise
        pytest.skip(str(exc))


@pytest.fixture(scope="session")
def datasets_dir() -> Path:
    return REPO / "datasets"


@pytest.fixture(autouse=True)
def _isolated_home(tmp_path_factory, monkeypatch):
    home = tmp_path_factory.mktemp("aa_home")
    monkeypatch.setenv("AUTO_ANALYST_HOME", str(home))
    monkeypatch.setenv("DSPY_CACHEDIR", str(home / "dspy_cache"))
    monkeypatch.delenv("AUTO_ANALYST_MODEL", raising=False)
    yield home


@pytest.fixture
def settings(_isolated_home):
    from auto_analyst.config import Settings

    return Settings.load({"home": _isolated_home})
