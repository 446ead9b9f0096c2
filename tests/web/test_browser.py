"""The page in a real headless Chromium: upload, ask, see the chart, follow up, download the notebook.

Run with ``pytest -m browser tests/web``; install the browser with ``tests/web/install_browser.sh``.
Screenshots go to ``test-artifacts/`` at the repository root.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tests.web.conftest import HOSTILE

CHROMIUM = "/usr/bin/chromium"
# Measured on the build machine: without the background-networking flags Chromium floods the closed network.
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--disable-background-networking",
                 "--no-first-run", "--disable-component-update", "--disable-sync"]
ARTIFACTS = Path(__file__).resolve().parents[2] / "test-artifacts"

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not Path(CHROMIUM).exists() and not os.environ.get("AUTO_ANALYST_REQUIRE_BROWSER"),
                       reason="needs /usr/bin/chromium (tests/web/install_browser.sh); set AUTO_ANALYST_REQUIRE_BROWSER to fail instead"),
]


@pytest.fixture
def page(live_server):
    sync_api = pytest.importorskip("playwright.sync_api") if not os.environ.get("AUTO_ANALYST_REQUIRE_BROWSER") else \
        __import__("playwright.sync_api", fromlist=["sync_playwright"])
    ARTIFACTS.mkdir(exist_ok=True)
    with sync_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        context = browser.new_context(viewport={"width": 1366, "height": 768}, accept_downloads=True)
        pg = context.new_page()
        pg.problems = []
        pg.on("pageerror", lambda e: pg.problems.append(f"page error: {e}"))
        pg.on("dialog", lambda d: (pg.problems.append(f"dialog: {d.message}"), d.dismiss()))
        pg.on("console", lambda m: m.type == "error" and pg.problems.append(f"console: {m.text}"))
        pg.goto(live_server + "/")
        yield pg
        browser.close()


def _wait_idle(pg):
    """Wait until no run is in progress (the progress card is gone)."""
    pg.locator(".msg.progress").wait_for(state="detached", timeout=60_000)


def test_upload_ask_chart_follow_up_and_notebook(page, datasets_dir, tmp_path):
    pg = page
    pg.screenshot(path=str(ARTIFACTS / "01-empty.png"))
    pg.set_input_files("#file-input", str(datasets_dir / "grunfeld.csv"))
    pg.locator(".tab.active", has_text="grunfeld").wait_for(timeout=30_000)
    assert pg.locator("#preview table.data th").first.inner_text().startswith("invest")
    pg.screenshot(path=str(ARTIFACTS / "02-uploaded.png"))

    pg.fill("#question", "bar chart of total invest by firm")
    pg.keyboard.press("Enter")
    pg.locator(".msg.progress .steps li").first.wait_for(timeout=30_000)
    pg.screenshot(path=str(ARTIFACTS / "03-progress.png"))
    pg.locator('article[data-index="0"] .plotly-box svg.main-svg').first.wait_for(timeout=60_000)
    _wait_idle(pg)
    assert pg.locator(".plotly-box .bars path").count() >= 11  # one bar per firm, drawn as SVG
    assert "General Motors" in pg.locator(".msg.bot .answer-text").first.inner_text()
    pg.screenshot(path=str(ARTIFACTS / "04-answer.png"))

    pg.fill("#question", "now only for 1950")
    pg.keyboard.press("Enter")
    pg.locator('article[data-index="1"] .plotly-box svg.main-svg').first.wait_for(timeout=60_000)
    _wait_idle(pg)
    last = pg.locator('article[data-index="1"]')
    assert "642.9" in last.locator(".answer-text").inner_text()
    last.locator("details.script > summary").click()
    assert "== 1950" in last.locator("details.script pre.code").inner_text()
    last.locator("details.trace > summary").click()
    assert "LM calls" in last.locator("details.trace").inner_text()
    pg.screenshot(path=str(ARTIFACTS / "05-follow-up.png"))

    with pg.expect_download() as info:
        pg.click("#export-nb")
    saved = tmp_path / info.value.suggested_filename
    info.value.save_as(saved)
    nb = json.loads(saved.read_text())
    assert saved.suffix == ".ipynb" and nb["nbformat"] == 4
    assert any("read_table('grunfeld.csv')" in "".join(c["source"]) for c in nb["cells"])
    assert pg.problems == []


def test_hostile_column_names_are_shown_as_text(page, hostile_csv):
    pg = page
    pg.set_input_files("#file-input", str(hostile_csv))
    pg.locator(".tab.active").wait_for(timeout=30_000)
    headers = pg.locator("#preview table.data th > span").all_inner_texts()
    assert HOSTILE in headers and "<script>alert(2)</script>" in headers
    assert pg.locator("#preview img, #preview svg, #preview script").count() == 0
    assert not pg.locator("#preview").inner_text().rstrip().endswith("null")
    pg.screenshot(path=str(ARTIFACTS / "06-hostile-preview.png"))
    pg.fill("#question", "total amount")
    pg.keyboard.press("Enter")
    pg.locator('article[data-index="0"]').wait_for(timeout=60_000)
    _wait_idle(pg)
    assert pg.locator(".answer-text img, .answer-text script, .answer-text svg").count() == 0
    pg.screenshot(path=str(ARTIFACTS / "07-hostile-answer.png"))
    assert pg.problems == []


def test_after_a_server_restart_the_page_reopens_and_continues_the_conversation(settings, datasets_dir):
    """Upload and ask, stop the server, start a new one on the same home: the same browser finds its
    conversation in the sidebar, sees its answer, asks a follow-up that builds on it, and deletes it."""
    import threading
    from contextlib import contextmanager

    from werkzeug.serving import make_server

    from auto_analyst.web import create_app

    sync_api = pytest.importorskip("playwright.sync_api") if not os.environ.get("AUTO_ANALYST_REQUIRE_BROWSER") else \
        __import__("playwright.sync_api", fromlist=["sync_playwright"])

    @contextmanager
    def serve():
        # the key comes from settings.home/web/secret_key, as with `auto-analyst serve`: cookies stay valid
        app = create_app({"SETTINGS": settings})
        server = make_server("127.0.0.1", 0, app, threaded=True)
        thread = threading.Thread(target=server.serve_forever, daemon=True)
        thread.start()
        try:
            yield f"http://127.0.0.1:{server.server_port}"
        finally:
            server.shutdown()
            thread.join(10)
            app.extensions["auto_analyst"].close()

    ARTIFACTS.mkdir(exist_ok=True)
    with sync_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        context = browser.new_context(viewport={"width": 1366, "height": 768})
        pg = context.new_page()
        problems = []
        pg.on("pageerror", lambda e: problems.append(f"page error: {e}"))
        pg.on("console", lambda m: m.type == "error" and problems.append(f"console: {m.text}"))
        pg.on("dialog", lambda d: d.accept())  # the delete confirmation
        with serve() as url:
            pg.goto(url + "/")
            pg.set_input_files("#file-input", str(datasets_dir / "grunfeld.csv"))
            pg.locator(".tab.active", has_text="grunfeld").wait_for(timeout=30_000)
            pg.fill("#question", "total invest by firm")
            pg.keyboard.press("Enter")
            pg.locator('article[data-index="0"]').wait_for(timeout=60_000)
            _wait_idle(pg)

        with serve() as url:  # another port; cookies for 127.0.0.1 do not depend on the port
            pg.goto(url + "/")
            item = pg.locator(".conv-item.active")
            item.wait_for(timeout=30_000)
            assert "total invest by firm" in item.inner_text() and "1 answer" in item.inner_text()
            first = pg.locator('article[data-index="0"]')
            first.wait_for(timeout=30_000)
            assert "12160.4" in first.locator(".answer-text").inner_text()
            pg.locator(".tab.active", has_text="grunfeld").wait_for(timeout=30_000)
            pg.screenshot(path=str(ARTIFACTS / "08-after-restart.png"))

            pg.fill("#question", "now only for 1950")
            pg.keyboard.press("Enter")
            pg.locator('article[data-index="1"]').wait_for(timeout=60_000)
            _wait_idle(pg)
            assert "642.9" in pg.locator('article[data-index="1"] .answer-text').inner_text()
            pg.locator(".conv-item.active", has_text="2 answers").wait_for(timeout=30_000)

            pg.click("#delete-conv")
            pg.locator(".conv-item").first.wait_for(state="detached", timeout=30_000)
            assert "No conversations yet." in pg.locator("#conv-list").inner_text()
        browser.close()
    assert problems == []
