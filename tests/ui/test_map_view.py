"""The explorer's map view (``map_view.js``) against plotly's FigureWidget
protocol, in headless Chromium without Jupyter: Python-side edits of a
:class:`MapFigureWidget` are captured as the messages the widget sends,
replayed into the view through a stand-in model, and the drawn figure must
then equal the Python figure. Messages the view sends back (acknowledgements,
clicks, zooms) are fed to the Python widget, whose callbacks must fire."""

from __future__ import annotations

import base64
import json

import pytest

pytestmark = pytest.mark.browser

np = pytest.importorskip("numpy")
go = pytest.importorskip("plotly.graph_objects")
pytest.importorskip("anywidget")

from plotly.basedatatypes import Undefined  # noqa: E402
from plotly.serializers import _js_to_py, _py_to_js  # noqa: E402

from smemviz.explorer._map_widget import map_widget_class  # noqa: E402

MESSAGES = [
    "_py2js_update",
    "_py2js_restyle",
    "_py2js_relayout",
    "_py2js_addTraces",
    "_py2js_deleteTraces",
    "_py2js_moveTraces",
    "_py2js_animate",
    "_py2js_removeLayoutProps",
    "_py2js_removeTraceProps",
]

# A stand-in for anywidget's model: get/set/on/save_changes, plus push() to
# deliver a message from Python the way the widget manager does (set the
# trait, fire change:<name>).
HARNESS = r"""
async ([src, state]) => {
  const url = URL.createObjectURL(new Blob([src], {type: "text/javascript"}));
  const view = (await import(url)).default;
  const revive = (v) => {
    if (Array.isArray(v)) return v.map(revive);
    if (v && typeof v === "object") {
      if (typeof v.__bytes__ === "string") {
        const raw = Uint8Array.from(atob(v.__bytes__), (c) => c.charCodeAt(0));
        return new DataView(raw.buffer);
      }
      return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, revive(x)]));
    }
    return v;
  };
  class Model {
    constructor(s) { this.s = s; this.h = {}; this.pending = {}; this.sent = []; }
    get(k) { return this.s[k]; }
    set(k, v) { this.s[k] = v; this.pending[k] = v; }
    on(ev, cb) { (this.h[ev] = this.h[ev] || []).push(cb); }
    off() {}
    save_changes() { this.sent.push(this.pending); this.pending = {}; }
    push(k, v) { this.s[k] = revive(v); for (const cb of this.h["change:" + k] || []) cb(); }
    custom(msg) { for (const cb of this.h["msg:custom"] || []) cb(msg, []); }
  }
  const model = new Model(revive(state));
  view.initialize({model});
  const views = [];
  const addView = () => {
    const el = document.createElement("div");
    document.body.appendChild(el);
    views.push({el, cleanup: view.render({model, el})});
    return el;
  };
  const frame = () => new Promise((r) => requestAnimationFrame(() => setTimeout(r, 0)));
  const graph = (el) => el.querySelector(".js-plotly-plot");
  const plain = (v) => JSON.parse(JSON.stringify(v, (k, x) => ArrayBuffer.isView(x) ? Array.from(x) : x));
  window.T = {model, addView, frame, graph, plain, views};
  addView();
  for (let i = 0; i < 200 && !graph(views[0].el); i++) await frame();
  await frame();
  return !!graph(views[0].el);
}
"""


def _wire(value):
    """A message as the browser gets it: plotly's serializer, then buffers as bytes."""

    def encode(v):
        if isinstance(v, memoryview):
            return {"__bytes__": base64.b64encode(v.tobytes()).decode()}
        if isinstance(v, dict):
            return {k: encode(x) for k, x in v.items()}
        if isinstance(v, (list, tuple)):
            return [encode(x) for x in v]
        return v

    return encode(_py_to_js(value, None))


class Recorder:
    """The messages a widget sends, in order."""

    def __init__(self, widget):
        self.sent: list[tuple[str, dict]] = []
        widget.observe(self._seen, names=MESSAGES)

    def _seen(self, change):
        if change["new"] is not None:
            self.sent.append((change["name"], _wire(change["new"])))

    def take(self) -> list[tuple[str, dict]]:
        out, self.sent = self.sent, []
        return out


def _state(widget) -> list:
    return _wire(
        {
            "_widget_data": widget._widget_data,
            "_widget_layout": widget._widget_layout,
            "_config": widget._config,
            "_smemviz_plotly_js": widget._smemviz_plotly_js,
            "_smemviz_plotly_version": widget._smemviz_plotly_version,
        }
    )


