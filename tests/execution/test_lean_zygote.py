"""A session starts on the lean zygote (numpy, pandas, pyarrow only) and moves to the full one when its first
script imports a later library; after a run it keeps its variables and imports the library itself."""

from __future__ import annotations

import json

from auto_analyst.execution import preload
from auto_analyst.execution.sandbox import Sandbox

from tests.execution.test_preload import _fresh

_LOADED = "import sys\nprint(sorted(m for m in ('scipy', 'statsmodels', 'plotly', 'sklearn') if m in sys.modules))"


def test_needs_later_reads_the_import_lines_only() -> None:
    assert preload.needs_later("import pandas as pd\nx = df['a'].sum()\nprint('import sklearn')") is False
    assert preload.needs_later("import numpy as np\n  from scipy import stats\n") is True
    assert preload.needs_later("import plotly.express as px\n") is True
    # whatever this process imported: the caller (the web process) may have plotly loaded itself
    assert preload.needs_later("import pandas\n") is False


def test_the_lean_background_imports_nothing_later_and_warms_pandas() -> None:
    got = _fresh("""
        import json, sys
        from auto_analyst.execution import preload
        calls = []
        bg = preload.Background(after=lambda: calls.append(1), lean=True)
        steps = 0
        while not bg.done:
            bg.step(); steps += 1
        print(json.dumps({"steps": steps, "calls": calls, "later": sorted(
            m for m in ("plotly", "matplotlib", "scipy", "statsmodels", "sklearn") if m in sys.modules),
            "pandas": "pandas" in sys.modules}))
    """)
    assert got == {"steps": 1, "calls": [1], "later": [], "pandas": True}


def _loaded(sb: Sandbox) -> list[str]:
    result = sb.run(_LOADED)
    assert result.ok, result.error
    return json.loads(result.stdout.strip().replace("'", '"'))


def test_a_session_starts_lean_and_moves_to_the_full_zygote_for_a_first_script_that_needs_more(make_sandbox) -> None:
    lean = make_sandbox()
    assert lean._state_lean is True
    assert _loaded(lean) == []  # its processes never imported the later libraries

    moved = make_sandbox()
    result = moved.run("from scipy import stats\nprint(round(float(stats.norm.cdf(0)), 2), len(sales))")
    assert result.ok, result.error
    assert result.stdout.strip() == "0.5 6"  # the tables were sent again to the new state process
    assert moved._state_lean is False and moved._lean is False
    assert moved.run("print(len(shops))").stdout.strip() == "2"


def test_a_session_that_ran_a_script_keeps_its_variables_and_imports_in_place(make_sandbox) -> None:
    sb = make_sandbox()
    assert sb.run("kept = 41").ok
    result = sb.run("from scipy import stats\nprint(kept + 1, round(float(stats.norm.cdf(0)), 2))")
    assert result.ok, result.error
    assert result.stdout.strip() == "42 0.5"
    assert sb._state_lean is True and sb._lean is False  # a restart (after a crash) would use the full zygote
