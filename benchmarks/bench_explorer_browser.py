"""In-browser redraw time of the explorer's SMEM map after a slider move, at
200 regions: JupyterLab and headless Chromium (Playwright), median of N moves.

Target: <= 150 ms median. Measured for smemviz's map view and, as a
baseline in the same run (same Lab, same browser, rounds interleaved), for
the same explorer drawn by plotly's own FigureWidget view with plotly's
legends. Two numbers per move:

- in page: from the slider's keydown event to the first animation frame whose
  DOM holds the map's new title (kernel round trip, figure update, plotly
  redraw), both stamped inside the page on its own clock;
- end to end: from Playwright's key press to Playwright seeing that title,
  which adds the automation's own round trips (tens of ms on a busy machine).

bench_explorer_breakdown.py splits the time into its steps.

    python -m benchmarks.bench_explorer_browser [--moves 25] [--rounds 2] [--no-baseline]
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

from tests.helpers import CHROMIUM_ARGS, find_chromium
from tests.ui.explorer_page import GEMM_CELL, open_and_run, smem_title, start_lab, stop_lab, wait_for_title_change

# the slider's keydown time, on the page's clock (capture phase: before any handler)
KEYDOWN_STAMP = """() => document.addEventListener("keydown",
    (e) => { window.__smemvizKeydown = e.timeStamp; }, {capture: true})"""


# The baseline: the same explorer drawn by plotly's own FigureWidget view,
# updated through plotly_update, with plotly's legends, as smemviz did before
# its own map view. Run in the kernel before the explorer is made.
BASELINE_CELL = """
import plotly.graph_objects as go
from smemviz.explorer import _map_widget, _sync
_map_widget.map_widget_class = lambda: go.FigureWidget  # plotly's own view as the baseline
_sync.without_legend = lambda spec: spec
"""

VARIANTS = {"smemviz map view": "", "baseline: plotly's FigureWidget view": BASELINE_CELL}


def measure(browser, url: str, name: str, moves: int) -> tuple[list[float], list[float], int]:
    """Open notebook ``name``, run it, press the slider ``moves`` (+2 warm-up) times:
    (in-page seconds, end-to-end seconds, bars drawn)."""
    page = browser.new_page(viewport={"width": 1400, "height": 1200})
    try:
        open_and_run(page, url, name)
        page.on("pageerror", lambda e: print("page error:", e))
        page.wait_for_function(
            "() => { const t = document.querySelector('.js-plotly-plot .gtitle');"
            " return t && t.textContent.includes('SMEM layout'); }", timeout=120_000)
        n_bars = page.locator(".js-plotly-plot").first.locator(".trace.bars .point").count()
        handle = page.locator(".widget-slider .noUi-handle").first
        page.evaluate(KEYDOWN_STAMP)
        handle.focus()
        times, in_page = [], []
        for k in range(moves + 2):
            before = smem_title(page)
            t0 = time.perf_counter()
            handle.press("ArrowRight" if k % 2 == 0 else "ArrowLeft")
            _, _ = wait_for_title_change(page, before)
            times.append(time.perf_counter() - t0)
            in_page.append(page.evaluate("() => window.__smemvizSeen - window.__smemvizKeydown") / 1000)
            page.wait_for_timeout(150)
        # the first moves warm the kernel and plotly
        return in_page[2:], times[2:], n_bars
    finally:
        page.close()


def _stats(values: list[float]) -> str:
    q1, _, q3 = statistics.quantiles(values, n=4)
    return (f"median {statistics.median(values) * 1000:.0f} ms (quartiles {q1 * 1000:.0f}-{q3 * 1000:.0f}), "
            f"min {min(values) * 1000:.0f}, max {max(values) * 1000:.0f}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--moves", type=int, default=25, help="timed slider moves per variant and round")
    ap.add_argument("--rounds", type=int, default=2, help="rounds, each measuring every variant in turn")
    ap.add_argument("--regions", type=int, default=200)
    ap.add_argument("--no-baseline", action="store_true", help="measure smemviz's map view only")
    args = ap.parse_args()
    import nbformat
    from playwright.sync_api import sync_playwright

    variants = {k: v for k, v in VARIANTS.items() if not (args.no_baseline and v)}
    results: dict[str, tuple[list[float], list[float]]] = {k: ([], []) for k in variants}
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        # 2 stages -> 4 operand buffers + 3 aliased + 1 slot + extra = regions
        extra = args.regions - 8
        files = {}
        for i, (label, setup) in enumerate(variants.items()):
            nb = nbformat.v4.new_notebook()
            nb.cells = [nbformat.v4.new_code_cell(GEMM_CELL + setup), nbformat.v4.new_code_cell(
                "import ipywidgets\n"
                f"ex = smemviz.explore(build_gemm_layout, stages=(1, 3), tile_n=[64, 128], "
                f"extra=ipywidgets.fixed({extra}))\nex")]
            nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
            files[label] = f"bench{i}.ipynb"
            nbformat.write(nb, str(root / files[label]))
        proc, url = start_lab(root, root / "jupyter")
        try:
            with sync_playwright() as pw:
                browser = pw.chromium.launch(executable_path=find_chromium(), headless=True, args=CHROMIUM_ARGS)
                for _ in range(args.rounds):
                    for label in variants:
                        in_page, times, n_bars = measure(browser, url, files[label], args.moves)
                        results[label][0].extend(in_page)
                        results[label][1].extend(times)
                browser.close()
        finally:
            stop_lab(proc)
    print(f"browser redraw after a slider move, {args.regions} regions ({n_bars} bars drawn), "
          f"{args.moves} moves x {args.rounds} rounds per variant, variants interleaved:")
    for label, (in_page, times) in results.items():
        print(f"  {label}")
        print(f"    in page (keydown -> frame with the new title): {_stats(in_page)}")
        print(f"    end to end (Playwright press -> title seen):   {_stats(times)}")
    if len(results) == 2:
        ours, base = (statistics.median(v[0]) for v in results.values())
        print(f"  in-page median ratio, smemviz / baseline: {ours / base:.2f}")
    print("  target: in-page median <= 150 ms at 200 regions")


if __name__ == "__main__":
    main()
