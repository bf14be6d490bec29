"""In-browser redraw time of the explorer's SMEM map after a slider move, at
200 regions: JupyterLab and headless Chromium (Playwright), median of N moves.

Targets, in-page medians: <= 60 ms at 6 regions, <= 100 ms at 200 regions and
<= 100 ms with the Lifetimes tab open (``--tab-open``). Measured for smemviz's map view and, as a
baseline in the same run (same Lab, same browser, rounds interleaved), for
the same explorer drawn by plotly's own FigureWidget view with plotly's
legends. Two numbers per move:

- in page: from the slider's keydown event to the first animation frame whose
  DOM holds the map's new title (kernel round trip, figure update, plotly
  redraw), both stamped inside the page on its own clock;
- end to end: from Playwright's key press to Playwright seeing that title,
  which adds the automation's own round trips (tens of ms on a busy machine).

bench_explorer_breakdown.py splits the time into its steps.

With ``--lifetimes`` it times the explorer's Lifetimes tab instead: a layout
of 200 regions over 24 steps solved from lifetimes (the instance of
``bench_alias.py --figure``, plus ``stages`` buffers the slider adds), the tab
open, and the time from the keydown to the frame whose lifetime map shows its
new title (the byte map and the step's map update in the same move). The
builder keeps each layout it has solved (``functools.cache``), so after the
first visit of each slider value a move costs the redraw and not the solve;
``--solve`` re-solves on every move (greedy) to time that as well.

With ``--tab-open`` it times a builder's slider with the Lifetimes tab open (issue 30,
point 5): notebook 02's GEMM solved from lifetimes (A/B stages live while loading and
multiplying, the C tile in the epilogue, a bias from the MMA on: 2-18 regions), the tab
open, and the time from the keydown to the frame whose SMEM map (above the tabs) shows
its new subtitle; the lifetime map's new title, same moves, is reported beside it, and
the same explorer with the tab closed is timed in the same run.

With ``--step`` it times the Lifetimes tab's step slider on the same
instance: from the keydown on the step control to the frame whose step map
shows the new step's title (the lifetime map's outline moves in the same
update). Nothing is solved: a step only redraws.

With ``--regions 6`` (anything under 8) the SMEM map is that of a small
layout: two stages of A and B, an epilogue buffer and the TMEM-pointer slot
(8 regions while the slider is at 3 stages).

    python -m benchmarks.bench_explorer_browser [--moves 25] [--rounds 2] [--regions N] [--no-baseline]
        [--lifetimes [--solve] | --step | --tab-open]
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tools.browser import CHROMIUM_ARGS, find_chromium
from tools.lab import GEMM_CELL, open_and_run, smem_title, start_lab, stop_lab, wait_for_title_change

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

# the lifetimes instance: bench_alias.py --figure's 200 regions over 24 steps, with
# ``stages`` 8 KiB buffers live in the first four steps, which the slider adds
LIFETIMES_CELL = """
import functools
import random
import smemviz
from smemviz import SmemAllocator, SmemAllocation

def build_lifetimes(stages=2, regions=200, steps=24, solver="greedy"):
    rng = random.Random(1)
    s = SmemAllocator(arch="sm_90a", steps=steps)
    for i in range(stages):
        s.add(SmemAllocation(f"stage{i}", 8192, 1024), live=range(0, 4))
    for k in range(regions - 2):  # 200 regions at 2 stages
        first = rng.randrange(steps)
        s.add(SmemAllocation(f"buf{k}", rng.randint(4, 256) * 16, alignment=rng.choice([16, 128])),
              live=range(first, rng.randint(first + 1, min(steps, first + 4))))
    s.compute_layout(solver=solver)
    return s.plan

solved_once = functools.cache(build_lifetimes)
"""

TAB_CLOSED = "smemviz map view, Lifetimes tab closed"
# --tab-open: notebook 02's GEMM solved from lifetimes, as a builder (stages 5 at the start)
TAB_OPEN_CELL = """
import smemviz
from smemviz import SmemAllocator, SmemAllocation

def gemm_lifetimes(stages=5, tile_n=128):
    s = SmemAllocator(arch="sm_90a", steps=("load", "mma", "epilogue"))
    for i in range(stages):
        s.add(SmemAllocation(f"smem_a{i}", 16384, 1024), live=range(0, 2))
        s.add(SmemAllocation(f"smem_b{i}", tile_n * 128, 1024), live=range(0, 2))
    s.add(SmemAllocation("epi_c", 128 * tile_n * 2, 1024), live="epilogue")
    s.add(SmemAllocation("bias", 4 * tile_n, 16), live={"mma", "epilogue"})
    return s
