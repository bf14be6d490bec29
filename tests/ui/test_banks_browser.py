"""The explorer's Banks tab in a real JupyterLab: click the swizzle toggle and read the bank
picture the page draws (the grid's title, its wavefront rows, the replays marked, its cells)."""

from __future__ import annotations

import pytest

from benchmarks.bench_banks_browser import BANKS_CELL, toggle
from tools.lab import open_and_run, watched_page, write_notebook

pytestmark = [pytest.mark.browser, pytest.mark.slow]
expect = pytest.importorskip("playwright.sync_api").expect

FIND = """() => Array.from(document.querySelectorAll('.smemviz-banks-view .smemviz-bank-grid'))
    .find(g => g.querySelector('.smemviz-bank-title').textContent.startsWith('epi_c: stmatrix.x4'))"""


def drawn(page) -> dict | None:
    """The drawn bank picture: its title, its wavefront rows, the replays marked, its cells' lanes."""
    return page.evaluate(f"""() => {{ const g = ({FIND})();
        if (!g) return null;
        const rows = Array.from(g.querySelectorAll('tbody tr')).filter(tr => /\\d/.test(tr.querySelector('th').textContent));
        return {{ title: g.querySelector('.smemviz-bank-title').textContent, rows: rows.length,
                 replays: g.querySelectorAll('tbody tr.r').length,
                 cells: rows.map(tr => Array.from(tr.querySelectorAll('td'), td => td.textContent).join(',')) }}; }}""")


def test_the_swizzle_toggle_redraws_the_bank_picture(jupyterlab, browser, artifacts):
    base_url, notebooks = jupyterlab
    write_notebook(notebooks / "banks.ipynb", [BANKS_CELL])
    with watched_page(browser, artifacts, "banks-browser", {"width": 1400, "height": 1400}) as (page, console):
        open_and_run(page, base_url, "banks.ipynb")
        page.wait_for_function(f"() => !!({FIND})()", timeout=120_000)
        first = drawn(page)
        assert first["title"].startswith("epi_c: stmatrix.x4: 16 wavefronts (ideal 4), 12 conflicts; 4-way")
        assert (first["rows"], first["replays"]) == (16, 12)

        toggle(page, "64B").click()
        page.wait_for_function(
            f"() => ({FIND})() && ({FIND})().querySelector('.smemviz-bank-title')"
            ".textContent.includes(': 4 wavefronts')",
            timeout=30_000,
        )
        fixed = drawn(page)
        assert fixed["title"].startswith("epi_c: stmatrix.x4: 4 wavefronts (ideal 4), 0 conflicts; conflict-free")
        assert fixed["replays"] == 0 and fixed["rows"] == 4 and fixed["cells"] != first["cells"][:4]
        numbers = page.locator(".smemviz-bank-numbers").first
        expect(numbers).to_contain_text("with 64B swizzle", timeout=30_000)
        expect(numbers).to_contain_text("64 wavefronts (ideal 64), 0 conflicts", timeout=30_000)

        toggle(page, "none").click()
        page.wait_for_function(
            f"() => ({FIND})() && ({FIND})().querySelector('.smemviz-bank-title')"
            ".textContent.includes(': 16 wavefronts')",
            timeout=30_000,
        )
        assert drawn(page) == first
        assert not [m for m in console if "pageerror" in m]
