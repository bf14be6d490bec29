"""What the explorer draws in a real JupyterLab, for a kernel author's first
hour: an over-capacity layout drawn as asked, tiny regions and every barrier
region visible and hoverable, zoom ticks in bytes, family colours, and two
explorers side by side that stay readable.

Screenshots of each state go to ``artifacts/``; with ``SMEMVIZ_DOCS_SHOTS=1``
they are also written to ``docs/`` (the pictures in docs/explorer.md).
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from tools.lab import open_and_run, painted, wait_until, watched_page, write_notebook

pytestmark = [pytest.mark.browser, pytest.mark.slow]

DOCS = Path(__file__).resolve().parents[2] / "docs"

BLOCK_SCALED = '''
import ipywidgets as widgets
import smemviz
from smemviz import SmemAllocator, SmemAllocation

def block_scaled(stages=4):
    """A block-scaled GEMM's SMEM: A, B and their scale factors per stage, a
    32 B flag, three pipelines' barriers, the TMEM-pointer slot."""
    s = SmemAllocator(arch="sm_100a")
    for k in range(stages):
        s.add(SmemAllocation(f"a_stage{k}", 128 * 64 * 2, 1024))
        s.add(SmemAllocation(f"b_stage{k}", 128 * 64 * 2, 1024))
        s.add(SmemAllocation(f"sfa_stage{k}", 512, 128))
        s.add(SmemAllocation(f"sfb_stage{k}", 512, 128))
    s.add(SmemAllocation("flag", 32, 16))
    for name in ("load", "mma", "epilogue"):
        s.add_pipeline(name, stages)
    s.add_tmem_ptr(SmemAllocation("tmem_ptr", 4, 4))
    return s