"""

# a small layout for --regions under 8: 6 regions at the slider's start (2 stages)
SMALL_CELL = """
import smemviz
from smemviz import SmemAllocator, SmemAllocation

def build_small(stages=2):
    s = SmemAllocator()
    for i in range(stages):
        s.add(SmemAllocation(f"smem_a{i}", 16384, 1024))
        s.add(SmemAllocation(f"smem_b{i}", 16384, 1024))
    s.add(SmemAllocation("epi", 32768, 128))
    s.add_tmem_ptr(SmemAllocation("tmem_ptr", 4, 4))
    return s
"""

LIFETIMES_TITLE = "SMEM lifetimes"
STEP_TITLE = "At step"

# the step map's title element (None until drawn)
_STEP_TITLE_JS = (
    "Array.from(document.querySelectorAll('.js-plotly-plot .gtitle'))"
    f".find(t => t.textContent.startsWith('{STEP_TITLE}'))"
)


def step_title(page) -> str:
    return page.evaluate(f"() => {{ const t = {_STEP_TITLE_JS}; return t ? t.textContent : ''; }}")


def wait_for_step_title_change(page, old: str, timeout_s: float = 60.0) -> str:
    """Wait for the step map's new title; the page stamps the frame it is first seen in."""
    return wait_for_title_change(page, old, timeout_s, title_js=_STEP_TITLE_JS)[0]


# the lifetime map's title element (None until drawn)
_LIFETIME_TITLE_JS = (
    "Array.from(document.querySelectorAll('.js-plotly-plot .gtitle'))"
    f".find(t => t.textContent.startsWith('{LIFETIMES_TITLE}'))"
)


def lifetime_title(page) -> tuple[str, str]:
    """The lifetime map's title and the byte map's subtitle (it counts the regions:
    a stage added into a gap leaves the byte map's total, and so its title, alone)."""
    return page.evaluate(
        f"() => {{ const t = {_LIFETIME_TITLE_JS};"
        " const b = document.querySelector('.js-plotly-plot .gtitle-subtitle');"
        " return [t ? t.textContent : '', b ? b.textContent : '']; }"
    )


def wait_for_lifetime_title_change(page, old: tuple[str, str], timeout_s: float = 60.0) -> str:
    """Wait until both the lifetime map and the byte map show new titles (``old``:
    ``(lifetime title, byte map subtitle)``). The page stamps the frame each is first
    seen in: ``__smemvizSeen`` (the lifetime map) and ``__smemvizSeenByteMap``."""
    page.evaluate("() => { window.__smemvizSeen = null; window.__smemvizSeenByteMap = null; }")
    handle = page.wait_for_function(
        f"([life, bytes]) => {{ const t = {_LIFETIME_TITLE_JS};"
        " const b = document.querySelector('.js-plotly-plot .gtitle-subtitle');"
        " const now = performance.now();"
        " if (t && t.textContent !== life && window.__smemvizSeen === null) window.__smemvizSeen = now;"
        " if (b && b.textContent !== bytes && window.__smemvizSeenByteMap === null) window.__smemvizSeenByteMap = now;"
        " return window.__smemvizSeen !== null && window.__smemvizSeenByteMap !== null ? t.textContent : null; }",
        arg=list(old),
        timeout=timeout_s * 1000,
        polling="raf",
    )
    return handle.json_value()


