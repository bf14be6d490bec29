"""The Lifetimes tab tells the truth (issue 23, point 4): tiny buffers are drawn
on the lifetime map, the bytes of buffers not live at a step are not called
padding, and subtitles are wrapped rather than run off the edge."""

from __future__ import annotations

import pytest

pytest.importorskip("plotly")

from smemviz import SmemAllocation, SmemAllocator  # noqa: E402
from smemviz.figures._lifetime import lifetime_spec  # noqa: E402
from smemviz.figures._smem import smem_spec  # noqa: E402
from smemviz.figures._step import split_holes, step_map_spec  # noqa: E402
from smemviz.figures._style import SUBTITLE_CHARS  # noqa: E402


def gemm_with_bias() -> SmemAllocator:
    s = SmemAllocator(arch="sm_90a", steps=("load", "mma", "epilogue"))
    s.add(SmemAllocation("a_stages", 4 * 16384, alignment=1024, stages=4), live=range(0, 2))
    s.add(SmemAllocation("b_stages", 4 * 16384, alignment=1024, stages=4), live=range(0, 2))
    s.add(SmemAllocation("epi_c", 128 * 128 * 2, alignment=1024), live="epilogue")
    s.add(SmemAllocation("bias", 512, alignment=128), live="epilogue")
    s.compute_layout()
    return s


def test_a_tiny_buffer_is_drawn_on_the_lifetime_map():
    plan = gemm_with_bias().plan
    spec = lifetime_spec(plan)
    regions = spec.traces[0]
    span = spec.layout["yaxis"]["range"][1] / 1.06
    drawn = [h for h, text in zip(regions["y"], regions["hovertext"]) if text.startswith("<b>bias</b>")]
    assert drawn and min(drawn) >= 0.01 * span, (drawn, span)  # a few pixels, not a hairline
    assert any("not to scale" in t for t in regions["hovertext"] if t.startswith("<b>bias</b>"))
    assert "tiny" in spec.layout["title"]["subtitle"]["text"]


def test_bytes_not_live_at_a_step_are_not_called_padding():
    plan = gemm_with_bias().plan
    step = plan.step_index("epilogue")
    spec = step_map_spec(plan, step, "sm_90a")
    holes = spec.traces[0]
    idle = [r for r in plan.data_regions if not r.live_in(step)]
    for base, width, hover in zip(holes["base"], holes["x"], holes["hovertext"]):
        covers_idle = any(r.offset < base + width and base < r.end for r in idle)
        if covers_idle:
            assert "padding" not in hover and "not live" in hover, hover
    assert any("not live" in h for h in holes["hovertext"])
    patterns = holes["marker"]["pattern"]["shape"]
    for (_, _, pad), shape in zip(split_holes(plan, step), patterns):
        assert (shape == "/") == pad  # only true padding is hatched like alignment padding
    subtitle = spec.layout["title"]["subtitle"]["text"]
    assert "not live here" in subtitle and "padding 97" not in subtitle


def test_alignment_padding_at_a_step_stays_padding():
    s = SmemAllocator(steps=2)
    s.add(SmemAllocation("small", 100, alignment=128), live=0)
    s.add(SmemAllocation("big", 4096, alignment=1024), live=range(0, 2))
    s.add(SmemAllocation("late", 2048, alignment=1024), live=1)
    s.compute_layout()
    plan = s.plan
    for step in range(2):
        for a, b, pad in split_holes(plan, step):
            inside = [r for r in plan.data_regions if r.offset < b and a < r.end]
            assert pad == (not inside), (step, a, b, pad, inside)


@pytest.mark.parametrize("which", ["step", "map"])
def test_no_subtitle_line_is_longer_than_a_map_holds(which):
    plan = gemm_with_bias().plan
    spec = step_map_spec(plan, 2, "sm_90a") if which == "step" else smem_spec(plan, "sm_90a")
    lines = spec.layout["title"]["subtitle"]["text"].split("<br>")
    assert all(len(line) <= SUBTITLE_CHARS for line in lines), lines
    assert spec.layout["margin"]["t"] >= 80 + 16 * (len(lines) - 1)
