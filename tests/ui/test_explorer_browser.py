"""The explorer in a real JupyterLab in headless Chromium: run a notebook
that calls ``explore`` with a builder, move the slider, see the SMEM map redrawn."""

from __future__ import annotations

import re

import pytest

from tools.lab import GEMM_CELL, open_and_run, smem_title, wait_for_title_change, watched_page, write_notebook

pytestmark = [pytest.mark.browser, pytest.mark.slow]


# the first map's bars, as their SVG paths
BAR_PATHS_JS = (
    "() => Array.from(document.querySelectorAll('.js-plotly-plot')[0].querySelectorAll('.trace.bars .point path'),"
    " e => e.getAttribute('d'))"
)


def bar_paths(page) -> list[str]:
    return page.evaluate(BAR_PATHS_JS)


def test_slider_redraws_the_smem_map(jupyterlab, browser, artifacts):
    base_url, notebooks = jupyterlab
    write_notebook(
        notebooks / "explore.ipynb",
        [
            GEMM_CELL,
            "ex = smemviz.explore(build_gemm_layout, stages=(1, 6), tile_n=[64, 128, 256], dtype=['bf16', 'f8e4m3'])\nex",
        ],
    )
    with watched_page(browser, artifacts, "explorer-browser", {"width": 1400, "height": 1300}) as (page, console):
        open_and_run(page, base_url, "explore.ipynb")
        page.wait_for_selector(".jp-OutputArea-output .js-plotly-plot svg.main-svg", timeout=90_000)
        page.wait_for_function(
            "() => { const t = document.querySelector('.js-plotly-plot .gtitle');"
            " return t && t.textContent.includes('SMEM layout'); }",
            timeout=60_000,
        )
        before = smem_title(page)
        assert "98,312 B" in before  # 2 stages x (16 + 16 KiB) + 32 KiB epilogue + the 4 B slot, to 8
        paths_before = bar_paths(page)
        assert paths_before

        handle = page.locator(".widget-slider .noUi-handle").first
        handle.focus()
        handle.press("ArrowRight")  # stages 2 -> 3
        after, _ = wait_for_title_change(page, before)
        assert re.search(r"SMEM layout: 131,\d{3} B", after), after
        # the bars are redrawn after the title: wait for them, then read them
        page.wait_for_function(
            f"(old) => JSON.stringify(({BAR_PATHS_JS})()) !== JSON.stringify(old)", arg=paths_before, timeout=30_000
        )
        assert bar_paths(page) != paths_before
        # escaped names show as text, not markup
        labels = page.locator(".js-plotly-plot").first.locator(".trace.bars text").all_text_contents()
        assert "epi" in labels
        # the maps fill the explorer's width, and every subtitle sits under its title
        fit = page.evaluate(
            "() => Array.from(document.querySelectorAll('.smemviz-explorer .js-plotly-plot')).slice(0, 2).map(gd => {"
            " const t = gd.querySelector('.gtitle').getBoundingClientRect();"
            " const s = gd.querySelector('.gtitle-subtitle').getBoundingClientRect();"
            " return [gd._fullLayout.width, gd.closest('.smemviz-explorer').getBoundingClientRect().width,"
            " t.top, s.top]; })"
        )
        assert len(fit) == 2, fit
        for plot_width, explorer_width, title_top, subtitle_top in fit:
            assert plot_width >= 0.95 * explorer_width - 10 and plot_width > 700, fit
            assert subtitle_top > title_top, fit
        # each map's drawing box is a layout boundary of its own, and as big as its plot (nothing clipped)
        boxes = page.evaluate(
            "() => Array.from(document.querySelectorAll('.smemviz-explorer .js-plotly-plot .svg-container'))"
            ".slice(0, 2).map(c => { const r = c.getBoundingClientRect();"
            " const svg = c.querySelector('svg.main-svg').getBoundingClientRect();"
            " return [getComputedStyle(c).contain, r.width, r.height, svg.width, svg.height]; })"
        )
        assert len(boxes) == 2, boxes
        for contain, width, height, svg_width, svg_height in boxes:
            assert contain == "strict" and abs(width - svg_width) < 2 and abs(height - svg_height) < 2, boxes
        page.locator(".js-plotly-plot").first.scroll_into_view_if_needed()
        page.screenshot(path=str(artifacts / "explorer-browser.png"), full_page=True)
        assert not page.locator(".smemviz-error").count()
