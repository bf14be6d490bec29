"""In-browser redraw time of the explorer's bank picture after a swizzle toggle: JupyterLab and
headless Chromium (Playwright), median of N clicks.

Target: <= 100 ms median, click to frame. The explorer opens on its Banks tab showing the
stmatrix.x4 epilogue store of a 128x32 bf16 C tile (eight warps); each timed click
alternates the swizzle toggle between "none" (4-way: 16 wavefronts drawn) and "64B"
(conflict-free: 4 wavefronts), so every click changes the grid, its size and its title.
Two numbers per click:

- in page: from the toggle button's pointerdown event to the first animation frame whose
  DOM holds the bank picture's new title (kernel round trip, analysis, the grid's new
  cells laid out), both stamped inside the page on its own clock;
- end to end: from Playwright's click to Playwright seeing that title, which adds the
  automation's own round trips.

    python -m benchmarks.bench_banks_browser [--clicks 25] [--rounds 2]
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from benchmarks.bench_explorer_browser import _stats
from tools.browser import CHROMIUM_ARGS, find_chromium
from tools.lab import open_and_run, start_lab, stop_lab, wait_for_title_change

BANKS_CELL = """
import smemviz
from smemviz import SmemAllocator, SmemAllocation

EPI = {"instruction": "stmatrix.x4", "layout": "(128,32):(32,1)", "warps": (8, 1)}

def build(stages=4):
    s = SmemAllocator(arch="sm_90a")
    s.add(SmemAllocation("sA", dtype="bf16", shape=(stages, 128, 64), alignment=1024, swizzle="128B",
                         access={"instruction": "ldmatrix.x4", "layout": "(128,64):(64,1)", "warps": (4, 1)}))
    s.add(SmemAllocation("epi_c", dtype="bf16", count=128 * 32, alignment=512, access=EPI))
    return s

ex = smemviz.explore(build, stages=(1, 6))
ex.show_banks("epi_c")
ex
"""

BANK_TITLE = "epi_c: stmatrix.x4"
# the bank picture's title element (None until drawn)
_TITLE_JS = (
    "Array.from(document.querySelectorAll('.smemviz-banks-view .smemviz-bank-title'))"
    f".find(t => t.textContent.startsWith('{BANK_TITLE}'))"
)
# the toggle's pointerdown time, on the page's clock (capture phase: before any handler)
POINTERDOWN_STAMP = """() => document.addEventListener("pointerdown",
    (e) => { window.__smemvizPress = e.timeStamp; }, {capture: true})"""


def bank_title(page) -> str:
    return page.evaluate(f"() => {{ const t = {_TITLE_JS}; return t ? t.textContent : ''; }}")


def wait_for_bank_title_change(page, old: str, timeout_s: float = 30.0) -> str:
    """The bank picture's new title; the page keeps the frame it was first seen in
    (``performance.now()``) in ``window.__smemvizSeen``."""
    return wait_for_title_change(page, old, timeout_s, title_js=_TITLE_JS)[0]


def toggle(page, mode: str):
    """The swizzle toggle's button for ``mode``."""
    return page.locator(".smemviz-banks-view .widget-toggle-buttons button", has_text=mode).first


def measure(browser, url: str, name: str, clicks: int) -> tuple[list[float], list[float], list[str]]:
    """Open notebook ``name``, run it, click the toggle ``clicks`` (+2 warm-up) times:
    (in-page seconds, end-to-end seconds, the titles seen)."""
    page = browser.new_page(viewport={"width": 1400, "height": 1400})
    try:
        open_and_run(page, url, name)
        page.on("pageerror", lambda e: print(f"page error ({name}):", e))
        page.wait_for_function(f"() => !!({_TITLE_JS})", timeout=120_000)
        page.evaluate(POINTERDOWN_STAMP)
        times, in_page, titles = [], [], []
        for k in range(clicks + 2):
            before = bank_title(page)
            button = toggle(page, "64B" if k % 2 == 0 else "none")
            t0 = time.perf_counter()
            button.click()
            titles.append(wait_for_bank_title_change(page, before))
            times.append(time.perf_counter() - t0)
            in_page.append(page.evaluate("() => window.__smemvizSeen - window.__smemvizPress") / 1000)
            page.wait_for_timeout(150)
        # the first clicks warm the kernel and plotly
        return in_page[2:], times[2:], titles
    finally:
        page.close()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--clicks", type=int, default=25, help="timed toggle clicks per round")
    ap.add_argument("--rounds", type=int, default=2, help="rounds, each in a fresh page and kernel")
    args = ap.parse_args()
    import nbformat
    from playwright.sync_api import sync_playwright

    in_page: list[float] = []
    times: list[float] = []
    titles: set[str] = set()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        nb = nbformat.v4.new_notebook()
        nb.cells = [nbformat.v4.new_code_cell(BANKS_CELL)]
        nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
        nbformat.write(nb, str(root / "banks.ipynb"))
        proc, url = start_lab(root, root / "jupyter")
        try:
            with sync_playwright() as pw:
                browser = pw.chromium.launch(executable_path=find_chromium(), headless=True, args=CHROMIUM_ARGS)
                for _ in range(args.rounds):
                    a, b, seen = measure(browser, url, "banks.ipynb", args.clicks)
                    in_page += a
                    times += b
                    titles |= set(seen)
                browser.close()
        finally:
            stop_lab(proc)
    print(
        f"browser redraw of the bank picture after a swizzle toggle (none <-> 64B, stmatrix.x4 on a "
        f"128x32 bf16 tile, 16 <-> 4 wavefronts drawn), {args.clicks} clicks x {args.rounds} rounds:"
    )
    print(f"  in page (pointerdown -> frame with the new title): {_stats(in_page)}")
    print(f"  end to end (Playwright click -> title seen):       {_stats(times)}")
    print("  titles seen:", *sorted(titles), sep="\n    ")
    print("  target: in-page median <= 100 ms")


if __name__ == "__main__":
    main()
