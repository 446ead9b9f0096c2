"""What a script shows, turned into plain JSON and bytes (run inside the worker, and by the in-process reference).

Tables become records (capped rows, JSON-safe values), plotly figures become ``fig.to_json()``
text and matplotlib figures PNG bytes. Nothing here is ever pickled: the caller receives JSON.
"""

from __future__ import annotations

import datetime as _dt
import decimal
import io
import math
import sys
from typing import Any

import numpy as np
import pandas as pd

__all__ = ["MAX_TABLES", "MAX_FIGURES", "Collector", "json_safe", "table_record", "show", "set_collector",
           "install_display_patches", "new_namespace", "close_open_figures", "encode_figures"]

# What one run may show. Each table or figure is JSON or a file the caller writes and the UI
# renders: an adversarial script showed 100,000 tables. Past these, show() only counts, and the
# run's output ends with "[N more tables not shown]" (see Collector.notes).
MAX_TABLES = 50
MAX_FIGURES = 20
MAX_WARNINGS = 20  # a warning raised in a loop is kept once per distinct text anyway (see Collector.warn)


def json_safe(v: Any) -> Any:
    """One cell value as JSON: NaN/NA/NaT -> None, ±inf -> "inf"/"-inf", timestamps -> ISO strings, numpy -> python."""
    if v is None or isinstance(v, (bool, str)):
        return v
    if isinstance(v, (int, np.integer)) and not isinstance(v, (bool, np.bool_)):
        return int(v)
    if isinstance(v, np.bool_):
        return bool(v)
    if isinstance(v, (float, np.floating)):
        f = float(v)
        if math.isnan(f):
            return None
        if math.isinf(f):
            return "inf" if f > 0 else "-inf"
        return f
    if isinstance(v, decimal.Decimal):
        return json_safe(float(v))
    try:
        if v is pd.NA or v is pd.NaT or (not isinstance(v, (list, tuple, dict, np.ndarray)) and pd.isna(v) is True):
            return None
    except (TypeError, ValueError):
        pass
    if isinstance(v, (pd.Timestamp, _dt.datetime, _dt.date, _dt.time)):
        return v.isoformat()
    if isinstance(v, (pd.Timedelta, _dt.timedelta, pd.Period, pd.Interval)):
        return str(v)
    if isinstance(v, complex):
        return str(v)
    if isinstance(v, bytes):
        return v.decode("utf-8", "replace")
    if isinstance(v, (list, tuple, np.ndarray)):
        return [json_safe(x) for x in list(v)[:100]]
    if isinstance(v, dict):
        return {str(k): json_safe(x) for k, x in list(v.items())[:100]}
    return str(v)


def _flat(col: Any) -> str:
    if isinstance(col, tuple):
        return "_".join(str(c) for c in col if str(c) != "")
    return str(col)


def _as_frame(obj: Any) -> pd.DataFrame | None:
    if isinstance(obj, pd.DataFrame):
        frame = obj
    elif isinstance(obj, pd.Series):
        frame = obj.to_frame(name=obj.name if obj.name is not None else "value")
    elif isinstance(obj, pd.Index):
        frame = obj.to_frame(index=False)
    elif isinstance(obj, np.ndarray) and obj.ndim in (1, 2):
        frame = pd.DataFrame(obj)
    else:
        return None
    # A named or non-integer index carries information (groupby keys, dates, describe()'s labels):
    # keep it as columns. An unnamed integer index is just row positions left over from filtering.
    idx = frame.index
    if any(n is not None for n in idx.names) or idx.nlevels > 1 or not pd.api.types.is_integer_dtype(idx.dtype):
        names = [n if n is not None else ("index" if frame.index.nlevels == 1 else f"level_{i}") for i, n in enumerate(frame.index.names)]
        frame = frame.copy(deep=False)
        frame.index = frame.index.set_names(names)
        frame = frame.reset_index(allow_duplicates=True)
    return frame


_SCALARS = (str, bytes, bool, int, float, complex, decimal.Decimal, np.generic, pd.Timedelta, _dt.date, _dt.time)


