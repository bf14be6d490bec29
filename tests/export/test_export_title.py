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
