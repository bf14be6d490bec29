"""Run, pressed right after a control changed twice, measures what the page
shows. The browser sends a control's second change only once the kernel has
taken the first (the builder here is slow for tile_n=128, so the first is
still being taken); a plain button's click would reach the kernel before the
second change and run tile_n=128 while the page shows 256."""

from __future__ import annotations

import pytest

from tools.lab import open_and_run, watched_page, write_notebook

from ..ui.conftest import artifacts, browser, jupyterlab  # noqa: F401 (fixtures)

pytestmark = [pytest.mark.browser, pytest.mark.slow]

CELL = """
import time
import smemviz
from smemviz import SmemAllocation, SmemAllocator

def build(tile_n=64):
    if tile_n == 128:
        time.sleep(1.0)  # a slow build: the page's next change waits for this one
    s = SmemAllocator()
    s.add(SmemAllocation("tile", tile_n * 256, 128))
    return s

class Measured:
    def __init__(self, tile_n):
        self.tile_n = tile_n
    def row(self):
        return {"label": f"tile n{self.tile_n}", "stages": 1, "smem_requested": self.tile_n * 256,
                "tflops": float(self.tile_n), "ran": True, "reason": None}
    def summary(self):
        return f"ran tile n{self.tile_n}"

ex = smemviz.explore(build, run=lambda tile_n: Measured(tile_n), tile_n=[64, 128, 256])
ex
"""


def test_run_right_after_two_control_changes_runs_the_values_on_screen(jupyterlab, browser, artifacts):  # noqa: F811
    expect = pytest.importorskip("playwright.sync_api").expect
    base_url, notebooks = jupyterlab
    write_notebook(notebooks / "run_click.ipynb", [CELL])
    with watched_page(browser, artifacts, "run_click", {"width": 1400, "height": 1600}, ("error",)) as (page, console):
        open_and_run(page, base_url, "run_click.ipynb")
        button = page.locator(".smemviz-run-panel button", has_text="Run on GPU")
        expect(button).to_be_enabled(timeout=90_000)
        tile = page.locator(".smemviz-explorer .widget-dropdown select").first
        tile.select_option(label="128")
        tile.select_option(label="256")  # held back by the page until the kernel has taken 128
        button.click()
        rows = page.locator(".smemviz-run-panel table.smemviz-run-history tr")
        expect(rows).to_have_count(2, timeout=60_000)
        expect(rows.nth(1)).to_contain_text("tile n256")
        expect(page.locator(".smemviz-run-panel")).to_contain_text("ran tile n256")
        # the map shows the configuration that ran
        expect(page.locator(".smemviz-explorer .js-plotly-plot .gtitle").first).to_contain_text("65,536 B")
        # the click carried the controls' values (a control it could not read is logged as an error)
        problems = [m for m in console if "smemviz" in m or m.startswith("pageerror")]
        assert not problems, problems
