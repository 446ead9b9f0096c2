"""CSRF, session ownership, hostile column names and sanitised answers."""

from __future__ import annotations

import pytest

from auto_analyst.web.render import answer_html
from tests.web.conftest import HOSTILE


@pytest.mark.parametrize("headers", [{}, {"X-CSRF-Token": "forged"}, {"X-CSRF-Token": ""}])
def test_state_changing_requests_need_the_cookies_csrf_token(browser, headers):
    sid = browser.new_session()
    for method, url in [("post", "/api/sessions"), ("post", "/api/model"), ("delete", f"/api/sessions/{sid}"),
                        ("post", f"/api/sessions/{sid}/ask"), ("post", f"/api/sessions/{sid}/uploads"),
                        ("post", f"/api/sessions/{sid}/run"), ("post", f"/api/sessions/{sid}/active")]:
        r = getattr(browser.client, method)(url, json={}, headers=headers)
        assert r.status_code == 403, (method, url)
        assert r.json["error"]["kind"] == "csrf"
    assert browser.get(f"/api/sessions/{sid}").status_code == 200  # nothing was deleted


def test_a_token_from_another_browser_does_not_work(browser, other_browser):
    r = other_browser.client.post("/api/sessions", headers={"X-CSRF-Token": browser.csrf})
    assert r.status_code == 403


def test_the_token_also_works_as_a_form_field(browser, datasets_dir):
    sid = browser.new_session()
    import io

    r = browser.client.post(f"/api/sessions/{sid}/uploads", content_type="multipart/form-data",
                            data={"csrf_token": browser.csrf, "file": (io.BytesIO(b"a,b\n1,2\n"), "t.csv")})
    assert r.status_code == 201, r.json


def test_another_browser_cannot_see_or_touch_a_session(browser, other_browser, datasets_dir):
    sid = browser.new_session()
    assert browser.upload(sid, datasets_dir / "iris.csv").status_code == 201
    b = other_browser
    for r in [b.get(f"/api/sessions/{sid}"), b.get(f"/api/sessions/{sid}/tables/iris"),
              b.get(f"/api/sessions/{sid}/export.py"), b.get(f"/api/sessions/{sid}/export.ipynb"),
              b.get(f"/api/sessions/{sid}/results/0/figures/0"), b.get(f"/api/sessions/{sid}/results/0/tables/0.csv"),
              b.post(f"/api/sessions/{sid}/ask", json={"question": "mean sepal_length"}),
              b.post(f"/api/sessions/{sid}/run", json={"code": "show(1)"}),
              b.post(f"/api/sessions/{sid}/active", json={"name": "iris"}),
              b.upload(sid, datasets_dir / "iris.csv"), b.delete(f"/api/sessions/{sid}")]:
        assert r.status_code == 404, r.json
        assert r.json["error"]["kind"] == "not_found"
    assert browser.get(f"/api/sessions/{sid}").status_code == 200


def test_session_ids_are_random_and_long(browser):
    ids = {browser.new_session() for _ in range(5)}
    assert len(ids) == 5 and all(len(i) >= 16 for i in ids)


def test_hostile_column_names_and_cells_travel_as_data_never_as_markup(browser, hostile_csv):
    sid = browser.new_session()
    r = browser.upload(sid, hostile_csv)
    assert r.status_code == 201, r.json
    table = r.json["tables"][0]
    assert HOSTILE in table["columns"] and "<script>alert(2)</script>" in table["columns"]
    assert ["<svg onload=alert(3)>", 5, "</td><img src=y onerror=alert(4)>"] in table["rows"]
    assert r.headers["Content-Type"].startswith("application/json")
    # the page itself never contains data: it is built with textContent from the JSON
    assert "onerror" not in browser.get("/").get_data(as_text=True)
    result = browser.ask(sid, "total amount")
    assert result["status"] in ("ok", "declined", "error")
    tags, attrs = elements(result["answer_html"])
    assert not tags & {"img", "svg", "script"} and not attrs - {"href", "rel", "title"}


@pytest.mark.parametrize("markdown", [
    "<script>alert(1)</script>", HOSTILE, "[click](javascript:alert(1))", "![x](http://evil/x.png)",
    '<a href="#" onclick="alert(1)">x</a>', "```\n</pre><script>alert(1)</script>\n```",
    "| <b onmouseover=alert(1)>h</b> |\n|---|\n| <iframe src=x> |",
])
def test_answer_html_is_sanitised(markdown):
    html = answer_html(markdown)
    tags, attrs = elements(html)
    assert tags <= {"p", "a", "pre", "code", "table", "thead", "tbody", "tr", "th", "td", "b", "strong"}, html
    assert attrs <= {"href", "rel"}, html
    assert "href=\"javascript" not in html.lower()


def elements(html: str) -> tuple[set[str], set[str]]:
    """The element names and attribute names a browser would build from ``html``."""
    from html.parser import HTMLParser

    tags, attrs = set(), set()

    class P(HTMLParser):
        def handle_starttag(self, tag, a):
            tags.add(tag)
            attrs.update(k for k, _ in a)

    P().feed(html)
    return tags, attrs


def test_answer_html_keeps_the_markdown_we_want():
    html = answer_html("**Total** by firm:\n\n- a: 1\n- b: 2\n\n`code` [docs](https://example.org)")
    assert "<strong>Total</strong>" in html and "<li>a: 1</li>" in html and "<code>code</code>" in html
    assert 'href="https://example.org"' in html and "noopener" in html


def test_the_api_key_is_never_returned_or_logged(browser, monkeypatch, caplog):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    secret = "sk-test-DO-NOT-LEAK-123"
    r = browser.post("/api/model", json={"model": "openai/gpt-4o-mini", "api_key": secret})
    assert r.status_code == 200 and r.json["model"] == "openai/gpt-4o-mini"
    sid = browser.new_session()
    everything = "".join(browser.get(u).get_data(as_text=True) for u in ["/", "/api/state", f"/api/sessions/{sid}"])
    assert secret not in everything and secret not in caplog.text
    assert browser.get(f"/api/sessions/{sid}").json["session"]["model"] == "openai/gpt-4o-mini"
