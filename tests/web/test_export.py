"""Exports: the session's analysis as a script and a notebook that run on their own next to the data file."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys

import nbformat
import pytest

from auto_analyst.export import export_notebook, export_script, table_sources

# Charts would open a browser in a standalone run; plotly's json renderer prints them instead.
_ENV = {"PLOTLY_RENDERER": "json", "MPLBACKEND": "Agg"}


@pytest.fixture(scope="module")
def session(tmp_path_factory):
    from auto_analyst.api import Analyst
    from auto_analyst.config import Settings

    analyst = Analyst(settings=Settings.load({"home": tmp_path_factory.mktemp("export_home")}))
    s = analyst.session(user="exporter")
    s.load("datasets/grunfeld.csv")
    assert s.ask("bar chart of total invest by firm").status == "ok"
    assert s.ask("now only for 1950").status == "ok"
    s.run_code("1/0")  # a failed run is listed, not exported as code
    yield s
    analyst.close()


def _run(script_dir, name, env_extra=None, cwd=None):
    env = {k: v for k, v in os.environ.items() if not k.startswith("AUTO_ANALYST")} | _ENV | (env_extra or {})
    return subprocess.run([sys.executable, str(script_dir / name)], cwd=cwd or script_dir, env=env,
                          capture_output=True, text=True, timeout=120)


def test_script_runs_standalone_next_to_the_data_file(session, tmp_path, datasets_dir):
    text = export_script(session)
    assert "grunfeld = read_table(HERE / 'grunfeld.csv')" in text and "def show(" in text
    assert "1/0" not in text and "not exported: error" in text
    compile(text, "analysis.py", "exec")
    (tmp_path / "analysis.py").write_text(text)
    shutil.copy(datasets_dir / "grunfeld.csv", tmp_path)
    elsewhere = tmp_path / "other"
    elsewhere.mkdir()
    done = _run(tmp_path, "analysis.py", cwd=elsewhere)
    assert done.returncode == 0, done.stderr
    assert "12160.4" in done.stdout and "642.9" in done.stdout
    # no notebook to draw in: each chart is written as HTML where the script runs
    assert "chart saved to figure_1.html" in done.stdout and (elsewhere / "figure_1.html").exists()


def test_script_falls_back_to_pandas_without_auto_analyst(session, tmp_path, datasets_dir):
    (tmp_path / "analysis.py").write_text(export_script(session))
    shutil.copy(datasets_dir / "grunfeld.csv", tmp_path)
    blocker = tmp_path / "block" / "auto_analyst"
    blocker.mkdir(parents=True)
    (blocker / "__init__.py").write_text("raise ImportError('not installed')\n")
    done = _run(tmp_path, "analysis.py", {"PYTHONPATH": str(blocker.parent)})
    assert done.returncode == 0, done.stderr
    assert "642.9" in done.stdout


def test_notebook_is_valid_and_its_cells_run_in_order(session, tmp_path, datasets_dir, monkeypatch):
    nb = export_notebook(session)
    nbformat.validate(nb)
    kinds = [c.cell_type for c in nb.cells]
    assert kinds[:3] == ["markdown", "code", "code"] and kinds.count("code") == 4
    assert "grunfeld = read_table('grunfeld.csv')" in nb.cells[2].source
    assert "now only for 1950" in "".join(c.source for c in nb.cells if c.cell_type == "markdown")
    shutil.copy(datasets_dir / "grunfeld.csv", tmp_path)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("PLOTLY_RENDERER", "json")
    ns: dict = {"__name__": "__main__"}
    for cell in nb.cells:
        if cell.cell_type == "code":
            exec(compile(cell.source, "<cell>", "exec"), ns)  # noqa: S102 - our own export, in a test
    assert float(ns["plot_data_1"]["total invest"].max()) == 642.9


def test_file_names_are_python_literals_even_when_odd(session):
    import dataclasses

    sources = [dataclasses.replace(s, file="it's \"odd\"\n.csv") for s in table_sources(session)]
    text = export_script(session, sources)
    compile(text, "x.py", "exec")


def test_web_export_endpoints_use_the_original_file_name(browser, datasets_dir):
    sid = browser.new_session()
    browser.upload(sid, datasets_dir / "grunfeld.csv", name="Grunfeld data.csv")
    browser.ask(sid, "total invest by firm")
    py = browser.get(f"/api/sessions/{sid}/export.py")
    assert py.status_code == 200 and 'filename="Grunfeld_data_analysis.py"' in py.headers["Content-Disposition"]
    assert "grunfeld_data = read_table(HERE / 'Grunfeld data.csv')" in py.get_data(as_text=True)
    nb = browser.get(f"/api/sessions/{sid}/export.ipynb")
    assert nb.status_code == 200 and nb.headers["Content-Disposition"].endswith('.ipynb"')
    notebook = nbformat.reads(nb.get_data(as_text=True), as_version=4)
    nbformat.validate(notebook)
    assert "read_table('Grunfeld data.csv')" in notebook.cells[2].source
    assert json.loads(nb.data)["nbformat"] == 4
