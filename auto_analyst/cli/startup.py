"""Start-up of a command-line process: keep dspy from importing IPython, which no command uses.

``import dspy`` imports ``IPython.display`` (in ``dspy/evaluate/evaluate.py``, to show evaluation
tables in a notebook) and ``IPython.core.magics.code`` (in ``dspy/teleprompt/utils.py`` and
``dspy/propose/utils.py``, to read a notebook cell's source), each inside ``try: ... except
ImportError`` with a plain fallback. IPython pulls in prompt_toolkit, jedi, parso, pygments and
traitlets: about 40% of the CPU of ``import dspy`` on this machine (``python -X importtime -m auto_analyst.cli ask ...``), paid by every ``ask`` before its
first answer (issue 12 item 5). A command-line process is never a notebook, so there those
imports get the ImportError their fallbacks expect. Any other importer still gets IPython, and a
process that already imported IPython (a notebook) never reaches the finder. See docs/sandbox.md,
"The first answer".
"""

from __future__ import annotations

import importlib.abc
import sys
from typing import Any

__all__ = ["DSPY_NOTEBOOK_ONLY", "skip_notebook_imports"]

DSPY_NOTEBOOK_ONLY = frozenset({"dspy.evaluate.evaluate", "dspy.teleprompt.utils", "dspy.propose.utils"})
"""dspy modules whose IPython import only serves notebooks and falls back when IPython is missing."""


class _NotebookOnly(importlib.abc.MetaPathFinder):
    """Refuses ``IPython`` (and submodules) to the modules of :data:`DSPY_NOTEBOOK_ONLY` only."""

    def find_spec(self, name: str, path: Any = None, target: Any = None) -> None:
        if name != "IPython" and not name.startswith("IPython."):
            return None
        frame = sys._getframe(1)
        while frame is not None:
            importer = frame.f_globals.get("__name__", "")
            if not importer.startswith("importlib") and importer != __name__:
                break  # the module whose import statement asked for IPython
            frame = frame.f_back
        if frame is not None and frame.f_globals.get("__name__") in DSPY_NOTEBOOK_ONLY:
            raise ModuleNotFoundError(f"No module named {name!r} (not imported for dspy outside a notebook)",
                                      name=name)
        return None


def skip_notebook_imports() -> None:
    """Install the finder (idempotent); call at the start of a command-line process only."""
    if not any(isinstance(f, _NotebookOnly) for f in sys.meta_path):
        sys.meta_path.insert(0, _NotebookOnly())
