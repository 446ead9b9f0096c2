"""A command-line process keeps dspy from importing IPython (notebook display only); others still get it."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from importlib.util import find_spec

import pytest

# Without IPython installed (the plain `.[test]` install) there is nothing for the finder to keep out.
needs_ipython = pytest.mark.skipif(find_spec("IPython") is None, reason="IPython is not installed (the notebook extra brings it)")


def _fresh(code: str) -> dict:
    out = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, timeout=300,
                         env={"LITELLM_LOCAL_MODEL_COST_MAP": "True", "PATH": "/usr/bin:/bin"})
    assert out.returncode == 0, out.stderr[-2000:]
    return json.loads(out.stdout.strip().splitlines()[-1])


@needs_ipython
def test_dspy_imports_without_ipython_and_ipython_still_imports_for_others() -> None:
    got = _fresh("""
        import json, sys
        from auto_analyst.cli.startup import skip_notebook_imports
        skip_notebook_imports()
        skip_notebook_imports()  # idempotent
        import dspy
        import dspy.evaluate.evaluate as ev
        after_dspy = sorted(m for m in ("IPython", "prompt_toolkit", "jedi") if m in sys.modules)
        fallback = ev.HTML("<b>x</b>")
        import IPython.display
        print(json.dumps({"after_dspy": after_dspy, "fallback": fallback, "evaluate": hasattr(dspy, "Evaluate"),
                          "later": "IPython" in sys.modules, "real_html": IPython.display.HTML.__module__,
                          "finders": sum(type(f).__name__ == "_NotebookOnly" for f in sys.meta_path)}))
    """)
    assert got == {"after_dspy": [], "fallback": "<b>x</b>", "evaluate": True, "later": True,
                   "real_html": "IPython.core.display", "finders": 1}


@needs_ipython
def test_without_the_finder_dspy_does_import_ipython() -> None:
    # the premise of auto_analyst/cli/startup.py: if dspy stops importing IPython, the finder can go
    got = _fresh("""
        import json, sys
        import dspy
        print(json.dumps({"ipython": "IPython" in sys.modules}))
    """)
    assert got == {"ipython": True}


def test_the_cli_entry_point_installs_the_finder() -> None:
    got = _fresh("""
        import json, sys
        from auto_analyst.cli import main
        try:
            main(["--version"])
        except SystemExit:
            pass
        print(json.dumps({"finders": sum(type(f).__name__ == "_NotebookOnly" for f in sys.meta_path)}))
    """)
    assert got == {"finders": 1}