def table_record(obj: Any, name: str, max_rows: int) -> dict[str, Any] | None:
    """A TableOut-shaped dict for a DataFrame/Series/Index/array, or a scalar as one ``value`` row; None otherwise."""
    frame = _as_frame(obj)
    if frame is None:
        if obj is None or isinstance(obj, _SCALARS):
            return {"name": name, "columns": ["value"], "rows": [[json_safe(obj)]], "n_rows": 1}
        return None
    head = frame.head(max(0, max_rows))
    rows = [[json_safe(v) for v in row] for row in head.itertuples(index=False, name=None)]
    return {"name": name, "columns": [_flat(c) for c in frame.columns], "rows": rows, "n_rows": int(len(frame))}


def _figure_title(fig: Any, default: str) -> str:
    try:
        text = fig.layout.title.text
        if text:
            return str(text)
    except AttributeError:
        pass
    try:
        suptitle = getattr(fig, "_suptitle", None)
        if suptitle is not None and suptitle.get_text():
            return suptitle.get_text()
        for ax in fig.axes:
            if ax.get_title():
                return ax.get_title()
    except Exception:  # noqa: BLE001 - a title is decoration; never fail a run for it
        pass
    return default


def _mpl_figure(obj: Any) -> Any:
    """The matplotlib Figure behind a Figure, Axes, seaborn grid or array of Axes; else None."""
    if "matplotlib" not in sys.modules:
        return None
    from matplotlib.figure import Figure, SubFigure

    if isinstance(obj, SubFigure):
        return obj.figure
    if isinstance(obj, Figure):
        return obj
    for attr in ("figure", "fig"):
        fig = getattr(obj, attr, None)
        if isinstance(fig, Figure):
            return fig
    if isinstance(obj, np.ndarray) and obj.size and obj.dtype == object:
        return _mpl_figure(obj.flat[0])
    return None


def _is_plotly(obj: Any) -> bool:
    return "plotly" in sys.modules and type(obj).__module__.startswith("plotly") and hasattr(obj, "to_json")


class Collector:
    """Collects what one run shows. ``tables`` are TableOut dicts; ``figures`` hold bytes until the caller saves them."""

    def __init__(self, max_rows: int):
        self.max_rows = max_rows
        self.tables: list[dict[str, Any]] = []
        self.figures: list[dict[str, Any]] = []  # {"kind", "title", "data": bytes}
        self._shown_mpl: set[int] = set()
        self.warnings: list[str] = []  # "Category: message", kept apart from stdout (warnings are not results)
        self.more_tables = 0
        self.more_figures = 0

    def notes(self) -> str:
        """Lines for the run's output saying what was shown past MAX_TABLES / MAX_FIGURES."""
        out = ""
        if self.more_tables:
            out += f"[{self.more_tables} more tables not shown]\n"
        if self.more_figures:
            out += f"[{self.more_figures} more figures not shown]\n"
        return out

    def show(self, obj: Any, name: str | None = None, title: str | None = None) -> None:
        """Record ``obj`` as a result: a DataFrame/Series/scalar becomes a table, a figure a chart.

        Args:
            obj: a pandas DataFrame/Series/Index, a numpy array, a scalar, a plotly figure, or a
                matplotlib Figure/Axes.
            name: the table's name (default ``table_<n>``).
            title: the figure's title (default: the figure's own title).

        Raises:
            TypeError: ``obj`` is none of those.
        """
        if _is_plotly(obj):
            if len(self.figures) >= MAX_FIGURES:
                self.more_figures += 1
                return
            self.figures.append({"kind": "plotly", "title": title or _figure_title(obj, ""), "data": obj.to_json().encode("utf-8")})
            return
        fig = _mpl_figure(obj)
        if fig is not None:
            self._add_mpl(fig, title)
            return
        if len(self.tables) >= MAX_TABLES:
            if _as_frame(obj) is None and not (obj is None or isinstance(obj, _SCALARS)):
                raise TypeError(f"show() takes a DataFrame, Series, scalar or figure, not {type(obj).__name__}")
            self.more_tables += 1
            return
        rec = table_record(obj, name or f"table_{len(self.tables) + 1}", self.max_rows)
        if rec is None:
            raise TypeError(f"show() takes a DataFrame, Series, scalar or figure, not {type(obj).__name__}")
        self.tables.append(rec)

    def _add_mpl(self, fig: Any, title: str | None = None) -> None:
        if id(fig) in self._shown_mpl:
            return
        self._shown_mpl.add(id(fig))
        if len(self.figures) >= MAX_FIGURES:
            self.more_figures += 1
            return
        buf = io.BytesIO()
        fig.savefig(buf, format="png", dpi=100, bbox_inches="tight")
        self.figures.append({"kind": "png", "title": title or _figure_title(fig, ""), "data": buf.getvalue()})

    def warn(self, message: Any, category: type, *args: Any, **kwargs: Any) -> None:
        """``warnings.showwarning`` while a script runs: the warning is kept apart, never printed to stdout."""
        text = f"{getattr(category, '__name__', 'Warning')}: {message}"[:500]
        if text not in self.warnings and len(self.warnings) < MAX_WARNINGS:
            self.warnings.append(text)

    def show_open_mpl_figures(self) -> None:
        """Record every open matplotlib figure and close it (what ``plt.show()`` would have displayed)."""
        if "matplotlib.pyplot" not in sys.modules:
            return
        import matplotlib.pyplot as plt

        for num in list(plt.get_fignums()):
            fig = plt.figure(num)
            try:
                self._add_mpl(fig)
            finally:
                plt.close(fig)


