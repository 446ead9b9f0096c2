"""Charts in a terminal: ``ask`` prints a clickable ``file://`` link to a self-contained HTML page (plotly.js
embedded, no CDN) written beside the run's plotly JSON, a PNG where a renderer is installed, and ``--open``
opens the page in the browser."""

from __future__ import annotations

import re
import webbrowser
from pathlib import Path
from urllib.parse import unquote, urlparse

import plotly.express as px
import plotly.io as pio
import pytest
from click.testing import CliRunner

from auto_analyst.cli import cli
from auto_analyst.cli.charts import chart_files


def _links(output: str) -> list[Path]:
    return [Path(unquote(urlparse(u).path)) for u in re.findall(r"Chart: (file://\S+)", output)]


def test_ask_links_a_self_contained_html_chart_and_open_opens_it(datasets_dir, monkeypatch):
    opened: list[str] = []
    monkeypatch.setattr(webbrowser, "open", lambda url, *a, **k: opened.append(url) or True)
    r = CliRunner().invoke(cli, ["ask", str(datasets_dir / "iris.csv"), "histogram of sepal_length", "--no-code",
                                 "--open"])
    assert r.exit_code == 0, r.output
    [page] = _links(r.stdout)
    assert page.suffix == ".html" and page.is_file()
    assert page.with_suffix(".json").is_file()  # beside the run's plotly JSON
    text = page.read_text()
    assert "Distribution of sepal_length" in text
    assert not re.search(r"<script[^>]*\ssrc=", text)  # plotly.js is in the page: it opens offline, with no CDN
    assert "Plotly.newPlot" in text and len(text) > 1_000_000
    assert opened == [page.absolute().as_uri()]


def test_without_open_no_browser_is_started(datasets_dir, monkeypatch):
    monkeypatch.setattr(webbrowser, "open", lambda *a, **k: pytest.fail("--open was not given"))
    r = CliRunner().invoke(cli, ["ask", str(datasets_dir / "iris.csv"), "histogram of sepal_length", "--no-code"])
    assert r.exit_code == 0 and len(_links(r.stdout)) == 1


def test_a_title_from_the_script_cannot_close_the_pages_script(tmp_path):
    source = tmp_path / "c.json"
    source.write_text(pio.to_json(px.bar(x=["a"], y=[1], title="</script><script>alert(1)</script>")))
    files = chart_files("plotly", source)
    assert files.html == tmp_path / "c.html"
    assert "</script><script>alert(1)" not in files.html.read_text()


def test_an_unreadable_chart_keeps_its_own_file(tmp_path):
    source = tmp_path / "broken.json"
    source.write_text("{not json")
    assert chart_files("plotly", source).best == source


def test_a_png_is_written_where_a_renderer_is_installed(tmp_path):
    pytest.importorskip("kaleido", reason="no PNG renderer (kaleido) installed: only the HTML page is written")
    source = tmp_path / "c.json"
    source.write_text(pio.to_json(px.bar(x=["a"], y=[1])))
    files = chart_files("plotly", source)
    if files.png is None:
        pytest.skip("kaleido is installed but found no Chrome to render with")
    assert files.png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
