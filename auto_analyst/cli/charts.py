"""Charts for a terminal: a chart a script made becomes a file a browser or an image viewer opens.

A run returns plotly charts as plotly JSON (what the web page draws), which no viewer opens. For the
terminal, :func:`chart_files` writes beside that JSON:

* a self-contained HTML page, by plotly's own writer with plotly.js embedded (``include_plotlyjs=True``):
  it opens offline, from any folder, with no CDN;
* a PNG, only where plotly's static-image renderer (the ``kaleido`` package, with a Chrome it finds) is
  installed; without one there is no PNG and nothing is said about it beyond ``--open``'s HTML.

The JSON came from the sandbox, so it is treated as untrusted input: plotly validates it into a Figure
(properties it does not know are skipped) and its JSON writer escapes ``<``, ``>`` and ``/`` inside the page's
script, so a title cannot close the script element.
"""

from __future__ import annotations

import logging
import webbrowser
from dataclasses import dataclass
from pathlib import Path

__all__ = ["ChartFiles", "chart_files", "open_in_browser"]

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class ChartFiles:
    """The files of one chart: ``source`` (as the run saved it), and the ``html``/``png`` made here (or None)."""

    source: Path
    html: Path | None = None
    png: Path | None = None

    @property
    def best(self) -> Path:
        """The file to show a person: the HTML page, else the PNG, else the source."""
        return self.html or self.png or self.source


def chart_files(kind: str, path: str | Path) -> ChartFiles:
    """Write the HTML page (and a PNG where a renderer is installed) of the plotly chart at ``path``.

    A PNG chart (``kind='png'``) is already viewable and is returned as it is. Files already written (the same
    chart printed twice) are reused. A chart that cannot be read is returned without HTML (the run's file
    stays listed) rather than failing the answer.
    """
    source = Path(path)
    if kind != "plotly":
        return ChartFiles(source, png=source if source.suffix == ".png" else None)
    html, png = source.with_suffix(".html"), source.with_suffix(".png")
    try:
        if not html.exists() or (_can_render_png() and not png.exists()):
            import plotly.io as pio

            figure = pio.from_json(source.read_text(encoding="utf-8"), skip_invalid=True)
            if not html.exists():
                figure.write_html(html, include_plotlyjs=True, full_html=True)
            if _can_render_png() and not png.exists():
                try:
                    figure.write_image(png)
                except Exception:  # noqa: BLE001 - kaleido without a usable Chrome: the HTML page stays
                    log.debug("no PNG for %s", source, exc_info=True)
    except (OSError, ValueError) as exc:
        log.debug("no HTML for %s: %s", source, exc)
        return ChartFiles(source)
    return ChartFiles(source, html=html if html.exists() else None, png=png if png.exists() else None)


def _can_render_png() -> bool:
    try:
        import kaleido  # noqa: F401 - plotly's static-image renderer
    except ImportError:
        return False
    return True


def open_in_browser(path: Path) -> bool:
    """Open ``path`` in the user's browser (``webbrowser``: $BROWSER, xdg-open, ...); False when none opened."""
    try:
        return bool(webbrowser.open(Path(path).absolute().as_uri()))
    except webbrowser.Error:
        return False
