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


MEASURED_CELL = """
import smemviz
from smemviz import SmemAllocator, SmemAllocation
from smemviz.analysis.ncu import MeasuredSegment

EPI = {"instruction": "stmatrix.x4", "layout": "(128,32):(32,1)", "warps": (8, 1)}

def build(stages=2):
    s = SmemAllocator(arch="sm_90a")
    s.add(SmemAllocation("sA", dtype="bf16", shape=(stages, 128, 64), alignment=1024))
    s.add(SmemAllocation("epi_c", dtype="bf16", count=128 * 32, alignment=512, access=EPI))
    return s

# what ncu counted for the epilogue of the 2-stage layout (hand-made: the map's drawing is checked)
EPI_AT = 2 * 128 * 64 * 2
MEASURED = [MeasuredSegment("epi_c", EPI_AT, EPI_AT + 8192, "epi_c", 256, 4096, 1024, 3072, 4096, 1024, 3072)]
ex = smemviz.explore(build, stages=(1, 4), measured=MEASURED)
ex.show_banks("epi_c")
ex
"""
# the measured labels the page draws on the byte map (plotly's annotation texts)
LABELS_JS = """() => Array.from(document.querySelectorAll('.js-plotly-plot .annotation-text'))
    .map(t => t.textContent).filter(t => t.includes('ncu'))"""


def test_measured_counts_are_drawn_and_follow_their_layout(jupyterlab, browser, artifacts):
    """The byte map draws the measured label in the page and the Banks tab lists it; a slider that
    builds another layout takes the label away (an update with fewer annotations), moving back
    brings it again."""
    base_url, notebooks = jupyterlab
    write_notebook(notebooks / "measured.ipynb", [MEASURED_CELL])
    with watched_page(browser, artifacts, "measured-browser", {"width": 1400, "height": 1400}) as (page, console):
        open_and_run(page, base_url, "measured.ipynb")
        page.wait_for_function(f"() => ({LABELS_JS})().length === 1", timeout=120_000)
        assert page.evaluate(LABELS_JS) == ["epi_c · ncu: predicted 4-way, measured 4-way"]
        listed = page.locator(".smemviz-bank-measured").first
        expect(listed).to_contain_text("epi_c: predicted 4-way, measured 4-way", timeout=30_000)

        handle = page.locator(".widget-slider .noUi-handle").first
        handle.press("ArrowRight")  # stages 2 -> 3: not the layout measured
        page.wait_for_function(f"() => ({LABELS_JS})().length === 0", timeout=30_000)
        expect(page.locator(".smemviz-bank-measured")).to_have_count(0, timeout=30_000)  # nor the Banks tab
        handle.press("ArrowLeft")  # back to 2
        page.wait_for_function(f"() => ({LABELS_JS})().length === 1", timeout=30_000)
        expect(listed).to_contain_text("epi_c: predicted 4-way, measured 4-way", timeout=30_000)
        assert not [m for m in console if "pageerror" in m]
