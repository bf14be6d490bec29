"""The explorer's Lifetimes tab in a real JupyterLab: move the explorer's
slider and the step control, click a step's column, and read what the page's
plots hold (``gd.data`` / ``gd.layout`` of the drawn figures)."""

from __future__ import annotations

import pytest

from tools.lab import open_and_run, wait_until, watched_page, write_notebook

pytestmark = [pytest.mark.browser, pytest.mark.slow]

LIFETIMES_CELL = """
import smemviz
from smemviz import SmemAllocator, SmemAllocation

def build(stages=2):
    s = SmemAllocator(arch="sm_90a", steps=("load", "mma", "epilogue"))
    for i in range(stages):
        s.add(SmemAllocation(f"a{i}", 16384, 1024), live=range(0, 2))
        s.add(SmemAllocation(f"b{i}", 16384, 1024), live=range(0, 2))
    s.add(SmemAllocation("epi", 32768, 1024), live="epilogue")
    s.add(SmemAllocation("bias", 512, 16), live={"mma", "epilogue"})
    return s

ex = smemviz.explore(build, stages=(1, 6))
ex.show_lifetimes()
ex
"""

# the drawn figure whose title starts with ``prefix`` (the Lifetimes tab's plots)
FIND = """(prefix) => Array.from(document.querySelectorAll('.smemviz-explorer .js-plotly-plot'))
    .find(gd => gd.layout && gd.layout.title && String(gd.layout.title.text).startsWith(prefix))"""


def lifetime_map(page) -> dict:
    """Region names, the outlined step and the profile of the drawn lifetime map."""
    return page.evaluate(rf"""() => {{ const gd = ({FIND})('SMEM lifetimes');
        if (!gd) return null;
        return {{ names: Array.from(gd.data[0].hovertext, h => h.match(/<b>(.*?)<\/b>/)[1]), outline: gd.layout.shapes[0].x0,
                 title: gd.layout.title.text, profile: Array.from(gd.data[2].y) }}; }}""")


# whether the lifetime map outlines the step at ``x0``
OUTLINE_AT = f"""(x0) => {{ const gd = ({FIND})('SMEM lifetimes');
    return !!gd && gd.layout.shapes[0].x0 === x0; }}"""


def step_map(page) -> dict:
    """The title and the data bars' offsets of the drawn byte map of one step."""
    return page.evaluate(f"""() => {{ const gd = ({FIND})('At step');
        if (!gd) return null;
        const data = gd.data.find(t => t.meta === 'data');
        return {{ title: gd.layout.title.text, bases: Array.from(data.base).sort((a, b) => a - b) }}; }}""")


def test_lifetimes_tab_follows_the_slider_and_the_step_control(jupyterlab, browser, artifacts):
    base_url, notebooks = jupyterlab
    write_notebook(notebooks / "lifetimes.ipynb", [LIFETIMES_CELL])
    with watched_page(browser, artifacts, "lifetimes-browser", {"width": 1400, "height": 1600}, levels=()) as (
        page,
        console,
    ):
        open_and_run(page, base_url, "lifetimes.ipynb")
        page.wait_for_function(f"() => !!({FIND})('SMEM lifetimes') && !!({FIND})('At step')", timeout=120_000)
        first = lifetime_map(page)
        assert first["title"] == "SMEM lifetimes: 3 steps, 6 regions"
        assert sorted(first["names"]) == ["a0", "a1", "b0", "b1", "bias", "epi"]
        assert first["outline"] == -0.5  # the first step is chosen
        assert first["profile"] == [65536, 66048, 33280]
        assert step_map(page)["title"].startswith("At step 'load' (1 of 3), 4 live")

        # the explorer's own slider (the first on the page): stages 2 -> 3
        handle = page.locator(".widget-slider .noUi-handle").first
        handle.focus()
        handle.press("ArrowRight")
        page.wait_for_function(
            f"() => {{ const gd = ({FIND})('SMEM lifetimes');"
            " return gd && gd.layout.title.text.includes('8 regions'); }",
            timeout=30_000,
        )
        moved = lifetime_map(page)
        assert moved["title"] == "SMEM lifetimes: 3 steps, 8 regions"
        assert moved["profile"] == [98304, 98816, 33280]
        page.wait_for_function(f"() => ({FIND})('At step').layout.title.text.includes('6 live')", timeout=30_000)

        # the step control: load -> mma -> epilogue
        step = page.locator(".widget-slider", has=page.locator(".widget-label", has_text="step")).locator(
            ".noUi-handle"
        )
        step.focus()
        step.press("ArrowRight")
        step.press("ArrowRight")
        page.wait_for_function(
            f"() => ({FIND})('At step').layout.title.text.startsWith(\"At step 'epilogue'\")", timeout=30_000
        )
        at = step_map(page)
        assert at["title"].startswith("At step 'epilogue' (3 of 3), 2 live"), at
        assert len(at["bases"]) == 2  # epi and bias
        # the lifetime map is another figure, updated after the step map: wait for its outline
        wait_until(page, OUTLINE_AT, arg=1.5)
        assert lifetime_map(page)["outline"] == 1.5

        # a click on the first column of live bytes chooses "load" again
        page.evaluate(f"() => ({FIND})('SMEM lifetimes').scrollIntoView()")
        page.locator(".smemviz-explorer .js-plotly-plot", has_text="SMEM lifetimes").locator(
            ".barlayer .trace.bars"
        ).nth(2).locator(".point path").first.click(force=True)
        page.wait_for_function(
            f"() => ({FIND})('At step').layout.title.text.startsWith(\"At step 'load'\")", timeout=30_000
        )
        wait_until(page, OUTLINE_AT, arg=-0.5)
        assert lifetime_map(page)["outline"] == -0.5

        # compare layouts: the totals of the three layouts, then the unshared one drawn
        page.locator(".smemviz-explorer button", has_text="compare layouts").click()
        page.wait_for_function(f"() => !!({FIND})('Data total by layout')", timeout=60_000)
        totals = page.evaluate(
            f"() => {{ const gd = ({FIND})('Data total by layout');"
            " return [Array.from(gd.data[0].y), Array.from(gd.data[0].x)]; }"
        )
        assert totals[0] == ["no aliasing", "greedy", "optimal"]
        assert totals[1][0] == 3 * 32768 + 32768 + 512 and totals[1][2] == 98816, totals
        page.locator(".smemviz-explorer .widget-toggle-buttons button", has_text="no aliasing").click()
        page.wait_for_function(
            f"() => ({FIND})('SMEM lifetimes').layout.annotations[0].text.includes('gap')", timeout=30_000
        )
        page.screenshot(path=str(artifacts / "lifetimes-browser.png"), full_page=True)
        assert not console, console
