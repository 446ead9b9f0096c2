"""What the zygote imports, and when: a small core before it is ready, the rest while it is idle.

Importing every analysis library (scipy, statsmodels, scikit-learn, plotly, matplotlib, seaborn) and
walking their lazy paths takes ≈2.5 s of CPU here; done before the zygote reported ready, the first
question of a process waited for all of it even when its script only used pandas (issue 12 item 5).
So the zygote imports only :data:`CORE` (what a session needs to receive its tables) before it is
ready, and :class:`Background` imports the rest one module at a time between spawn requests, then
warms them up and freezes the gc. A session forked before that finished imports what its scripts
need on first use (as for any library not preloaded), and :func:`install_patch_hook` makes sure a
late ``import plotly.io``/``matplotlib.pyplot`` still routes ``show()`` to the result (see
``capture.install_display_patches``). See docs/sandbox.md, "The first answer".
"""

from __future__ import annotations

import gc
import importlib
import importlib.abc
import re
import sys
from typing import Any, Callable

__all__ = ["CORE", "LATER", "Background", "import_core", "import_for", "install_patch_hook", "needs_later", "warm_up"]

CORE = ["numpy", "pandas", "pyarrow", "pyarrow.parquet"]
"""Imported before the zygote is ready: a session state process loads its tables (Parquet) with them."""

LATER = [
    "plotly", "plotly.io", "plotly.express", "plotly.graph_objects", "plotly.offline", "matplotlib",
    "matplotlib.pyplot", "scipy", "scipy.stats", "scipy.optimize", "statsmodels.api", "statsmodels.formula.api",
    "sklearn", "sklearn.ensemble", "sklearn.linear_model", "sklearn.model_selection", "sklearn.preprocessing",
    "sklearn.metrics", "sklearn.cluster", "sklearn.decomposition", "sklearn.tree", "sklearn.pipeline", "seaborn",
]
"""Imported by :class:`Background` after the zygote is ready, in this order (display libraries first)."""

_PATCHED_MODULES = frozenset({"plotly.io", "matplotlib.pyplot"})
_IMPORT_LINE = re.compile(r"^[ \t]*(?:import|from)[ \t]+([A-Za-z_]\w*)", re.MULTILINE)
_LATER_ROOTS = frozenset(n.split(".")[0] for n in LATER)


def _try_import(name: str) -> None:
    try:
        importlib.import_module(name)
    except Exception:  # noqa: BLE001 - an optional library missing only means a slower first import
        pass


def import_core() -> None:
    for name in CORE:
        _try_import(name)


def import_for(code: str) -> bool:
    """Import, here, the :data:`LATER` libraries that ``code``'s import lines name and that are not imported yet.

    Called by a session's state process before it hands a script to a run child: a session forked
    before the zygote's background imports finished would otherwise import them inside the run
    (counted in its timeout and in the memory it keeps). Only names of :data:`LATER` are imported,
    never anything the script names otherwise; the script itself is not run. A missed import line
    (``__import__``, an import in a string) only means the run imports the library itself.

    Returns:
        True when something was imported (children forked before are then out of date).
    """
    roots = {m for m in _IMPORT_LINE.findall(code) if m in _LATER_ROOTS and m not in sys.modules}
    if "seaborn" in roots:
        roots |= {"matplotlib", "scipy"}
    for name in LATER:
        if name.split(".")[0] in roots:
            _try_import(name)
    return bool(roots)


def needs_later(code: str) -> bool:
    """Whether ``code``'s import lines name one of the :data:`LATER` libraries (whatever this process imported):
    a session on the lean zygote then moves to the full one before running it (:meth:`.Sandbox.run`)."""
    return any(m in _LATER_ROOTS for m in _IMPORT_LINE.findall(code))


def _warm_pandas() -> None:
    import pandas as pd

    d = pd.DataFrame({"x": [1.0, 2.0, 3.0], "y": [3.0, 4.0, 5.0], "c": ["a", "b", "a"]})
    d.groupby("c").agg(total=("x", "sum"), mean=("y", "mean")).reset_index().sort_values("total")
    d.describe()


def warm_up(lean: bool = False) -> None:
    """Walk the common library paths once in the zygote, so every session and run forks them warm.

    Much is built lazily on first use (plotly's validators and templates, pandas' groupby
    machinery, matplotlib's font cache); done here once, it is shared copy-on-write by every
    child instead of being rebuilt (and paid for) in each run. ``lean``: only pandas' part.
    """
    try:
        _warm_pandas()
        if lean:
            return
        import matplotlib

        matplotlib.use("Agg")
        import io

        import matplotlib.pyplot as plt
        import pandas as pd
        import plotly.express as px

        d = pd.DataFrame({"x": [1.0, 2.0, 3.0], "y": [3.0, 4.0, 5.0], "c": ["a", "b", "a"]})
        for fig in (px.scatter(d, x="x", y="y", color="c", title="t"), px.bar(d, x="c", y="x"), px.line(d, x="x", y="y"),
                    px.histogram(d, x="x")):
            fig.to_json()
        fig, ax = plt.subplots()
        ax.plot([1, 2], [3, 4])
        fig.savefig(io.BytesIO(), format="png", dpi=50)
        plt.close("all")
    except Exception:  # noqa: BLE001 - only a speed-up
        pass


class _PatchAfterImport(importlib.abc.MetaPathFinder):
    """Calls ``patch()`` right after ``plotly.io`` or ``matplotlib.pyplot`` finishes importing."""

    def __init__(self, patch: Callable[[], None]) -> None:
        self.patch = patch

    def find_spec(self, name: str, path: Any = None, target: Any = None) -> Any:
        if name not in _PATCHED_MODULES:
            return None
        for finder in sys.meta_path:
            if finder is self or not hasattr(finder, "find_spec"):
                continue
            spec = finder.find_spec(name, path, target)
            if spec is not None:
                break
        else:
            return None
        loader, patch = spec.loader, self.patch
        if loader is None or not hasattr(loader, "exec_module"):
            return spec

        class _Loader(importlib.abc.Loader):
            def create_module(self, s: Any) -> Any:
                return loader.create_module(s)

            def exec_module(self, module: Any) -> None:
                loader.exec_module(module)
                sys.modules[name] = module  # patch() imports it by name
                patch()

        spec.loader = _Loader()
        return spec


def install_patch_hook(patch: Callable[[], None]) -> None:
    """Run ``patch`` (idempotent) whenever a display library is imported later in this process or its forks."""
    if not any(isinstance(f, _PatchAfterImport) for f in sys.meta_path):
        sys.meta_path.insert(0, _PatchAfterImport(patch))


class Background:
    """The zygote's idle-time imports: :meth:`step` imports one more module of :data:`LATER`.

    When all are imported it warms them up, calls ``after`` (the display patches) and freezes the gc
    again, so later forks share the new objects' pages too.
    """

    def __init__(self, after: Callable[[], None], lean: bool = False) -> None:
        self.pending = [] if lean else list(LATER)
        self.after = after
        self.lean = lean
        self.done = False

    def step(self) -> None:
        if self.done:
            return
        if self.pending:
            _try_import(self.pending.pop(0))
            return
        warm_up(self.lean)
        self.after()
        gc.collect()
        gc.freeze()
        from auto_analyst.execution.hugepages import collapse

        collapse()  # fewer page-table entries for every later fork to copy (execution/hugepages.py)
        self.done = True
