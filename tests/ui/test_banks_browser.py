"""The explorer's Banks tab in a real JupyterLab: click the swizzle toggle and read the bank
picture the page draws (``gd.data`` / ``gd.layout`` of the drawn figure)."""

from __future__ import annotations

import pytest

from benchmarks.bench_banks_browser import BANKS_CELL, toggle

from .explorer_page import open_and_run, watched_page, write_notebook

pytestmark = [pytest.mark.browser, pytest.mark.slow]

FIND = """() => Array.from(document.querySelectorAll('.smemviz-banks-view .js-plotly-plot'))
    .find(gd => gd.layout && gd.layout.title && String(gd.layout.title.text).startsWith('epi_c: stmatrix.x4'))"""


def drawn(page) -> dict | None:
    """The drawn bank picture: its title, its wavefront rows, the replays marked, bank 0's lanes."""
    return page.evaluate(f"""() => {{ const gd = ({FIND})();
        if (!gd) return null;
        return {{ title: gd.layout.title.text, rows: gd.data[0].y.length, replays: gd.data[1].y.length,
                 bank0: gd.data[0].z.map(row => row[0]) }}; }}""")


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
        page.wait_for_function(f"() => ({FIND})().data[0].y.length === 4", timeout=30_000)
        fixed = drawn(page)
        assert fixed["title"].startswith("epi_c: stmatrix.x4: 4 wavefronts (ideal 4), 0 conflicts; conflict-free")
        assert fixed["replays"] == 0
        numbers = page.locator(".smemviz-bank-numbers").first.text_content()
        assert "with 64B swizzle" in numbers and "64 wavefronts (ideal 64), 0 conflicts" in numbers

        toggle(page, "none").click()
        page.wait_for_function(f"() => ({FIND})().data[0].y.length === 16", timeout=30_000)
        assert drawn(page) == first
        assert not [m for m in console if "pageerror" in m]
