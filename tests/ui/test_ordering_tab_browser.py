"""The explorer's Ordering tab in a real JupyterLab: a plan carrying its kernel's ordering
model (the hand-written Hopper GEMM, with its epilogue's sC over sA's stages) is explored,
the Ordering tab clicked, and the page draws the pipeline diagram (the title, the lanes,
the alias hanging off its edge) and the alias table's row."""

from __future__ import annotations

import pytest

from smemviz.analysis.ordering import check_ordering
from tools.lab import open_and_run, watched_page, write_notebook

from ..figures.ordering_plans import hopper_plan

pytestmark = [pytest.mark.browser, pytest.mark.slow]
expect = pytest.importorskip("playwright.sync_api").expect

CELL = """
import smemviz
from smemviz.layout import plan_from_json

plan = plan_from_json(open("ordering_plan.json").read())
ex = smemviz.explore(plan)
ex
"""

# the drawn diagram: its title, its lanes' tick labels and the alias labels plotly wrote as SVG text
DIAGRAM = """() => { const gd = Array.from(document.querySelectorAll('.smemviz-ordering-tab .js-plotly-plot'))
        .find(g => g.offsetParent !== null && g.querySelector('.gtitle')
                   && g.querySelector('.gtitle').textContent.startsWith('Ordering of hopper_gemm'));
    if (!gd) return null;
    return { title: gd.querySelector('.gtitle').textContent,
             lanes: Array.from(gd.querySelectorAll('.ytick text'), t => t.textContent),
             texts: Array.from(gd.querySelectorAll('.scatterlayer .textpoint text'), t => t.textContent),
             arrows: gd.querySelectorAll('.annotation-arrow-g path').length }; }"""


def test_the_ordering_tab_draws_the_diagram_and_lists_the_alias(jupyterlab, browser, artifacts):
    base_url, notebooks = jupyterlab
    (notebooks / "ordering_plan.json").write_text(hopper_plan().to_json())
    write_notebook(notebooks / "ordering_tab.ipynb", [CELL])
    with watched_page(browser, artifacts, "ordering-tab", {"width": 1300, "height": 1600}) as (page, console):
        open_and_run(page, base_url, "ordering_tab.ipynb")
        tab = page.locator(".smemviz-explorer .lm-TabBar-tab, .smemviz-explorer .p-TabBar-tab", has_text="Ordering")
        expect(tab.first).to_be_visible(timeout=120_000)
        tab.first.click()
        page.wait_for_function(
            f"() => {{ const d = ({DIAGRAM})(); return d && d.texts.includes('sA -> sC') && d.arrows >= 2; }}",
            timeout=60_000,
        )
        drawn = page.evaluate(DIAGRAM)
        assert drawn["title"] == "Ordering of hopper_gemm: 2 warp roles, 1 pipelines, 1 aliases"
        assert drawn["lanes"] == ["producerwarp 0", "mmawarps 4-11"]  # the two lines of each tick, as text
        assert {"full", "empty", "sA -> sC"} <= set(drawn["texts"])
        row = page.locator(".smemviz-ordering-tab tr.smemviz-alias-row").first
        expect(row).to_be_visible(timeout=30_000)
        expect(row).to_contain_text("sA")
        (alias,) = check_ordering(hopper_plan().ordering).aliases
        expect(row).to_contain_text(alias.edge)  # the edge the check found, as the tab writes it
        page.locator(".smemviz-explorer").first.screenshot(path=str(artifacts / "ordering-tab.png"))
        assert not [m for m in console if "pageerror" in m], console
