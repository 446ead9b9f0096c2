"""The exports blueprint: files out of a conversation (script, notebook, chart files, result tables as CSV).

Every file is looked up through the cookie user's conversation, and a figure path is served only
if it lies inside that session's own folder: a path in a Result is never trusted as is.
"""

from __future__ import annotations

import csv
import io
import re
from pathlib import Path

from flask import Blueprint, Response, send_file

from auto_analyst.results import display_rows
from auto_analyst.web.chat import conversation
from auto_analyst.web.conversations import Conversation
from auto_analyst.web.errors import ApiError

__all__ = ["bp"]

bp = Blueprint("exports", __name__)


def _sources(conv: Conversation):
    from auto_analyst.export import table_sources

    return table_sources(conv.session, {n: u.original_name for u in conv.uploads for n in u.tables})


def _download_name(conv: Conversation, suffix: str) -> str:
    stem = Path(conv.uploads[0].original_name).stem if conv.uploads else "analysis"
    return (re.sub(r"[^A-Za-z0-9_.-]+", "_", stem).strip("_") or "analysis") + "_analysis" + suffix


@bp.get("/api/sessions/<sid>/export.py")
def export_py(sid: str):
    """The conversation as a runnable script (loads the tables from their original file names)."""
    from auto_analyst.export import export_script

    conv = conversation(sid)
    text = export_script(conv.session, _sources(conv))
    return Response(text, mimetype="text/x-python", headers={
        "Content-Disposition": f'attachment; filename="{_download_name(conv, ".py")}"'})


@bp.get("/api/sessions/<sid>/export.ipynb")
def export_ipynb(sid: str):
    """The conversation as a Jupyter notebook."""
    import nbformat

    from auto_analyst.export import export_notebook

    conv = conversation(sid)
    text = nbformat.writes(export_notebook(conv.session, _sources(conv)))
    return Response(text, mimetype="application/x-ipynb+json", headers={
        "Content-Disposition": f'attachment; filename="{_download_name(conv, ".ipynb")}"'})


def _result(conv: Conversation, index: int):
    results = conv.session.results
    if not 0 <= index < len(results):
        raise ApiError(404, "not_found", "No such answer in this conversation.")
    return results[index]


@bp.get("/api/sessions/<sid>/results/<int:index>/figures/<int:fig>")
def figure(sid: str, index: int, fig: int):
    """A chart of an answer: plotly JSON, or the PNG image.

    Raises:
        ApiError: 404 for an unknown answer or figure, or a file outside the session's folder.
    """
    conv = conversation(sid)
    figures = _result(conv, index).figures
    if not 0 <= fig < len(figures):
        raise ApiError(404, "not_found", "No such chart in this answer.")
    path = Path(figures[fig].path).resolve()
    owner = Path(conv.session.dir).resolve()
    if not path.is_relative_to(owner) or not path.is_file():
        raise ApiError(404, "not_found", "The chart file is gone.")
    mimetype = "application/json" if figures[fig].kind == "plotly" else "image/png"
    return send_file(path, mimetype=mimetype, max_age=3600)


@bp.get("/api/sessions/<sid>/results/<int:index>/tables/<int:tab>.csv")
def table_csv(sid: str, index: int, tab: int):
    """A result table as CSV (the rows the Result kept: at most ``max_table_rows``)."""
    conv = conversation(sid)
    tables = _result(conv, index).tables
    if not 0 <= tab < len(tables):
        raise ApiError(404, "not_found", "No such table in this answer.")
    t = tables[tab]
    buf = io.StringIO()
    writer = csv.writer(buf)
    # A cell starting with = + - @ runs as a formula in spreadsheet apps (CSV injection):
    # prefix a quote so it opens as the text it is.
    writer.writerow([_cell(c) for c in t.columns])
    # the file a person opens: no float noise, integral floats as integers (the JSON keeps the computed values)
    writer.writerows([[_cell(v) for v in row] for row in display_rows(t.rows)])
    name = re.sub(r"[^A-Za-z0-9_.-]+", "_", t.name).strip("_") or "table"
    return Response(buf.getvalue(), mimetype="text/csv",
                    headers={"Content-Disposition": f'attachment; filename="{name}.csv"'})


def _cell(value):
    if isinstance(value, str) and value[:1] in ("=", "+", "-", "@", "\t", "\r"):
        try:
            float(value)
            return value
        except ValueError:
            return "'" + value
    return value
