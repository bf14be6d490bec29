"""The occupancy line's label sits inside the plot, clear of the x-axis tick
labels (issue 23, point 3), and has a short form for narrow maps."""

from __future__ import annotations

import pytest

pytest.importorskip("plotly")

from smemviz import SmemAllocation, SmemAllocator  # noqa: E402
from smemviz.explorer._sync import narrowed  # noqa: E402
from smemviz.figures._smem import smem_spec  # noqa: E402


def layout(kib: int) -> SmemAllocator:
    s = SmemAllocator()
    s.add(SmemAllocation("a", kib * 1024, alignment=1024))
    s.compute_layout()
    return s


def occupancy_label(spec) -> dict:
    labels = [a for a in spec.layout["annotations"] if "CTAs" in a["text"]]
    assert len(labels) == 1, spec.layout["annotations"]
    return labels[0]


def test_the_label_is_inside_the_plot_not_on_the_tick_labels():
    spec = smem_spec(layout(140).plan, "sm_90a")
    label = occupancy_label(spec)
    assert label["yref"] == "y domain"
    # the box spans [y - h, y] (top-anchored) or [y, y + h] (bottom-anchored): never below the axis at 0
    if label["yanchor"] == "top":
        assert label["y"] >= 0.5
    else:
        assert label["yanchor"] == "bottom" and label["y"] >= 0
    assert "115,712 B" in label["text"]


def test_a_narrow_map_shortens_the_label():
    spec = narrowed(smem_spec(layout(140).plan, "sm_90a"))
    label = occupancy_label(spec)
    assert len(label["text"]) <= 18, label["text"]