def measure(
    browser,
    url: str,
    name: str,
    moves: int,
    lifetimes: bool = False,
    byte_map: list[float] | None = None,
    step: bool = False,
    tab_open: bool = False,
) -> tuple[list[float], list[float], int]:
    """Open notebook ``name``, run it, press the slider ``moves`` (+2 warm-up) times:
    (in-page seconds, end-to-end seconds, bars drawn on the timed map). With
    ``lifetimes``, the byte map's in-page times of the same moves go to ``byte_map``;
    with ``step``, the Lifetimes tab's step slider is pressed and its map timed; with
    ``tab_open``, the byte map is timed with the Lifetimes tab open, and the lifetime map's
    in-page times of the same moves go to ``byte_map``."""
    page = browser.new_page(viewport={"width": 1400, "height": 1200})
    title: Callable[[Any], Any]  # the timed title's text now
    wait: Callable[[Any, Any], Any]  # returns once it has changed
    if step:
        title, wait = step_title, wait_for_step_title_change
    else:
        title, wait = (
            (lifetime_title, wait_for_lifetime_title_change)
            if lifetimes or tab_open
            else (smem_title, lambda page, before: wait_for_title_change(page, before))
        )
    try:
        open_and_run(page, url, name)
        page.on("pageerror", lambda e: print(f"page error ({name}):", e))
        page.wait_for_function(
            "() => { const t = document.querySelector('.js-plotly-plot .gtitle');"
            " return t && t.textContent.includes('SMEM layout'); }",
            timeout=120_000,
        )
        if step:
            page.wait_for_function(f"() => !!({_STEP_TITLE_JS})", timeout=120_000)
            n_bars = page.evaluate(
                f"() => ({_STEP_TITLE_JS}).closest('.js-plotly-plot').querySelectorAll('.trace.bars .point').length"
            )
            handle = (
                page.locator(".widget-slider", has=page.locator(".widget-label", has_text="step"))
                .locator(".noUi-handle")
                .first
            )
        elif lifetimes or tab_open:
            page.wait_for_function(f"() => !!({_LIFETIME_TITLE_JS})", timeout=120_000)
            n_bars = page.evaluate(
                f"() => ({_LIFETIME_TITLE_JS}).closest('.js-plotly-plot').querySelectorAll('.trace.bars .point').length"
            )
        else:
            n_bars = page.locator(".js-plotly-plot").first.locator(".trace.bars .point").count()
        if tab_open:  # the byte map above the tabs is what is timed
            n_bars = page.locator(".js-plotly-plot").first.locator(".trace.bars .point").count()
        if not step:
            handle = page.locator(".widget-slider .noUi-handle").first
        page.evaluate(KEYDOWN_STAMP)
        handle.focus()
        times, in_page = [], []
        for k in range(moves + 2):
            before: Any = title(page)
            t0 = time.perf_counter()
            handle.press("ArrowRight" if k % 2 == 0 else "ArrowLeft")
            wait(page, before)
            times.append(time.perf_counter() - t0)
            timed, other = ("__smemvizSeenByteMap", "__smemvizSeen") if tab_open else ("__smemvizSeen", None)
            if lifetimes and not tab_open:
                other = "__smemvizSeenByteMap"
            in_page.append(page.evaluate(f"() => window.{timed} - window.__smemvizKeydown") / 1000)
            if other and byte_map is not None and k >= 2:
                byte_map.append(page.evaluate(f"() => window.{other} - window.__smemvizKeydown") / 1000)
            page.wait_for_timeout(150)
        # the first moves warm the kernel and plotly
        return in_page[2:], times[2:], n_bars
    finally:
        page.close()


