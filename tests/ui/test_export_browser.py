"""The exported HTML page in headless Chromium, with the network cut off:
it renders the regions offline, and names written as markup or script run
nothing."""

from __future__ import annotations

import json
import re

import pytest

import smemviz
from smemviz.sources.layout_file import parse_layout_text
from tools.lab import painted

pytestmark = pytest.mark.browser

PAGE_URL = "http://smemviz.invalid/layout.html"
HOSTILE = [
    "</script><script>window.__pwned=1</script>",
    '<img src=x onerror="window.__pwned=1">',
    '<svg onload="window.__pwned=1">',
    "\"><script>alert('x')</script>",
]
# records what a page does that it must not: CSP violations, and any script run by a name
WATCH = """
window.__violations = [];
document.addEventListener('securitypolicyviolation', e => window.__violations.push(e.violatedDirective + ' ' + e.blockedURI));
"""


def _hostile_spec():
    doc = {
        "name": "<script>window.__pwned=1</script> kernel",
        "smem": [{"name": n, "size": 8192 * (i + 1), "align": 1024} for i, n in enumerate(HOSTILE)],
        "pipeline": [{"name": HOSTILE[1], "stages": 2}],
        "tmem": [{"name": n, "columns": 64} for n in HOSTILE[:2]],
    }
    return parse_layout_text(json.dumps(doc), format="json")


def _open(browser, html: str) -> dict:
    """Load ``html`` as a page whose every other request is refused; report what happened."""
    page = browser.new_page()
    requests: list[str] = []
    dialogs: list[str] = []
    errors: list[str] = []

    def route(r):
        if r.request.url == PAGE_URL:
            r.fulfill(status=200, content_type="text/html; charset=utf-8", body=html)
        else:
            requests.append(r.request.url)
            r.abort()

    page.route("**/*", route)
    page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.add_init_script(WATCH)
    page.goto(PAGE_URL)
    page.wait_for_selector("svg.main-svg", timeout=20_000)
    # loaded (an image's onerror has fired by then) and a frame painted after it
    # (the policy's violation events are queued while the page is parsed)
    page.wait_for_load_state("load")
    painted(page)
    result = {
        "pwned": page.evaluate("typeof window.__pwned"),
        "violations": page.evaluate("window.__violations"),
        "text": page.inner_text("body"),
        "svg_text": page.evaluate(
            "Array.from(document.querySelectorAll('svg.main-svg text')).map(t => t.textContent).join('\\n')"
        ),
        "bars": page.locator(".trace.bars .point path").count(),
        "injected": page.evaluate(
            "document.querySelectorAll('body img, .smemviz-report script, h1 script, svg [onload], [onerror]').length"
        ),
        "requests": requests,
        "dialogs": dialogs,
        "errors": errors,
    }
    page.close()
    return result


@pytest.fixture(scope="module")
def page_html(tmp_path_factory):
    pytest.importorskip("plotly")
    out = smemviz.export(_hostile_spec(), tmp_path_factory.mktemp("html") / "layout.html")
    return out.read_text(encoding="utf-8")


def test_page_renders_offline_and_runs_no_name(browser, page_html):
    seen = _open(browser, page_html)
    assert seen["requests"] == []  # nothing fetched: plotly.js is inline
    assert seen["errors"] == []
    assert seen["violations"] == []  # the page's own scripts all pass its CSP
    assert seen["pwned"] == "undefined"
    assert seen["dialogs"] == []
    assert seen["injected"] == 0
    assert seen["bars"] >= len(HOSTILE)
    for name in HOSTILE:
        assert name in seen["text"]  # the usage table shows them as text
    assert "<script>window.__pwned=1</script> kernel" in seen["text"]  # the heading too
    assert any(name in seen["svg_text"] for name in HOSTILE)  # and the diagram labels


def test_escaping_alone_keeps_names_inert(browser, page_html):
    """Without the Content-Security-Policy, the escaping still suffices."""
    stripped, n = re.subn(r'<meta http-equiv="Content-Security-Policy"[^>]*>', "", page_html)
    assert n == 1
    seen = _open(browser, stripped)
    assert seen["pwned"] == "undefined"
    assert seen["dialogs"] == []
    assert seen["injected"] == 0
    assert seen["errors"] == []
    for name in HOSTILE:
        assert name in seen["text"]


def test_csp_blocks_markup_that_would_slip_through(browser, page_html):
    """If a name ever reached the page unescaped, the policy would stop it."""
    planted = page_html.replace(
        "</body>", '<img src=x onerror="window.__pwned=1"><script>window.__pwned=2</script></body>'
    )
    seen = _open(browser, planted)
    assert seen["pwned"] == "undefined"
    assert seen["violations"]  # refused, and reported as such
    assert seen["requests"] == []  # img-src allows no network either
    # control: the same planted markup without the policy does run, so the
    # checks above can tell a blocked script from one that never existed
    unguarded = re.sub(r'<meta http-equiv="Content-Security-Policy"[^>]*>', "", planted)
    assert _open(browser, unguarded)["pwned"] == "number"
