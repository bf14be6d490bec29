"""Issue 30, points 8 and 11, in a real JupyterLab: the Banks tab opens on the access lint
warns about, its grid has the rows that access takes, its first button and its table read in
full, and a selection slider's readout shows its whole label ("most that fit")."""

from __future__ import annotations

import pytest

from tools.lab import open_and_run, watched_page, write_notebook

pytestmark = [pytest.mark.browser, pytest.mark.slow]

CELL = """
import ipywidgets as widgets
import smemviz
from smemviz import SmemAllocator, SmemAllocation

EPI = {"instruction": "stmatrix.x4", "layout": "(128,32):(32,1)", "warps": (8, 1)}

def build(stages=0):
    s = SmemAllocator(arch="sm_90a")
    s.add(SmemAllocation("sA", dtype="bf16", shape=(stages or 4, 128, 64), alignment=1024, swizzle="128B",
                         access={"instruction": "ldmatrix.x4", "layout": "(128,64):(64,1)", "warps": (4, 1)}))
    s.add(SmemAllocation("epi_c", dtype="bf16", count=128 * 32, alignment=512, access=EPI))
    return s

stages = widgets.SelectionSlider(options=[("most that fit", 0), ("2", 2), ("3", 3)], index=0, description="stages")
ex = smemviz.explore(build, stages=stages)
ex.show_tab("Banks")
ex
"""

GRID = "document.querySelector('.smemviz-banks-view .smemviz-bank-grid')"
TITLE = f"(() => {{ const g = {GRID}; return g ? g.querySelector('.smemviz-bank-title').textContent : ''; }})()"


def _text_rects(page, selector: str) -> list[list[float]]:
    """[left, right] of the text in each cell ``selector`` finds, in order."""
    return page.evaluate(
        """(sel) => Array.from(document.querySelectorAll(sel), (c) => {
            const r = document.createRange(); r.selectNodeContents(c); const b = r.getBoundingClientRect();
            return [b.left, b.right]; })""",
        selector,
    )


def test_the_banks_tab_and_the_stages_readout_read_in_full(jupyterlab, browser, artifacts):
    base_url, notebooks = jupyterlab
    write_notebook(notebooks / "glitches.ipynb", [CELL])
    with watched_page(browser, artifacts, "explorer-glitches", {"width": 1400, "height": 1400}) as (page, console):
        open_and_run(page, base_url, "glitches.ipynb")
        # opened on epi_c (4-way, which lint warns about), not on sA (conflict-free, declared first)
        page.wait_for_function(f"() => {TITLE}.startsWith('epi_c: stmatrix.x4: 16 wavefronts')", timeout=120_000)

        # the first swizzle button reads in full
        button = page.locator(".smemviz-banks-view .widget-toggle-buttons button").first
        assert (button.text_content() or "").strip() == "as declared"
        fit = page.evaluate(
            "(b) => [b.scrollWidth, b.clientWidth, getComputedStyle(b).paddingLeft, b.innerHTML]",
            button.element_handle(),
        )
        assert fit[0] <= fit[1], fit

        # the bank table's columns do not run together: a gap between each cell's text and the next
        heads = _text_rects(page, ".smemviz-banks-view .smemviz-banks thead th")
        cells = _text_rects(page, ".smemviz-banks-view .smemviz-banks tbody tr:first-child td")
        for row in (heads, cells):
            assert len(row) == 9, row
            gaps = [b[0] - a[1] for a, b in zip(row, row[1:])]
            assert min(gaps) >= 8, gaps

        # a 4-wavefront access draws 4 rows, with no empty rows under them
        page.locator(".smemviz-banks-view .widget-toggle-buttons button", has_text="64B").first.click()
        page.wait_for_function(f"() => {TITLE}.startsWith('epi_c: stmatrix.x4: 4 wavefronts')", timeout=30_000)
        assert page.evaluate(f"() => {GRID}.querySelectorAll('tbody tr').length") == 4

        # the stages slider's readout shows its whole label
        readout = page.locator(".smemviz-explorer .widget-slider .widget-readout").first
        assert (readout.text_content() or "").strip() == "most that fit"
        fit = page.evaluate("(r) => [r.scrollWidth, r.clientWidth]", readout.element_handle())
        assert fit[0] <= fit[1], fit
        assert not [m for m in console if "pageerror" in m]
