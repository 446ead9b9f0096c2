"""What a sandboxed run returns: tables, figures, output, errors, and the session's state."""

from __future__ import annotations

import json
import threading
from pathlib import Path

import pandas as pd
import pytest

from auto_analyst.errors import BadInputError
from auto_analyst.execution import capture
from auto_analyst.execution.sandbox import run_in_process


def test_show_groupby_returns_the_right_rows(sandbox):
    r = sandbox.run("out = df.groupby('region')['amount'].sum()\nshow(out, name='by_region')\nprint('done')")
    assert r.ok, r.error
    assert r.stdout == "done\n"
    (t,) = r.tables
    assert t.name == "by_region"
    assert t.columns == ["region", "amount"]
    assert t.rows == [["east", 0.0], ["north", 42.5], ["south", 25.0]]
    assert t.n_rows == 3
    assert "out" in r.names and "df" in r.names and "sales" in r.names and "pd" not in r.names


def test_values_are_json_safe_and_rows_capped(make_sandbox):
    sb = make_sandbox(max_table_rows=2)
    r = sb.run("show(df)\nshow(df['amount'].mean(), name='mean')\nshow(np.float32(1.5))")
    assert r.ok, r.error
    full, mean, scalar = r.tables
    assert full.n_rows == 6 and len(full.rows) == 2
    assert full.columns == ["region", "amount", "day"]
    assert full.rows[0] == ["north", 10.0, "2024-01-01T00:00:00"]
    assert (mean.columns, mean.rows, mean.n_rows) == (["value"], [[13.5]], 1)
    assert scalar.rows == [[1.5]] and isinstance(scalar.rows[0][0], float)
    r = sb.run("show(df[df['amount'].isna()])")
    assert r.tables[0].rows == [["east", None, "2024-01-04T00:00:00"]]
    json.dumps(r.model_dump())  # the whole result is plain JSON


def test_plotly_and_matplotlib_figures_become_files(sandbox, tmp_path: Path):
    code = (
        "import plotly.express as px\n"
        "fig = px.bar(df, x='region', y='amount', title='Amounts')\n"
        "fig.show()\n"
        "import matplotlib.pyplot as plt\n"
        "plt.plot([1, 2, 3]); plt.title('Line')\nplt.show()\n"
        "fig2, ax = plt.subplots(); ax.bar(['a'], [1])\n"  # left open: captured at the end
    )
    r = sandbox.run(code)
    assert r.ok, r.error
    kinds = [f.kind for f in r.figures]
    assert kinds == ["plotly", "png", "png"]
    plotly = r.figures[0]
    assert plotly.title == "Amounts"
    assert Path(plotly.path).parent == tmp_path / "figures"
    spec = json.loads(Path(plotly.path).read_text())
    assert spec["data"][0]["type"] == "bar"
    assert r.figures[1].title == "Line"
    for f in r.figures[1:]:
        assert Path(f.path).read_bytes().startswith(b"\x89PNG")
    assert len({f.path for f in r.figures}) == 3
    # Figures are closed after the run: the next run shows none.
    assert sandbox.run("x = 1").figures == []


def test_state_persists_and_a_failed_run_keeps_it(sandbox):
    assert sandbox.run("x = 41\ndf['double'] = df['amount'] * 2").ok
    r = sandbox.run("x = x + 1\nprint(x)")
    assert r.ok and r.stdout == "42\n"
    bad = sandbox.run("x = 1000\ndf.drop(columns=['double'], inplace=True)\ny = 5\nraise ValueError('nope')")
    assert not bad.ok and bad.error.kind == "ValueError"
    assert "y" not in bad.names  # the names of the state that carries on
    r = sandbox.run("print(x, 'double' in df.columns, 'y' in dir())")
    assert r.stdout == "42 True False\n"


