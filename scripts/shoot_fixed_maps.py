"""Screenshots of the maps as issue 23 asked them fixed, in JupyterLab
(headless Chromium), written under docs/:

* ``map-shared-bytes.png``: a Hopper GEMM solved from lifetimes, whose
  epilogue buffer sits on an operand's bytes: each in its own lane;
* ``lifetimes-tab.png``: its Lifetimes tab opened by a click, at the epilogue
  step (a 512 B bias drawn, bytes not live told from padding);
* ``map-resource-colours.png``: a resource's A, B and C buffers in three hues,
  the occupancy label inside the plot;
* ``export-shared-bytes.png``: the static export of the first layout.

    python -m scripts.shoot_fixed_maps                 (from the repository root)
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from tools.browser import CHROMIUM_ARGS, find_chromium
from tools.lab import open_and_run, start_lab, stop_lab, write_notebook

ROOT = Path(__file__).resolve().parents[1]

DOCS = ROOT / "docs"

CELLS = [
    """
import smemviz
from smemviz import SmemAllocator, SmemAllocation

def hopper_gemm(stages=4):
    s = SmemAllocator(arch="sm_90a", steps=("load", "mma", "epilogue"))
    s.add(SmemAllocation("a_stages", stages * 16384, 1024, swizzle="128B", stages=stages), live=range(0, 2))
    s.add(SmemAllocation("b_stages", stages * 16384, 1024, swizzle="128B", stages=stages), live=range(0, 2))
    s.add(SmemAllocation("epi_c", 128 * 128 * 4, 1024), live="epilogue")
    s.add(SmemAllocation("bias", 512, 128), live="epilogue")
    return s

lifetimes = smemviz.explore(hopper_gemm, stages=(2, 6))
lifetimes
""",
    """
s = SmemAllocator(arch="sm_90a")
s.add(SmemAllocation("gemm.a_stages", 4 * 16384, 1024, stages=4))
s.add(SmemAllocation("gemm.b_stages", 4 * 16384, 1024, stages=4))
s.add(SmemAllocation("gemm.c_staging", 16384, 1024))
s.compute_layout()
colours = smemviz.explore(s)
colours
""",
]


def main() -> None:
    from playwright.sync_api import sync_playwright

    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        write_notebook(root / "fixed.ipynb", CELLS)
        proc, url = start_lab(root, root / "jupyter")
        try:
            with sync_playwright() as pw:
                browser = pw.chromium.launch(executable_path=find_chromium(), headless=True, args=CHROMIUM_ARGS)
                page = browser.new_page(viewport={"width": 1400, "height": 1600})
                open_and_run(page, url, "fixed.ipynb")
                page.wait_for_function(
                    "() => document.querySelectorAll('.smemviz-explorer').length >= 2 &&"
                    " Array.from(document.querySelectorAll('.smemviz-explorer .js-plotly-plot'))"
                    ".filter(gd => gd.offsetParent !== null).every(gd => gd.querySelector('.trace.bars .point'))",
                    timeout=180_000,
                )
                page.wait_for_function(
                    "() => !!document.querySelector('.jp-OutputArea-output pre') ||"
                    " window.jupyterapp.shell.currentWidget.sessionContext.session.kernel.status"
                    " === 'idle'",
                    timeout=120_000,
                )
                page.wait_for_timeout(2000)
                explorers = page.locator(".smemviz-explorer")
                first = explorers.nth(0)
                first.locator(".js-plotly-plot").first.screenshot(path=str(DOCS / "map-shared-bytes.png"))
                explorers.nth(1).locator(".js-plotly-plot").first.screenshot(
                    path=str(DOCS / "map-resource-colours.png")
                )
                first.locator(".lm-TabBar-tab", has_text="Lifetimes").first.click()
                step = (
                    first.locator(".widget-slider", has=page.locator(".widget-label", has_text="step"))
                    .locator(".noUi-handle")
                    .first
                )
                step.wait_for(timeout=60_000)
                step.focus()
                step.press("ArrowRight")
                step.press("ArrowRight")
                page.wait_for_function(
                    "() => Array.from(document.querySelectorAll('.js-plotly-plot .gtitle'))"
                    ".some(t => t.textContent.startsWith(\"At step 'epilogue'\"))",
                    timeout=60_000,
                )
                page.wait_for_timeout(1500)
                tab = first.locator(".widget-tab-contents, .lm-TabPanel-stackedPanel, .p-TabPanel-stackedPanel").first
                tab.screenshot(path=str(DOCS / "lifetimes-tab.png"))
                browser.close()
        finally:
            stop_lab(proc)
    namespace: dict = {}
    exec(CELLS[0].replace("lifetimes = smemviz.explore(hopper_gemm, stages=(2, 6))\nlifetimes", ""), namespace)
    import smemviz

    layout = namespace["hopper_gemm"](4)
    layout.compute_layout()  # the explorer computes what a builder returns; export is handed a computed one
    smemviz.export(layout, DOCS / "export-shared-bytes.png", width=1000, height=360)
    for name in ("map-shared-bytes.png", "map-resource-colours.png", "lifetimes-tab.png", "export-shared-bytes.png"):
        path = DOCS / name
        print(f"{path}: {path.stat().st_size:,} bytes" if path.exists() else f"{path}: not written")


if __name__ == "__main__":
    main()
