"""title= reaches static images (SVG/PNG/PDF), not only the HTML page."""

from __future__ import annotations

import pytest

pytest.importorskip("plotly")
pytest.importorskip("kaleido")

import smemviz  # noqa: E402
from smemviz import SmemAllocation, SmemAllocator, TmemAllocation, TmemAllocator  # noqa: E402
from smemviz._export import _static  # noqa: E402


def _layouts():
    s = SmemAllocator()
    s.add(SmemAllocation("a", 4096, 128))
    s.compute_layout()
    t = TmemAllocator()
    t.add(TmemAllocation("acc", columns=64))
    t.compute_layout()
    return s, t


@pytest.mark.parametrize("both", [True, False])
def test_the_title_heads_a_static_image(tmp_path, monkeypatch, both):
    drawn = []
    monkeypatch.setattr(smemviz._export, "find_browser", lambda *a, **k: "/usr/bin/chromium")
    monkeypatch.setattr(_static, "render_image", lambda fig, fmt, **kw: drawn.append(fig) or b"<svg/>")
    s, t = _layouts()
    smemviz.export((s, t) if both else s, tmp_path / "x.svg", title="GEMM <v2> & more")
    (fig,) = drawn
    assert fig.layout.title.text == "GEMM &lt;v2&gt; &amp; more"  # shown literally, never as markup
    if not both:  # the map's own title (totals, capacity) moves under it
        assert fig.layout.title.subtitle.text.startswith("SMEM layout: 4,096 B")
    drawn.clear()
    smemviz.export(s, tmp_path / "y.png")  # no title asked for: the figure as it was
    assert drawn[0].layout.title.text.startswith("SMEM layout:")


def test_a_render_that_fails_in_the_page_is_tried_once_more_in_a_fresh_browser(monkeypatch):
    """A reused tab can fail in the page (its script not loaded after a reload): the render is
    tried again once in a fresh browser; a second failure, or a timeout, is raised."""
    started, outcomes = [], []

    class Fake:
        def __init__(self, browser, timeout):
            started.append(browser)

        def render(self, fig, fmt, w, h, scale, timeout):
            outcome = outcomes.pop(0)
            if isinstance(outcome, BaseException):
                raise outcome
            return outcome

        def close(self):
            pass

    monkeypatch.setattr(_static, "_Renderer", Fake)
    monkeypatch.setattr(_static, "find_browser", lambda *a, **k: "/usr/bin/chromium")
    monkeypatch.setattr(_static, "_renderer", None)
    outcomes[:] = [RuntimeError("ReferenceError: kaleido_scopes is not defined"), b"<svg/>"]
    assert _static.render_image({"data": [], "layout": {}}, "svg") == b"<svg/>"
    assert len(started) == 2
    outcomes[:] = [RuntimeError("first"), RuntimeError("second")]
    with pytest.raises(RuntimeError, match="second"):
        _static.render_image({"data": [], "layout": {}}, "svg")
    outcomes[:] = [_static.ExportTimeoutError("slow")]
    with pytest.raises(_static.ExportTimeoutError):
        _static.render_image({"data": [], "layout": {}}, "svg")
    assert len(started) == 4 and _static._renderer is None  # kept after a success, new after each failure