'''

SIDE_BY_SIDE = """
left, right = (smemviz.explore(block_scaled, stages=(1, 12)) for _ in range(2))
for e in (left, right):
    e.layout.width = "49%"
widgets.HBox([left, right], layout=widgets.Layout(width="100%"))
"""

PLOTS = "document.querySelectorAll('.smemviz-explorer')[{i}].querySelectorAll('.js-plotly-plot')[0]"


def _shoot(locator, name: str, artifacts: Path) -> None:
    locator.page.mouse.move(5, 5)  # no hover label left over
    locator.page.wait_for_function("() => !document.querySelector('.hoverlayer .hovertext')", timeout=10_000)
    painted(locator.page)
    path = artifacts / name
    locator.screenshot(path=str(path))
    if os.environ.get("SMEMVIZ_DOCS_SHOTS"):
        shutil.copy(path, DOCS / name)


def _hover_name(page, x: float, y: float) -> str:
    """The first line of the hover label at ``(x, y)`` (a few tries: the machine may be busy)."""
    for _ in range(4):
        page.mouse.move(5, 5)
        page.wait_for_function("() => !document.querySelector('.hoverlayer .hovertext')", timeout=10_000)
        page.mouse.move(x, y)
        try:
            page.wait_for_selector(".hoverlayer .hovertext", timeout=5_000)
        except Exception:  # noqa: BLE001 - a missed mouse event under load: try again
            continue
        return page.locator(".hoverlayer .hovertext tspan.line").first.text_content() or ""
    return ""


def _unrendered_bars(page) -> list[int]:
    """Indexes of the first map's data bars that the browser does not draw (no box on screen)."""
    return page.evaluate(f"""() => Array.from({PLOTS.format(i=0)}.querySelectorAll('.trace.bars')[1]
        .querySelectorAll('.point path')).map((p, i) => [i, p.getBoundingClientRect().width])
        .filter(([, w]) => w === 0).map(([i]) => i)""")


def _smem_title(page, i: int) -> str:
    return page.evaluate(
        f"() => {{ const t = {PLOTS.format(i=i)}.querySelector('.gtitle'); return t ? t.textContent : ''; }}"
    )


def test_what_the_explorer_shows_is_the_layout_asked_for(jupyterlab, browser, artifacts):
    base_url, notebooks = jupyterlab
    write_notebook(
        notebooks / "truth.ipynb",
        [
            BLOCK_SCALED,
            "ex = smemviz.explore(block_scaled, stages=(1, 12))\nex",
            SIDE_BY_SIDE,
        ],
    )
    with watched_page(browser, artifacts, "explorer-truth", {"width": 1280, "height": 1500}) as (page, console):
        open_and_run(page, base_url, "truth.ipynb")
        page.wait_for_function(
            "() => { const e = document.querySelector('.smemviz-explorer');"
            "  const gd = e && e.querySelector('.js-plotly-plot'); return gd && gd._fullLayout && gd.querySelector('.gtitle'); }",
            timeout=120_000,
        )
        # the maps fitted to the explorer's width, and the panels drawn
        page.wait_for_function(
            f"() => {{ const gd = {PLOTS.format(i=0)}, ex = gd.closest('.smemviz-explorer');"
            " return gd._fullLayout.width >= 0.95 * ex.getBoundingClientRect().width - 10"
            " && !!ex.querySelector('.smemviz-utable'); }",
            timeout=60_000,
        )
        first = page.locator(".smemviz-explorer").first

        # -- 2. tiny regions and barriers -----------------------------------------------------
        tiny = page.evaluate(f"""() => {{
            const gd = {PLOTS.format(i=0)};
            const data = gd._fullData.find(t => t.meta === 'data');
            const bars = gd.querySelectorAll('.trace.bars')[1].querySelectorAll('.point path');
            const widths = Array.from(bars).map(p => p.getBoundingClientRect().width);
            const small = gd.querySelectorAll('.scatterlayer .trace')[0].querySelectorAll('.point');
            const boxes = Array.from(small).map(p => {{ const r = p.getBoundingClientRect();
                return [r.left, r.top, r.width, r.height]; }});
            return {{names: Array.from(data.text), widths, boxes, subtitle: gd.querySelector('.gtitle-subtitle').textContent}};
        }}""")
        assert "flag" in tiny["names"] and len(tiny["widths"]) == len(tiny["names"])
        assert min(tiny["widths"]) >= 2.0, tiny  # the 32 B flag is drawn, a few pixels wide
        assert "not to scale" in tiny["subtitle"]
        boxes = tiny["boxes"]
        assert len(boxes) == 4  # three barrier regions and the slot: one marker each
        for i, a in enumerate(boxes):
            for b in boxes[i + 1 :]:
                overlap_x = min(a[0] + a[2], b[0] + b[2]) - max(a[0], b[0])
                overlap_y = min(a[1] + a[3], b[1] + b[3]) - max(a[1], b[1])
                assert overlap_x <= 1 or overlap_y <= 1, boxes
        hovered = [_hover_name(page, left + width / 2, top + height / 2) for left, top, width, height in boxes]
        assert sorted(hovered) == ["epilogue.barriers", "load.barriers", "mma.barriers", "tmem_ptr"], hovered
        page.mouse.move(5, 5)

        # zoomed in (two drags), the ticks are bytes and hex and the flag is to scale; zoomed out, KiB again
        range_js = f"() => {PLOTS.format(i=0)}._fullLayout.xaxis.range.join(',')"

        def drag(lo_expr: str, hi_expr: str) -> None:
            before = page.evaluate(range_js)
            xs = page.evaluate(f"""() => {{ const gd = {PLOTS.format(i=0)};
                const xa = gd._fullLayout.xaxis, r = gd.querySelector('.nsewdrag').getBoundingClientRect();
                const flag = gd._fullData.find(t => t.meta === 'data');
                const at = flag.base[Array.from(flag.text).indexOf('flag')];
                return [r.left + xa.l2p({lo_expr}), r.left + xa.l2p({hi_expr}), r.top + r.height / 2]; }}""")
            page.mouse.move(xs[0], xs[2])
            page.mouse.down()
            page.mouse.move((xs[0] + xs[1]) / 2, xs[2], steps=4)
            page.mouse.move(xs[1], xs[2], steps=4)
            page.mouse.up()
            page.wait_for_function(f"(old) => ({range_js})() !== old", arg=before, timeout=30_000)

        drag("at - 4096", "at + 4096")
        drag("at - 256", "at + 512")
        # the explorer answers the zoom with byte ticks and the flag to scale: wait for them
        wait_until(
            page,
            f"() => {{ const gd = {PLOTS.format(i=0)}; const t = gd.querySelector('.xtitle');"
            " return t && t.textContent.includes('bytes, hex')"
            " && Array.from(gd.querySelectorAll('.xtick text')).some(x => x.textContent.includes('0x')); }",
        )
        zoomed = page.evaluate(f"""() => {{ const gd = {PLOTS.format(i=0)};
            const data = gd._fullData.find(t => t.meta === 'data');
            const i = Array.from(data.text).indexOf('flag');
            const marks = gd._fullData.find(t => t.meta === 'small');
            return {{ticks: Array.from(gd.querySelectorAll('.xtick text')).map(t => t.textContent),
                     range: gd._fullLayout.xaxis.range, flag: [data.x[i], data.customdata[i]],
                     marks: [Array.from(marks.x), Array.from(marks.customdata)],
                     title: gd.querySelector('.xtitle').textContent}}; }}""")
        assert zoomed["range"][1] - zoomed["range"][0] < 2048, zoomed
        assert any("0x" in t for t in zoomed["ticks"]) and len(zoomed["ticks"]) >= 3, zoomed
        assert zoomed["flag"] == [32, 32] and "bytes, hex" in zoomed["title"], zoomed  # to scale now
        assert zoomed["marks"][0] == zoomed["marks"][1], zoomed  # markers over their own bytes
        _shoot(first, "explorer-zoomed.png", artifacts)
        box = page.evaluate(
            f"() => {{ const r = {PLOTS.format(i=0)}.querySelector('.nsewdrag').getBoundingClientRect();"
            " return [r.left + r.width / 2, r.top + r.height / 2]; }"
        )
        page.mouse.dblclick(box[0], box[1])
        wait_until(
            page,
            f"() => {{ const gd = {PLOTS.format(i=0)}; const data = gd._fullData.find(t => t.meta === 'data');"
            " return data.x[Array.from(data.text).indexOf('flag')] > 32"
            " && Array.from(gd.querySelectorAll('.xtick text')).some(x => x.textContent.includes('KiB')); }",
        )
        unzoomed = page.evaluate(f"""() => {{ const gd = {PLOTS.format(i=0)};
            const data = gd._fullData.find(t => t.meta === 'data');
            return {{ticks: Array.from(gd.querySelectorAll('.xtick text')).map(t => t.textContent),
                     flag: data.x[Array.from(data.text).indexOf('flag')]}}; }}""")
        assert any("KiB" in t for t in unzoomed["ticks"]) and not any("0x" in t for t in unzoomed["ticks"]), unzoomed
        assert unzoomed["flag"] > 32, unzoomed  # widened again at full scale
        assert _unrendered_bars(page) == []

        # -- 4. colour by family ------------------------------------------------------------
        hues = page.evaluate(f"""() => {{
            const gd = {PLOTS.format(i=0)};
            const data = gd._fullData.find(t => t.meta === 'data');
            const hue = (hex) => {{
                const [r, g, b] = [1, 3, 5].map(i => parseInt(hex.slice(i, i + 2), 16) / 255);
                const mx = Math.max(r, g, b), mn = Math.min(r, g, b), d = mx - mn;
                if (!d) return 0;
                const h = mx === r ? ((g - b) / d) % 6 : mx === g ? (b - r) / d + 2 : (r - g) / d + 4;
                return (h * 60 + 360) % 360;
            }};
            const out = {{}};
            data.text.forEach((n, i) => {{ out[n] = [data.marker.color[i], hue(data.marker.color[i])]; }});
            const labels = Array.from(gd.querySelectorAll('.trace.bars text')).map(t => t.textContent);
            return {{colors: out, labels}};
        }}""")
        colors = hues["colors"]
        for family in ("a", "b", "sfa", "sfb"):
            members = [colors[f"{family}_stage{k}"] for k in range(4)]
            assert len({c for c, _ in members}) == 4, (family, members)  # four shades ...
            assert max(h for _, h in members) - min(h for _, h in members) < 12, (family, members)  # ... of one hue
        assert abs(colors["a_stage0"][1] - colors["b_stage0"][1]) > 12  # A and B apart
        assert {"a_stage0", "b_stage0"} <= set(hues["labels"]), hues["labels"]

        # -- 1. over capacity: the layout asked for, in red, the last fit as a note ------------
        readout = first.locator(".widget-readout").first
        before = _smem_title(page, 0)
        readout.click()
        page.keyboard.press("Control+A")
        page.keyboard.type("11")
        page.keyboard.press("Enter")
        page.wait_for_function(
            f"(old) => {PLOTS.format(i=0)}.querySelector('.gtitle').textContent !== old", arg=before, timeout=30_000
        )
        page.wait_for_selector(".smemviz-explorer .smemviz-summary .smemviz-over", timeout=10_000)
        # the message and the note are widgets of their own: wait for them to say it too
        wait_until(
            page,
            "() => { const ex = document.querySelectorAll('.smemviz-explorer')[0];"
            " const e = ex.querySelector('.smemviz-error'), n = ex.querySelector('.smemviz-note');"
            " return !!(e && n && e.textContent.includes('exceeds') && n.textContent.includes('Last layout that fit')); }",
        )
        state = page.evaluate(f"""() => {{
            const gd = {PLOTS.format(i=0)};
            const ex = document.querySelectorAll('.smemviz-explorer')[0];
            const data = gd._fullData.find(t => t.meta === 'data');
            const over = gd._fullLayout.shapes[1];
            return {{bars: data.base.length, x0: over.x0, x1: over.x1,
                     label: gd.querySelector('.annotation-text').textContent,
                     error: ex.querySelector('.smemviz-error').textContent,
                     note: ex.querySelector('.smemviz-note').textContent,
                     summary: ex.querySelector('.smemviz-over').textContent,
                     color: getComputedStyle(ex.querySelector('.smemviz-over')).color}};
        }}""")
        assert state["bars"] == 11 * 4 + 1, state  # all 11 stages are drawn, not the last layout that fit
        assert _unrendered_bars(page) == []
        assert state["x0"] == 232448 and state["x1"] > 232448, state
        assert "over by" in state["label"] and "over by" in state["summary"], state
        assert "exceeds the sm_100 per-block limit" in state["error"], state
        assert "Last layout that fit: stages=4" in state["note"], state
        assert state["color"] == "rgb(198, 40, 40)", state
        first.scroll_into_view_if_needed()
        _shoot(first, "explorer-over-capacity.png", artifacts)

        # -- 3. two explorers side by side ------------------------------------------------------
        # JupyterLab draws cells near the viewport only: bring the pair in, then wait for its maps
        page.locator(".jp-Cell").nth(2).scroll_into_view_if_needed()
        page.wait_for_function(
            "() => { const es = document.querySelectorAll('.smemviz-explorer'); return es.length === 3 &&"
            " Array.from(es).slice(1).every(e => { const gd = e.querySelector('.js-plotly-plot');"
            "  return gd && gd._fullLayout && gd._fullLayout.width < 700 && gd.querySelector('.gtitle')"
            "   && gd.querySelector('.gtitle').textContent.startsWith('SMEM ') && e.querySelector('.smemviz-utable'); }); }",
            timeout=60_000,
        )
        pair = page.locator(".smemviz-explorer").nth(1).locator("xpath=..")
        pair.scroll_into_view_if_needed()
        painted(page)
        narrow = page.evaluate("""() => Array.from(document.querySelectorAll('.smemviz-explorer')).slice(1).map(ex => {
            const gd = ex.querySelector('.js-plotly-plot');
            const box = (el) => { const r = el.getBoundingClientRect(); return [r.left, r.top, r.right, r.bottom]; };
            const cells = Array.from(ex.querySelectorAll('.smemviz-utable td, .smemviz-utable th'));
            const wrapped = cells.filter(c => c.textContent && c.getClientRects().length &&
                c.getBoundingClientRect().height > 1.8 * parseFloat(getComputedStyle(c).lineHeight || 17));
            const buttons = Array.from(ex.querySelectorAll('button')).filter(b => b.offsetParent);
            return {
                width: gd._fullLayout.width, svg: box(gd.querySelector('svg.main-svg')),
                title: box(gd.querySelector('.gtitle')), titleText: gd.querySelector('.gtitle').textContent,
                subtitle: box(gd.querySelector('.gtitle-subtitle')),
                label: box(gd.querySelector('.annotation')),
                cells: cells.length, wrapped: wrapped.map(c => c.textContent),
                cut: buttons.filter(b => b.scrollWidth > b.clientWidth + 1).map(b => b.textContent),
            };
        })""")
        assert len(narrow) == 2
        for m in narrow:
            assert 380 <= m["width"] < 700, m
            assert m["titleText"].startswith("SMEM ") and not m["titleText"].startswith("SMEM layout"), m
            assert m["title"][2] <= m["svg"][2] and m["subtitle"][2] <= m["svg"][2], m  # nothing cut on the right
            sub, lab = m["subtitle"], m["label"]
            apart = sub[2] <= lab[0] or lab[2] <= sub[0] or sub[3] <= lab[1] or lab[3] <= sub[1]
            assert apart, m  # the capacity label never sits on the subtitle
            assert m["cells"] > 20 and m["wrapped"] == [], m  # real table cells, none broken over lines
            assert m["cut"] == [], m
        _shoot(pair, "explorer-side-by-side.png", artifacts)
        assert not [c for c in console if "Invalid color" in c], console[:5]
