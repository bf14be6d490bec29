"""The Lifetimes tab opened by a click (issue 23, point 4): its maps were
drawn while the tab was hidden, where plotly measures every text as empty,
and the subtitle came out above the title. And no plotly console noise on
the way (point 11: "Invalid color specifier" warnings)."""

from __future__ import annotations

import pytest

from tools.lab import open_and_run, wait_until, watched_page, write_notebook

pytestmark = [pytest.mark.browser, pytest.mark.slow]

CELL = """
import smemviz
from smemviz import SmemAllocator, SmemAllocation

def build(stages=2):
    s = SmemAllocator(arch="sm_90a", steps=("load", "mma", "epilogue"))
    s.add(SmemAllocation("gemm.a_stages", stages * 16384, 1024, stages=stages), live=range(0, 2))
    s.add(SmemAllocation("gemm.b_stages", stages * 16384, 1024, stages=stages), live=range(0, 2))
    s.add(SmemAllocation("gemm.c_staging", 32768, 1024), live="epilogue")
    s.add(SmemAllocation("bias", 512, 16), live={"mma", "epilogue"})
    return s

ex = smemviz.explore(build, stages=(1, 6))
ex
"""

# for each drawn figure in the Lifetimes tab: where its title and subtitle are
PLACES = """() => Array.from(document.querySelectorAll('.smemviz-explorer .js-plotly-plot'))
    .filter(gd => gd.offsetParent !== null && gd.layout && gd.layout.title
            && /^(SMEM lifetimes|At step)/.test(String(gd.layout.title.text)))
    .map(gd => { const t = gd.querySelector('.gtitle'), s = gd.querySelector('.gtitle-subtitle');
                 const tb = t && t.getBoundingClientRect(), sb = s && s.getBoundingClientRect();
                 const fig = gd.getBoundingClientRect();
                 return { title: String(gd.layout.title.text), titleTop: tb ? tb.top : null,
                          titleBottom: tb ? tb.bottom : null, subTop: sb ? sb.top : null,
                          subRight: sb ? sb.right : null, figRight: fig.right }; })"""

# how many maps are in the explorer's hidden tabs (the Lifetimes tab's two): drawn while
# hidden, or waiting to be shown with a "drawing the map" notice
HIDDEN_MAPS = """() => Array.from(document.querySelectorAll('.smemviz-explorer .js-plotly-plot'))
    .filter(gd => gd.offsetParent === null && gd.layout && gd.layout.title
            && /^(SMEM lifetimes|At step)/.test(String(gd.layout.title.text))).length
  + Array.from(document.querySelectorAll('.smemviz-explorer .smemviz-map-notice'))
    .filter(n => n.offsetParent === null && n.dataset.failed !== 'true').length"""


def test_a_clicked_lifetimes_tab_has_its_titles_above_their_subtitles(jupyterlab, browser, artifacts):
    base_url, notebooks = jupyterlab
    write_notebook(notebooks / "lifetimes_click.ipynb", [CELL])
    with watched_page(
        browser, artifacts, "lifetimes-click", {"width": 1300, "height": 1600}, levels=("error", "warning")
    ) as (page, console):
        open_and_run(page, base_url, "lifetimes_click.ipynb")
        page.wait_for_function(
            "() => { const t = document.querySelector('.smemviz-explorer .js-plotly-plot .gtitle');"
            " return t && t.textContent.startsWith('SMEM layout'); }",
            timeout=120_000,
        )
        # the hidden tab's maps are made (and were drawn, before) while it is hidden
        page.wait_for_function(f"() => ({HIDDEN_MAPS})() >= 2", timeout=60_000)
        page.locator(
            ".smemviz-explorer .lm-TabBar-tab, .smemviz-explorer .p-TabBar-tab", has_text="Lifetimes"
        ).first.click()
        # shown, the maps are laid out again: wait until they stand as the checks below expect
        # (a timeout falls through to the checks, which say what is wrong)
        wait_until(
            page,
            f"() => {{ const ps = ({PLACES})(); return ps.length >= 2 && ps.every(p => p.subTop !== null"
            " && p.titleTop < p.subTop && p.titleBottom <= p.subTop + 2 && p.subRight <= p.figRight + 1); }",
            timeout_ms=60_000,
        )
        places = page.evaluate(PLACES)
        assert len(places) >= 2, places
        page.screenshot(path=str(artifacts / "lifetimes-click.png"), full_page=True)
        for p in places:
            assert p["titleTop"] < p["subTop"], p  # the title first, its subtitle under it
            assert p["titleBottom"] <= p["subTop"] + 2, p
            assert p["subRight"] <= p["figRight"] + 1, p  # nothing runs off the right edge
        noise = [c for c in console if "Invalid color" in c or "error" in c.split(":")[0]]
        assert not noise, noise