def test_error_message_and_traceback_point_at_the_script(sandbox):
    r = sandbox.run("a = 1\nb = df['colA']\n")
    assert not r.ok
    assert r.error.kind == "KeyError"
    assert r.error.message == "KeyError: 'colA'"
    assert 'File "<script>", line 2' in r.traceback
    assert "b = df['colA']" in r.traceback
    assert "site-packages" not in r.traceback  # only the script's own frames
    r = sandbox.run("x = (1,\nprint(x)")
    assert r.error.kind == "SyntaxError" and "line 1" in r.error.message


def test_output_is_cut_and_a_print_flood_stops(make_sandbox):
    sb = make_sandbox(run_max_output_bytes=1000)
    r = sb.run("for i in range(500): print('line', i)")
    assert r.ok
    assert r.stdout.endswith("[output cut]\n") and len(r.stdout) < 1100
    assert r.stdout.startswith("line 0\nline 1\n")
    r = sb.run("while True: print('spam' * 100)")
    assert not r.ok and r.error.kind == "output_limit"


def test_sys_exit_zero_is_a_normal_end(sandbox):
    r = sandbox.run("z = 3\nimport sys\nsys.exit(0)\nz = 4")
    assert r.ok and "z" in r.names
    assert sandbox.run("print(z)").stdout == "3\n"


def test_variables_and_tables(sandbox, table_files):
    sandbox.run("total = float(df['amount'].sum())\nlabel = 'north'\ndef helper(x):\n    return x")
    v = sandbox.variables()
    assert v["df"] == "DataFrame 6x3 [region, amount, day]"
    assert v["shops"] == "DataFrame 2x2 [shop, staff]"
    assert v["total"] == "float 67.5"
    assert v["label"] == "str 'north'"
    assert v["helper"] == "function"
    assert "pd" not in v and "show" not in v
    sandbox.set_active("shops")
    assert sandbox.run("print(list(df.columns), sorted(tables))").stdout == "['shop', 'staff'] ['sales', 'shops']\n"
    with pytest.raises(BadInputError):
        sandbox.set_active("nope")


def test_load_tables_again_adds_a_table_and_keeps_the_others(sandbox, table_files, tmp_path):
    sandbox.run("sales['flag'] = 1")  # an in-session change to a loaded table
    extra = tmp_path / "data" / "more-data.parquet"
    pd.DataFrame({"k": [1, 2, 3]}).to_parquet(extra)
    sandbox.load_tables({**table_files, "more-data": extra}, "more-data")
    r = sandbox.run("print(len(df), 'flag' in sales.columns, sorted(tables))")
    assert r.stdout == "3 True ['more-data', 'sales', 'shops']\n"
    assert oct(extra.stat().st_mode & 0o777) == "0o400"


def test_cancel_stops_a_run(sandbox):
    cancel = threading.Event()
    threading.Timer(0.3, cancel.set).start()
    r = sandbox.run("import time\nwhile True: time.sleep(0.01)", cancel=cancel)
    assert not r.ok and r.error.kind == "cancelled"
    assert r.seconds < 3
    assert sandbox.run("print('still here')").stdout == "still here\n"


def test_run_in_process_reference_matches():
    frame = pd.DataFrame({"g": ["a", "b", "a"], "v": [1, 2, 3]})
    r = run_in_process("show(df.groupby('g')['v'].sum())\nprint('hi')", {"t": frame}, "t")
    assert r.ok and r.stdout == "hi\n"
    assert r.tables[0].rows == [["a", 4], ["b", 2]]


def test_json_safe_values():
    import numpy as np

    assert capture.json_safe(np.int64(3)) == 3 and type(capture.json_safe(np.int64(3))) is int
    assert capture.json_safe(float("nan")) is None
    assert capture.json_safe(pd.NaT) is None and capture.json_safe(pd.NA) is None
    assert capture.json_safe(float("inf")) == "inf"
    assert capture.json_safe(pd.Timestamp("2024-05-01 10:00")) == "2024-05-01T10:00:00"
    assert capture.json_safe(np.bool_(True)) is True
