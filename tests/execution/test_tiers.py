"""The two tiers: which one holds, what ``doctor`` says, and the setting that demands the full wall.

The containment suite of the namespace-free tier is in test_containment_modes.py (``namespace_free``).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from auto_analyst.config import Settings
from auto_analyst.execution import landwall, protections, tiers, wall

HERE = Path(__file__).parent
REPO = HERE.parents[1]


def _no_full_wall(monkeypatch, namespace_free=(True, "")):
    monkeypatch.setattr(wall, "probe", lambda: (False, "no namespaces here"))
    monkeypatch.setattr(tiers, "namespace_free", lambda: namespace_free)


def test_without_namespaces_the_namespace_free_tier_holds_unless_the_full_wall_is_demanded(monkeypatch, tmp_path):
    _no_full_wall(monkeypatch)
    auto = Settings.load({"home": tmp_path})
    assert tiers.in_force(auto) == ("namespace-free", "no namespaces here")
    assert protections.refusal(auto) is None
    assert protections.startup_notice(auto).startswith("Generated code runs in the namespace-free wall (Landlock + seccomp)")
    full = Settings.load({"home": tmp_path, "sandbox_wall": "full", "allow_unsandboxed": True})
    assert tiers.in_force(full) == ("none", "no namespaces here")
    assert protections.refusal(full) == (
        "Generated code was not run: sandbox_wall=full demands the full wall (bubblewrap), which cannot be built here "
        "(no namespaces here); set sandbox_wall=auto to accept the namespace-free wall where it holds.")
    items = {p.name: p for p in protections.report(full)}
    assert not items["wall in force"].active and items["namespace-free wall (Landlock + seccomp)"].detail == "not used: sandbox_wall=full"


def test_no_tier_at_all_refuses_and_names_both_reasons(monkeypatch, tmp_path):
    _no_full_wall(monkeypatch, (False, "Landlock is not available"))
    settings = Settings.load({"home": tmp_path})
    assert tiers.in_force(settings) == ("none", "no namespaces here; and the namespace-free tier: Landlock is not available")
    assert protections.refusal(settings).startswith("Generated code was not run: no OS sandbox is available here (no namespaces")


def test_an_unknown_sandbox_wall_value_is_refused_in_one_sentence(tmp_path):
    settings = Settings.load({"home": tmp_path, "sandbox_wall": "strict"})
    assert protections.refusal(settings) == ("Generated code was not run: the setting sandbox_wall is 'strict'; set it to "
                                             "'auto' or 'full' (AUTO_ANALYST_SANDBOX_WALL).")


@pytest.mark.skipif(landwall.abi() < 1, reason="no Landlock in this kernel")
def test_landlock_ruleset_allows_the_work_folder_and_the_libraries_only(tmp_path):
    work, secret = tmp_path / "work", tmp_path / "secret.txt"
    work.mkdir()
    secret.write_text("s")
    code = (f"import os, sys\nfrom auto_analyst.execution import landwall\nfd = os.open({str(work)!r}, os.O_RDONLY)\n"
            "landwall.restrict(landwall.ruleset(fd, [], []))\nos.fchdir(fd)\nout = []\n"
            f"for path, mode in (('ok.txt', 'w'), ({str(secret)!r}, 'r'), ('/etc/passwd', 'r'), ({str(tmp_path / 'x')!r}, 'w')):\n"
            "    try:\n        open(path, mode).close(); out.append('ok')\n    except PermissionError:\n        out.append('refused')\n"
            "print(out)")
    # a fresh interpreter: everything it imports is imported before the ruleset (which lists no library) holds
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60,
                          env=dict(os.environ, PYTHONPATH=str(REPO)))
    assert proc.stdout.strip() == "['ok', 'refused', 'ok', 'refused']", proc.stderr[-2000:]


@pytest.mark.skipif(os.geteuid() != 0 or landwall.abi() < 1, reason="the harness needs root; the tier needs Landlock")
def test_doctor_names_the_namespace_free_tier_where_no_namespace_can_be_made(tmp_path):
    sys.path.insert(0, str(HERE))
    from test_containment_modes import _server

    env = {k: v for k, v in os.environ.items() if not k.startswith(("AUTO_ANALYST_", "PYTEST"))}
    env.update(PYTHONPATH=str(REPO), AUTO_ANALYST_HOME=str(tmp_path / "home"), LITELLM_LOCAL_MODEL_COST_MAP="True")
    proc = subprocess.run(_server(0, 0, tmp_path, True, "-m", "auto_analyst.cli", "doctor", "--json"), env=env,
                          capture_output=True, text=True, timeout=120)
    items = {p["name"]: p for p in json.loads(proc.stdout.splitlines()[0])["protections"]}
    assert items["wall in force"]["active"] and items["wall in force"]["detail"].startswith("namespace-free: Landlock + seccomp")
    assert not items["OS sandbox (bubblewrap)"]["active"]
    assert items["namespace-free wall (Landlock + seccomp)"]["detail"].startswith(f"Landlock ABI {landwall.abi()}: ")
    assert items["own uid per session"]["active"] and not items["own namespaces per session"]["active"]