def _contains(got, want, path="") -> list[str]:
    """Where ``got`` lacks or differs from what ``want`` holds."""
    if isinstance(want, dict):
        if not isinstance(got, dict):
            return [f"{path}: {got!r} is not an object"]
        return [d for k, v in want.items() for d in _contains(got.get(k), v, f"{path}.{k}")]
    if isinstance(want, (list, tuple)):
        if not isinstance(got, list) or len(got) != len(want):
            return [f"{path}: {got!r} != {want!r}"]
        return [d for i, (g, w) in enumerate(zip(got, want)) for d in _contains(g, w, f"{path}[{i}]")]
    if isinstance(want, float) or isinstance(got, float):
        return [] if got is not None and abs(got - want) < 1e-9 else [f"{path}: {got!r} != {want!r}"]
    return [] if got == want else [f"{path}: {got!r} != {want!r}"]


def _decoded(v):
    """plotly's JSON writes arrays as base64 ``bdata``: back to lists."""
    if isinstance(v, dict):
        if set(v) >= {"dtype", "bdata"}:
            return np.frombuffer(base64.b64decode(v["bdata"]), dtype=np.dtype(v["dtype"])).tolist()
        return {k: _decoded(x) for k, x in v.items()}
    if isinstance(v, list):
        return [_decoded(x) for x in v]
    return v


def _python_figure(widget) -> dict:
    fig = _decoded(json.loads(widget.to_json()))
    fig["layout"].pop("template", None)
    return fig


@pytest.fixture()
def page(browser):
    page = browser.new_page(viewport={"width": 1000, "height": 900})
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.set_content("<!doctype html><body></body>")
    yield page, errors
    page.close()


def _start(page, widget) -> None:
    assert page.evaluate(HARNESS, [widget._esm, _state(widget)]), "the view drew nothing"


def _replay(page, messages) -> None:
    for name, msg in messages:
        if name == "custom":
            page.evaluate("async (m) => { T.model.custom(m); await T.frame(); await T.frame(); }", msg)
        else:
            page.evaluate("async ([k, v]) => { T.model.push(k, v); await T.frame(); await T.frame(); }", [name, msg])


def _add_view(page) -> None:
    """A second view of the same model, drawn (the output shown again)."""
    page.evaluate(
        "async () => { T.addView(); for (let i = 0; i < 100 && !T.graph(T.views[1].el); i++) await T.frame();"
        " await T.frame(); }"
    )


def _drawn(page, index: int = 0) -> dict:
    return page.evaluate(
        "(i) => { const gd = T.graph(T.views[i].el); return T.plain({data: gd.data, layout: gd.layout}); }", index
    )


def _check_same(page, widget, index: int = 0) -> None:
    want = _python_figure(widget)
    got = _drawn(page, index)
    diffs = _contains(got["data"], want["data"], "data") + _contains(got["layout"], want["layout"], "layout")
    assert not diffs, diffs[:10]


def make_widget():
    fig = go.Figure(
        [
            go.Bar(x=[1, 2, 3], y=["a", "b", "c"], base=[0, 1, 2], orientation="h", name="one"),
            go.Bar(x=[4, 5], y=["a", "b"], orientation="h", name="two"),
        ],
        layout={"title": {"text": "start"}, "barmode": "overlay", "width": 800, "height": 300},
    )
    return map_widget_class()(fig)


def test_every_python_edit_reaches_the_drawn_figure(page):
    page, errors = page
    w = make_widget()
    rec = Recorder(w)
    _start(page, w)
    _check_same(page, w)

    # the explorer's own path: one update, unchanged traces left alone
    w.plotly_update(
        restyle_data={"base": [[5, 6, 7], Undefined], "marker.color": ["red", Undefined]},
        relayout_data={"title.text": "moved"},
        trace_indexes=[0, 1],
    )
    w.data[1].marker.line.width = 2  # restyle
    w.layout.xaxis.title.text = "address"  # relayout
    w.add_bar(x=[9], y=["z"], orientation="h", name="three")  # addTraces
    w.data = [w.data[2], w.data[0], w.data[1]]  # moveTraces
    w.data = w.data[:2]  # deleteTraces
    w.data[0].x = np.array([1.5, 2.5], dtype=np.float32)  # a numpy buffer
    with w.batch_update():
        w.data[1].y = ["p", "q", "r"]
        w.layout.height = 320
    with w.batch_animate(duration=0):
        w.data[1].base = [1, 2, 3]
    w.layout.annotations = [{"text": "note", "x": 1, "y": "p", "showarrow": False}]
    w.layout.annotations = []
    messages = rec.take()
    assert {name for name, _ in messages} >= {
        "_py2js_update",
        "_py2js_restyle",
        "_py2js_relayout",
        "_py2js_addTraces",
        "_py2js_moveTraces",
        "_py2js_deleteTraces",
        "_py2js_animate",
    }
    _replay(page, messages)
    _check_same(page, w)
    assert page.evaluate("() => T.graph(T.views[0].el).querySelector('.gtitle').textContent") == "moved"

    # a view made now (the output shown again) draws the figure as it is now
    _add_view(page)
    _check_same(page, w, index=1)
    assert not errors, errors