_current: dict[str, Collector | None] = {"c": None}


def set_collector(c: Collector | None) -> None:
    _current["c"] = c


def show(obj: Any, name: str | None = None, title: str | None = None) -> None:
    """Show a table, value or figure as a result of this run (DataFrame, Series, scalar, plotly or matplotlib figure)."""
    c = _current["c"]
    if c is None:
        raise RuntimeError("show() is only available while a script runs")
    c.show(obj, name=name, title=title)


def install_display_patches() -> None:
    """Route plotly's ``fig.show()`` and matplotlib's ``plt.show()`` to :func:`show`; idempotent.

    Nothing may open a browser or a window: a blocking chart window was a reported failure of
    similar tools, and a browser launch would try to start a process. Warnings a script raises go to
    the run's collector (``Collector.warnings``), not to its output.
    """
    import warnings

    if not getattr(warnings.showwarning, "_aa_collects", False):
        original = warnings.showwarning

        def _showwarning(message: Any, category: type, *args: Any, **kwargs: Any) -> None:
            c = _current["c"]
            if c is None:
                original(message, category, *args, **kwargs)
            else:
                c.warn(message, category)

        _showwarning._aa_collects = True  # type: ignore[attr-defined]
        warnings.showwarning = _showwarning
    if "plotly.io" in sys.modules:
        import plotly.io as pio
        import plotly.io._renderers as pren

        def _plotly_show(fig: Any, *args: Any, **kwargs: Any) -> None:
            show(fig)

        pio.show = pren.show = _plotly_show
        try:
            import plotly.offline as poff

            poff.plot = poff.iplot = lambda fig, *a, **k: show(fig)
        except ImportError:
            pass
    if "matplotlib.pyplot" in sys.modules:
        import matplotlib.pyplot as plt
        from matplotlib.figure import Figure

        def _plt_show(*args: Any, **kwargs: Any) -> None:
            c = _current["c"]
            if c is not None:
                c.show_open_mpl_figures()

        def _fig_show(self: Any, *args: Any, **kwargs: Any) -> None:
            show(self)

        plt.show = _plt_show
        Figure.show = _fig_show


def close_open_figures() -> None:
    if "matplotlib.pyplot" in sys.modules:
        import matplotlib.pyplot as plt

        plt.close("all")


def new_namespace() -> dict[str, Any]:
    """A fresh script namespace: pd, np, show, and empty tables/df."""
    import builtins

    return {"__name__": "__main__", "__builtins__": builtins, "pd": pd, "np": np, "show": show, "tables": {}, "df": None}


def encode_figures(figures: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], list[bytes]]:
    """Split figures into JSON metadata (with a blob index) and the blobs."""
    meta, blobs = [], []
    for f in figures:
        meta.append({"kind": f["kind"], "title": f["title"], "blob": len(blobs)})
        blobs.append(f["data"])
    return meta, blobs
