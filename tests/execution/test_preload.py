"""The zygote's lazy preload: a small core first, the rest later, and a late display import still patched."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

from auto_analyst.execution import preload


def _fresh(code: str) -> dict:
    """Run ``code`` in a fresh interpreter (nothing imported yet) and return the JSON it prints."""
    out = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_the_core_is_only_what_a_session_needs_to_receive_its_tables() -> None:
    assert preload.CORE == ["numpy", "pandas", "pyarrow", "pyarrow.parquet"]
    assert not {n.split(".")[0] for n in preload.LATER} & {"numpy", "pandas", "pyarrow"}
    assert preload.LATER.index("plotly.io") < preload.LATER.index("sklearn")  # display libraries first


def test_import_for_imports_only_the_later_libraries_a_script_names() -> None:
    got = _fresh("""
        import json, sys
        from auto_analyst.execution import preload
        plain = preload.import_for("import os\\nx = df['a'].sum()\\nprint('import sklearn')\\n")
        after_plain = sorted(m for m in ("sklearn", "seaborn", "scipy", "statsmodels") if m in sys.modules)
        sns = preload.import_for("import numpy as np\\n  from seaborn import barplot\\n")
        again = preload.import_for("import seaborn as sns\\n")
        print(json.dumps({"plain": plain, "after_plain": after_plain, "sns": sns, "again": again,
                          "loaded": sorted(m for m in ("seaborn", "scipy.stats", "matplotlib.pyplot", "sklearn")
                                           if m in sys.modules)}))
    """)
    assert got == {"plain": False, "after_plain": [], "sns": True, "again": False,
                   "loaded": ["matplotlib.pyplot", "scipy.stats", "seaborn"]}


def test_a_display_library_imported_late_gets_the_display_patches() -> None:
    got = _fresh("""
        import json, sys
        from auto_analyst.execution import capture, preload
        capture.install_display_patches()  # as the zygote does before plotly is imported
        preload.install_patch_hook(capture.install_display_patches)
        before = "plotly.io" in sys.modules
        import plotly.io as pio
        import plotly.express as px
        import matplotlib.pyplot as plt
        print(json.dumps({"before": before, "pio": pio.show.__name__,
                          "plt": plt.show.__name__}))
    """)
    assert got["before"] is False
    assert got["pio"] == "_plotly_show"
    assert got["plt"] == "_plt_show"


def test_background_imports_one_module_per_step_then_warms_up_and_calls_after() -> None:
    got = _fresh("""
        import json, sys
        from auto_analyst.execution import preload
        calls = []
        bg = preload.Background(after=lambda: calls.append(1))
        steps = 0
        while not bg.done:
            bg.step(); steps += 1
        print(json.dumps({"steps": steps, "calls": calls, "sklearn": "sklearn.ensemble" in sys.modules,
                          "pending": bg.pending}))
    """)
    assert got == {"steps": len(preload.LATER) + 1, "calls": [1], "sklearn": True, "pending": []}