def _stats(values: list[float]) -> str:
    q1, _, q3 = statistics.quantiles(values, n=4)
    return (
        f"median {statistics.median(values) * 1000:.0f} ms (quartiles {q1 * 1000:.0f}-{q3 * 1000:.0f}), "
        f"min {min(values) * 1000:.0f}, max {max(values) * 1000:.0f}"
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--moves", type=int, default=25, help="timed slider moves per variant and round")
    ap.add_argument("--rounds", type=int, default=2, help="rounds, each measuring every variant in turn")
    ap.add_argument("--regions", type=int, default=200)
    ap.add_argument("--no-baseline", action="store_true", help="measure smemviz's map view only")
    ap.add_argument("--lifetimes", action="store_true", help="time the Lifetimes tab (200 regions over 24 steps)")
    ap.add_argument("--solve", action="store_true", help="with --lifetimes: solve the layout again on every move")
    ap.add_argument("--step", action="store_true", help="time the Lifetimes tab's step slider (200 regions, 24 steps)")
    ap.add_argument(
        "--tab-open", action="store_true", help="time the SMEM map with the Lifetimes tab open (notebook 02's GEMM)"
    )
    args = ap.parse_args()
    lifetimes = args.lifetimes or args.step
    import nbformat
    from playwright.sync_api import sync_playwright

    variants = {k: v for k, v in VARIANTS.items() if not (args.no_baseline and v)}
    if args.tab_open:  # the same explorer with the tab closed, beside it in the same run
        variants[TAB_CLOSED] = ""
    results: dict[str, tuple[list[float], list[float]]] = {k: ([], []) for k in variants}
    # --lifetimes: the byte map, same moves; --tab-open: the lifetime map, same moves
    byte_maps: dict[str, list[float]] = {k: [] for k in variants}
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        # 2 stages -> 4 operand buffers + 3 aliased + 1 slot + extra = regions
        extra = args.regions - 8
        files = {}
        for i, (label, setup) in enumerate(variants.items()):
            nb = nbformat.v4.new_notebook()
            if args.tab_open:
                nb.cells = [
                    nbformat.v4.new_code_cell(TAB_OPEN_CELL + setup),
                    nbformat.v4.new_code_cell(
                        "ex = smemviz.explore(gemm_lifetimes, stages=(1, 8), tile_n=[64, 128, 256])\n"
                        + ("" if label == TAB_CLOSED else "ex.show_lifetimes()\n")
                        + "ex"
                    ),
                ]
            elif lifetimes:
                builder = "build_lifetimes" if args.solve else "solved_once"
                nb.cells = [
                    nbformat.v4.new_code_cell(LIFETIMES_CELL + setup),
                    nbformat.v4.new_code_cell(
                        "import ipywidgets\n"
                        f"ex = smemviz.explore({builder}, stages=(1, 3), regions=ipywidgets.fixed({args.regions}))\n"
                        "ex.show_lifetimes()\nex"
                    ),
                ]
            elif args.regions < 8:
                nb.cells = [
                    nbformat.v4.new_code_cell(SMALL_CELL + setup),
                    nbformat.v4.new_code_cell("ex = smemviz.explore(build_small, stages=(1, 3))\nex"),
                ]
            else:
                nb.cells = [
                    nbformat.v4.new_code_cell(GEMM_CELL + setup),
                    nbformat.v4.new_code_cell(
                        "import ipywidgets\n"
                        f"ex = smemviz.explore(build_gemm_layout, stages=(1, 3), tile_n=[64, 128], "
                        f"extra=ipywidgets.fixed({extra}))\nex"
                    ),
                ]
            nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
            files[label] = f"bench{i}.ipynb"
            nbformat.write(nb, str(root / files[label]))
        proc, url = start_lab(root, root / "jupyter")
        try:
            with sync_playwright() as pw:
                browser = pw.chromium.launch(executable_path=find_chromium(), headless=True, args=CHROMIUM_ARGS)
                for _ in range(args.rounds):
                    for label in variants:
                        in_page, times, n_bars = measure(
                            browser,
                            url,
                            files[label],
                            args.moves,
                            args.lifetimes,
                            byte_maps[label],
                            step=args.step,
                            tab_open=args.tab_open and label != TAB_CLOSED,
                        )
                        results[label][0].extend(in_page)
                        results[label][1].extend(times)
                browser.close()
        finally:
            stop_lab(proc)
    what = (
        "SMEM map with the Lifetimes tab open (notebook 02's GEMM solved from lifetimes)"
        if args.tab_open
        else "step map (Lifetimes tab's step slider)"
        if args.step
        else "lifetime map (Lifetimes tab), "
        + ("solved again on every move" if args.solve else "each layout solved once")
        if args.lifetimes
        else "SMEM map"
    )
    print(
        f"browser redraw of the {what} after a slider move, "
        + (f"{n_bars} bars drawn, " if args.tab_open else f"{args.regions} regions ({n_bars} bars drawn), ")
        + f"{args.moves} moves x {args.rounds} rounds per variant, variants interleaved:"
    )
    for label, (in_page, times) in results.items():
        print(f"  {label}")
        print(f"    in page (keydown -> frame with the new title): {_stats(in_page)}")
        both = args.lifetimes or (args.tab_open and label != TAB_CLOSED)
        seen = "both maps' titles seen" if both else "title seen"
        print(f"    end to end (Playwright press -> {seen}):   {_stats(times)}")
        if byte_maps[label]:
            other = "the lifetime map in the tab" if args.tab_open else "the byte map above"
            print(f"    {other}, same moves, in page:        {_stats(byte_maps[label])}")
    if len(results) >= 2:
        ours, base = (statistics.median(v[0]) for v in list(results.values())[:2])
        print(f"  in-page median ratio, smemviz / baseline: {ours / base:.2f}")
    target = 100 if args.step or args.regions >= 8 else 60
    print(f"  target: in-page median <= {target} ms")


if __name__ == "__main__":
    main()
