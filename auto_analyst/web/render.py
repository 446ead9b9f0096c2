"""Turn API objects into the JSON the page displays (the page renders only this JSON).

Markdown becomes HTML only here, and only through nh3's allow-list: the answer text comes from a
model and may contain anything. Every other string (column names, cells, code, errors) goes to
the page as data and is put into the DOM with ``textContent``.
"""

from __future__ import annotations

import dataclasses
import json
from typing import Any

import nh3
from markdown_it import MarkdownIt

from auto_analyst.results import Result

__all__ = ["answer_html", "load_report", "result_json", "table_preview"]

PREVIEW_ROWS = 20
_ALLOWED_TAGS = {"p", "br", "strong", "em", "b", "i", "code", "pre", "ul", "ol", "li", "blockquote", "h1", "h2",
                 "h3", "h4", "h5", "h6", "table", "thead", "tbody", "tr", "th", "td", "hr", "a", "del"}
# html=False: raw HTML in model output is shown as text, not parsed; nh3 then removes whatever
# markdown itself produced outside the allow-list (e.g. javascript: links, images that call home).
_md = MarkdownIt("commonmark", {"html": False, "linkify": False}).enable("table").enable("strikethrough")


def answer_html(markdown: str) -> str:
    """Sanitised HTML of an answer's markdown."""
    return nh3.clean(_md.render(markdown or ""), tags=_ALLOWED_TAGS, attributes={"a": {"href", "title"}},
                     url_schemes={"http", "https", "mailto"}, link_rel="noopener noreferrer nofollow")


def _frame_rows(frame: Any) -> dict[str, Any]:
    # pandas' own JSON writer turns NaN/NaT into null, timestamps into ISO text and numpy scalars
    # into plain numbers, which json.dumps alone cannot do.
    split = json.loads(frame.to_json(orient="split", date_format="iso", index=False, default_handler=str))
    return {"columns": [str(c) for c in frame.columns], "rows": split["data"]}


def table_preview(table: Any, upload: Any = None, rows: int = PREVIEW_ROWS) -> dict[str, Any]:
    """First rows, dtypes and load report of a :class:`~auto_analyst.data.load.LoadedTable`."""
    frame = table.frame
    out = {"name": table.name, "n_rows": int(len(frame)), "n_columns": int(frame.shape[1]),
           "dtypes": [str(t) for t in frame.dtypes], "file": upload.original_name if upload else "",
           "report": load_report(table.report, upload.original_name if upload else "")}
    out.update(_frame_rows(frame.head(rows)))
    return out


def load_report(report: Any, file_name: str = "") -> dict[str, Any]:
    """The load report as JSON, naming the user's file instead of the server-side path."""
    data = dataclasses.asdict(report)
    data["path"] = file_name
    return data


def result_json(result: Result, conv_id: str, index: int) -> dict[str, Any]:
    """A Result as the page gets it: sanitised ``answer_html``, figure URLs instead of server paths.

    Args:
        result: the API result.
        conv_id: the conversation (session) id, for URLs.
        index: the result's position in ``session.results`` (URLs address it by this).
    """
    data = result.model_dump(mode="json")
    base = f"/api/sessions/{conv_id}/results/{index}"
    data["index"] = index
    data["answer_html"] = answer_html(result.answer)
    data["figures"] = [{"kind": f["kind"], "title": f["title"], "url": f"{base}/figures/{i}"}
                       for i, f in enumerate(data["figures"])]
    for i, t in enumerate(data["tables"]):
        t["csv_url"] = f"{base}/tables/{i}.csv"
    return data
