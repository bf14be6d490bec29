"""Zooming the explorer's byte map moves the barrier and TMEM-pointer markers back over
their bytes, and their leader lines with them (issue 30, point 4): drawn in headless
Chromium through ``map_view.js``, without Jupyter (the harness of ``test_map_view``)."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.browser

pytest.importorskip("plotly")
pytest.importorskip("anywidget")

from smemviz.explorer._sync import LiveFigure  # noqa: E402
from smemviz.figures import smem_spec  # noqa: E402

from ..figures.test_markers_and_labels import notebook_02_default  # noqa: E402
from .test_map_view import _start  # noqa: E402

GD = "T.graph(T.views[0].el)"
TRACES = f"""() => {{ const gd = {GD};
    const pick = (m) => {{ const t = gd._fullData.find(t => t.meta === m);
        return {{x: Array.from(t.x), customdata: Array.from(t.customdata)}}; }};
    return {{markers: pick('small'), leaders: pick('leaders'), range: gd._fullLayout.xaxis.range}}; }}"""


@pytest.fixture()
def harness(browser):
    """A blank page for the map view's harness, and the page errors seen on it."""
    page = browser.new_page(viewport={"width": 1000, "height": 900})
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.set_content("<!doctype html><body></body>")
    yield page, errors
    page.close()


def _same(a: list, b: list) -> bool:
    return len(a) == len(b) and all(
        (x is None and y is None) or (x is not None and y is not None and abs(x - y) < 1e-6) for x, y in zip(a, b)
    )


def test_leader_lines_follow_the_markers_when_the_map_zooms(harness):
    page, errors = harness
    plan = notebook_02_default().plan
    spec = smem_spec(plan)
    leaders = next(t for t in spec.traces if t["meta"] == "leaders")
    assert leaders["x"], "the default layout draws some markers away from their bytes"
    widget = LiveFigure(spec, legend=False).widget
    _start(page, widget)
    drawn = page.evaluate(TRACES)
    assert not _same(drawn["leaders"]["x"], drawn["leaders"]["customdata"])  # full scale: led from spread markers

    tmem_ptr = next(r for r in plan.regions if r.kind == "tmem_ptr")
    lo, hi = tmem_ptr.offset - 2048, tmem_ptr.offset + 2048
    page.evaluate(f"() => window.Plotly.relayout({GD}, {{'xaxis.range': [{lo}, {hi}]}})")
    page.wait_for_function(
        f"() => {{ const t = {GD}._fullData.find(t => t.meta === 'leaders');"
        " return Array.from(t.x).every((x, i) => x === t.customdata[i]); }",
        timeout=30_000,
    )
    zoomed = page.evaluate(TRACES)
    assert _same(zoomed["markers"]["x"], zoomed["markers"]["customdata"])  # markers over their bytes
    assert _same(zoomed["leaders"]["x"], zoomed["leaders"]["customdata"])  # and their leaders with them
    # each leader now runs straight down to the byte its marker stands on
    ends = [x for x in zoomed["leaders"]["x"] if x is not None]
    assert ends and set(ends) <= {x for x in zoomed["markers"]["x"]}

    page.evaluate(f"() => window.Plotly.relayout({GD}, {{'xaxis.autorange': true}})")
    page.wait_for_function(
        f"() => {{ const t = {GD}._fullData.find(t => t.meta === 'leaders');"
        " return !Array.from(t.x).every((x, i) => x === t.customdata[i]); }",
        timeout=30_000,
    )
    assert _same(page.evaluate(TRACES)["leaders"]["x"], drawn["leaders"]["x"])  # back where Python drew them
    assert not errors, errors