def test_updates_are_acknowledged_and_not_echoed(page):
    page, errors = page
    w = make_widget()
    rec = Recorder(w)
    _start(page, w)
    done = []
    w.plotly_update(restyle_data={"x": [[3, 2, 1]]}, relayout_data={"title.text": "again"}, trace_indexes=[0])
    w.on_edits_completed(lambda: done.append(True))
    _replay(page, rec.take())
    sent = page.evaluate("() => T.model.sent")
    assert not any(k in m for m in sent for k in ("_js2py_restyle", "_js2py_relayout", "_js2py_update")), sent
    acks = [m for m in sent if "_js2py_traceDeltas" in m or "_js2py_layoutDelta" in m]
    assert acks and acks[-1]["_js2py_traceDeltas"]["trace_edit_id"] == w._last_trace_edit_id
    assert acks[-1]["_js2py_layoutDelta"]["layout_edit_id"] == w._last_layout_edit_id
    assert not done  # still waiting for the browser
    for m in acks:
        for key in ("_js2py_traceDeltas", "_js2py_layoutDelta"):
            if key in m:
                setattr(w, key, _js_to_py(m[key], None))
    assert done == [True]
    assert not errors, errors


def test_clicks_and_zooms_reach_python(page):
    page, errors = page
    w = make_widget()
    rec = Recorder(w)
    _start(page, w)
    clicked = []
    w.data[0].on_click(lambda trace, points, state: clicked.append((trace.name, points.point_inds, state.ctrl)))
    page.evaluate("""() => T.graph(T.views[0].el).emit('plotly_click', {
        points: [{curveNumber: 0, pointNumber: 1, x: 2, y: 'b'}],
        event: {ctrlKey: true, altKey: false, shiftKey: false, metaKey: false, button: 0, buttons: 1}})""")
    # a zoom, as plotly does it for a drag (plotly.js also sets window.Plotly)
    page.evaluate("() => window.Plotly.relayout(T.graph(T.views[0].el), {'xaxis.range': [0, 3]})")
    sent = page.evaluate("() => T.model.sent")
    points = next(m["_js2py_pointsCallback"] for m in sent if "_js2py_pointsCallback" in m)
    w._js2py_pointsCallback = _js_to_py(points, None)
    assert clicked == [("one", [1], True)]
    zoom = next(m["_js2py_relayout"] for m in sent if "_js2py_relayout" in m)
    w._js2py_relayout = _js_to_py(zoom, None)
    assert tuple(w.layout.xaxis.range) == (0, 3)
    echoed = [m for name, m in rec.take() if name == "_py2js_relayout"]
    assert echoed and echoed[-1]["source_view_id"] == zoom["source_view_id"]
    page.evaluate(
        "() => { window.redraws = 0; T.graph(T.views[0].el).on('plotly_afterplot', () => window.redraws++); }"
    )
    _replay(page, [("_py2js_relayout", echoed[-1])])  # its own zoom, back from Python: left alone
    assert page.evaluate("() => window.redraws") == 0
    assert not errors, errors


def test_hovering_a_block_shows_its_hover_text(page):
    """Hover labels come from plotly.js itself; the view keeps them working."""
    page, errors = page
    fig = go.Figure(
        go.Bar(
            x=[40, 60],
            y=[0.5, 0.5],
            base=[0, 40],
            orientation="h",
            hovertext=["<b>smem_a0</b><br>offset 0 (0x0)", "<b>smem_b0</b><br>offset 40 (0x28)"],
            hovertemplate="%{hovertext}<extra></extra>",
        ),
        layout={"width": 800, "height": 300, "margin": {"l": 40, "r": 20, "t": 20, "b": 40}},
    )
    _start(page, map_widget_class()(fig))
    box = page.locator(".trace.bars .point path").nth(1).bounding_box()
    page.mouse.move(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
    label = page.locator(".hoverlayer .hovertext")
    label.wait_for(timeout=5000)
    assert "smem_b0" in label.text_content() and "0x28" in label.text_content()
    assert not errors, errors


def test_the_explorers_update_message_reaches_the_drawn_figure(page):
    """The explorer sends its updates as one custom message per map; views
    drawn before and after it show the same figure as Python."""
    page, errors = page
    w = make_widget()
    custom = []
    w.send = lambda content, buffers=None: custom.append(("custom", json.loads(json.dumps(content))))
    _start(page, w)
    w.update_browser_first(
        {"base": [[5, 6, 7], Undefined], "marker.color": [Undefined, "green"]},
        {"title.text": "explorer update", "xaxis.range": [0, 20]},
        [0, 1],
    )
    assert len(custom) == 1
    _replay(page, custom)
    _check_same(page, w)
    _add_view(page)
    _check_same(page, w, index=1)
    assert not errors, errors
