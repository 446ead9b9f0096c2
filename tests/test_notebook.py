"""The walkthrough notebook is valid and its code cells run top to bottom (offline)."""

import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

REPO = Path(__file__).resolve().parents[1]


@pytest.mark.slow  # the notebook runs the API end to end, as the API tests already do; CI runs it
def test_walkthrough_notebook_runs(tmp_path):
    nb = nbformat.read(REPO / "notebooks" / "walkthrough.ipynb", as_version=4)
    nbformat.validate(nb)
    script = "\n\n".join(c.source for c in nb.cells if c.cell_type == "code")
    (tmp_path / "walkthrough.py").write_text(script.replace("\nfig  # renders in Jupyter", "\nprint(fig.data[0].type)"))
    out = subprocess.run([sys.executable, str(tmp_path / "walkthrough.py")], cwd=REPO, capture_output=True, text=True,
                         timeout=300, env={"AUTO_ANALYST_HOME": str(tmp_path / "home"), "PATH": "/usr/bin:/bin",
                                           "LITELLM_LOCAL_MODEL_COST_MAP": "True"})
    assert out.returncode == 0, out.stderr[-2000:]
    assert "General Motors: 12160.4" in out.stdout  # total invest by firm
    assert "bar" in out.stdout and "R-squared" in out.stdout
