"""The page in a real headless Chromium: upload, ask, see the chart, follow up, download the notebook.

Run with ``pytest -m browser tests/web``; install the browser with ``tests/web/install_browser.sh``.
Screenshots go to ``test-artifacts/`` at the repository root.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tests.web.conftest import HOSTILE, LiveURL

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
        pg.goto(live_server.entry)
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
            url = LiveURL(f"http://127.0.0.1:{server.server_port}")
            url.entry = f"{url}/?token={app.config['AUTH_TOKEN']}"
            yield url
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
            pg.goto(url.entry)  # the sign-in link `serve` prints
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


def _boxes_overlap(a, b) -> bool:
    return a["x"] < b["x"] + b["width"] and b["x"] < a["x"] + a["width"] and \
        a["y"] < b["y"] + b["height"] and b["y"] < a["y"] + a["height"]


def test_at_phone_width_the_sidebar_folds_and_the_page_stays_usable(live_server, tmp_path):
    """420 px wide: the sidebar is a drawer, the header buttons neither overlap nor leave the screen, a chart and
    the question box fit; a second upload and a tab switch change the table the next question reads."""
    from tests.test_session_tables import write_tables

    sync_api = pytest.importorskip("playwright.sync_api") if not os.environ.get("AUTO_ANALYST_REQUIRE_BROWSER") else \
        __import__("playwright.sync_api", fromlist=["sync_playwright"])
    a, b = write_tables(tmp_path)
    ARTIFACTS.mkdir(exist_ok=True)
    width = 420
    with sync_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        pg = browser.new_context(viewport={"width": width, "height": 860}).new_page()
        problems = []
        pg.on("pageerror", lambda e: problems.append(f"page error: {e}"))
        pg.on("console", lambda m: m.type == "error" and problems.append(f"console: {m.text}"))
        pg.goto(live_server.entry)
        assert not pg.locator("#sidebar").is_visible() and pg.locator("#nav-toggle").is_visible()

        pg.set_input_files("#file-input", a)
        pg.locator(".tab.active", has_text="a").wait_for(timeout=30_000)
        pg.fill("#question", "bar chart of total sales by region")
        pg.keyboard.press("Enter")
        pg.locator('article[data-index="0"] .plotly-box svg.main-svg').first.wait_for(timeout=60_000)
        _wait_idle(pg)
        header = [pg.locator(s).bounding_box() for s in
                  ("#nav-toggle", ".title-wrap", "label[for=file-input].btn", "#export-py", "#export-nb", "#delete-conv")]
        for i, box in enumerate(header):
            assert box["x"] >= 0 and box["x"] + box["width"] <= width, (i, box)
            assert not any(_boxes_overlap(box, other) for other in header[i + 1:]), (i, box, header)
        chart = pg.locator('article[data-index="0"] .plotly-box svg.main-svg').first.bounding_box()
        assert chart["x"] >= 0 and chart["x"] + chart["width"] <= width and chart["height"] >= 250
        question = pg.locator("#question").bounding_box()
        assert question["width"] >= 250 and question["y"] + question["height"] <= 860
        pg.screenshot(path=str(ARTIFACTS / "09-phone-420.png"))

        pg.set_input_files("#file-input", b)  # a second upload: b becomes active
        pg.locator(".tab.active", has_text="b").wait_for(timeout=30_000)
        pg.fill("#question", "mean temp by city")
        pg.keyboard.press("Enter")
        pg.locator('article[data-index="1"]').wait_for(timeout=60_000)
        _wait_idle(pg)
        assert "Paris: 11.25" in pg.locator('article[data-index="1"] .answer-text').inner_text()
        pg.locator(".tab", has_text="a").first.click()  # the tab of a
        pg.locator(".tab.active", has_text="a").wait_for(timeout=30_000)
        pg.fill("#question", "total sales")
        pg.keyboard.press("Enter")
        pg.locator('article[data-index="2"]').wait_for(timeout=60_000)
        _wait_idle(pg)
        assert "42" in pg.locator('article[data-index="2"] .answer-text').inner_text()
        badge = pg.locator('article[data-index="2"] .card-head .waited')
        assert badge.inner_text().endswith(" s") and badge.get_attribute("title").startswith("You waited")

        pg.click("#nav-toggle")
        pg.locator("#sidebar").wait_for(state="visible", timeout=5_000)
        pg.wait_for_timeout(300)  # the drawer slides in
        side = pg.locator("#sidebar").bounding_box()
        assert side["x"] >= 0 and side["x"] + side["width"] <= width
        pg.screenshot(path=str(ARTIFACTS / "10-phone-420-menu.png"))
        pg.mouse.click(width - 10, 400)  # the backdrop closes it
        pg.locator("#sidebar").wait_for(state="hidden", timeout=5_000)
        browser.close()
    assert problems == []


def test_an_error_says_its_kind_once(page, datasets_dir):
    pg = page
    pg.set_input_files("#file-input", str(datasets_dir / "grunfeld.csv"))
    pg.locator(".tab.active", has_text="grunfeld").wait_for(timeout=30_000)
    pg.fill("#question", "total invest")
    pg.keyboard.press("Enter")
    first = pg.locator('article[data-index="0"]')
    first.wait_for(timeout=60_000)
    _wait_idle(pg)
    first.locator("details.script > summary").click()
    first.locator("details.script button", has_text="Edit").click()
    first.locator("textarea.code-edit").fill("show(df['affairz'].sum())")
    first.locator("details.script button", has_text="Run again").click()
    failed = pg.locator('article[data-index="1"]')
    failed.wait_for(timeout=60_000)
    _wait_idle(pg)
    assert failed.locator(".error-box").inner_text() == "KeyError: 'affairz'"
    assert failed.locator(".error-box strong").inner_text() == "KeyError"
    pg.screenshot(path=str(ARTIFACTS / "11-error.png"))
    assert pg.problems == []
