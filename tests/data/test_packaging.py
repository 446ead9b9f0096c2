"""Install metadata: the notebook extra exists and git tracks no bytecode."""

from __future__ import annotations

import configparser
import shutil
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


def test_notebook_extra_lists_nbconvert_and_ipykernel():
    cfg = configparser.ConfigParser()
    cfg.read(REPO / "setup.cfg", encoding="utf-8")
    extra = [line.split(">")[0].split("=")[0].strip() for line in cfg["options.extras_require"]["notebook"].split("\n")
             if line.strip()]
    assert extra == ["nbconvert", "ipykernel"]


def test_git_tracks_no_bytecode():
    if shutil.which("git") is None or not (REPO / ".git").exists():
        pytest.skip("not a git checkout")
    tracked = subprocess.run(["git", "-C", str(REPO), "ls-files"], capture_output=True, text=True, check=True).stdout
    assert [f for f in tracked.splitlines() if f.endswith((".pyc", ".pyo")) or "__pycache__/" in f] == []
    ignored = subprocess.run(["git", "-C", str(REPO), "check-ignore", "auto_analyst/__pycache__/x.cpython-311.pyc"],
                             capture_output=True, text=True)
    assert ignored.returncode == 0
