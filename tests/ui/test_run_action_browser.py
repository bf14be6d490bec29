"""The explorer's run action in a real JupyterLab: press "Run on GPU" (a fake
runner, no GPU needed), change a control, press again; the history table and
plot in the page keep both runs."""

from __future__ import annotations

import pytest

from tools.lab import open_and_run, smem_title, wait_for_title_change, write_notebook

pytestmark = [pytest.mark.browser, pytest.mark.slow]
expect = pytest.importorskip("playwright.sync_api").expect

FAKE_RUNNER_CELL = """
import smemviz
from smemviz.kernel import GemmProblem, gemm_allocator, gemm_layout
from smemviz.kernel.gemm import config_from_controls
from smemviz.kernel.gemm._measure import GemmMeasurement

def fake_runner(**controls):
    layout = gemm_layout(config_from_controls(**controls))
    return GemmMeasurement(
        layout.config, GemmProblem(4096, 4096, 4096), stages=layout.stages,
        smem_planned=layout.unified_bytes, smem_requested=layout.unified_bytes, registers=168,
        ran=True, median_ms=0.25, tflops=500.0 + layout.config.tile_n, rel_err=2e-4,
    )

ex = smemviz.explore(gemm_allocator, run=fake_runner, tile_n=[128, 256], stages=(0, 7))
ex
"""


def test_run_button_fills_the_history_table_and_plot(jupyterlab, browser, artifacts):
    base_url, notebooks = jupyterlab
    write_notebook(notebooks / "run_action.ipynb", [FAKE_RUNNER_CELL])
    page = browser.new_page(viewport={"width": 1400, "height": 1600})
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    try:
        open_and_run(page, base_url, "run_action.ipynb")
        button = page.locator(".smemviz-run-panel button", has_text="Run on GPU")
        button.wait_for(timeout=90_000)
        rows = page.locator(".smemviz-run-panel table.smemviz-run-history tr")

        button.click()
        page.wait_for_function(
            "() => document.querySelectorAll('.smemviz-run-panel table.smemviz-run-history tr').length === 2",
            timeout=30_000,
        )
        expect(rows.nth(1)).to_contain_text("f16 128x256 cl1x1 s4 alias")
        expect(page.locator(".smemviz-run-panel")).to_contain_text("756 TFLOP/s")

        # the kernel has applied the new tile (its SMEM map is redrawn) before Run is pressed:
        # Run measures what the kernel holds, and the page must not race it
        before = smem_title(page)
        page.locator(".widget-dropdown select").first.select_option(label="128")
        wait_for_title_change(page, before, timeout_s=60)
        button.click()
        page.wait_for_function(
            "() => document.querySelectorAll('.smemviz-run-panel table.smemviz-run-history tr').length === 3",
            timeout=30_000,
        )
        expect(rows.nth(1)).to_contain_text("f16 128x128 cl1x1 s7 alias")  # newest first
        expect(page.locator(".smemviz-run-panel")).to_contain_text("628 TFLOP/s")
        page.wait_for_function(
            "() => document.querySelectorAll('.smemviz-run-panel .js-plotly-plot .scatterlayer .point').length === 2",
            timeout=30_000,
        )
        assert not errors, errors
    except Exception:
        page.screenshot(path=str(artifacts / "run_action_failure.png"))
        raise
    finally:
        page.close()
