"""Regions that share bytes are drawn in separate lanes on the byte map, so
none hides another: alias phases, and regions placed on the same bytes
because their lifetimes never meet (issue 23, point 1)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

pytest.importorskip("plotly")

from smemviz import SmemAllocation, SmemAllocator  # noqa: E402
from smemviz.figures import smem_figure  # noqa: E402
from smemviz.figures._smem import smem_spec  # noqa: E402
from smemviz.figures._spec import FigureSpec  # noqa: E402


def hopper_gemm(stages: int = 4) -> SmemAllocator:
    s = SmemAllocator(arch="sm_90a", steps=("load", "mma", "epilogue"))
    a = SmemAllocation("a_stages", stages * 16384, alignment=1024, swizzle="128B", stages=stages)
    b = SmemAllocation("b_stages", stages * 16384, alignment=1024, swizzle="128B", stages=stages)
    epi = SmemAllocation("epi_c", 128 * 128 * 4, alignment=1024)
    s.add(a, live=range(0, 2))
    s.add(b, live=range(0, 2))
    s.add(epi, live="epilogue")
    s.compute_layout()
    return s


def drawn_bars(spec: FigureSpec) -> dict[str, tuple[float, float, float, float]]:
    """name -> (x0, x1, y0, y1) of every data bar as drawn."""
    out = {}
    for t in spec.traces:
        if t["meta"] not in ("data", "aliased"):
            continue
        for name, base, x, y, h in zip(t["text"], t["base"], t["x"], t["y"], t["width"]):
            out[name] = (base, base + x, y - h / 2, y + h / 2)
    return out


def assert_nothing_hidden(plan, spec: FigureSpec) -> None:
    boxes = drawn_bars(spec)
    regions = [r for r in plan.regions if r.kind == "data" and r.size]
    assert set(boxes) == {r.name for r in regions}
    for i, r in enumerate(regions):
        for q in regions[i + 1 :]:
            if r.offset < q.end and q.offset < r.end:  # they share bytes
                (_, _, ry0, ry1), (_, _, qy0, qy1) = boxes[r.name], boxes[q.name]
                assert ry1 <= qy0 or qy1 <= ry0, (r.name, q.name, boxes[r.name], boxes[q.name])


def test_lifetime_sharing_gets_lanes_in_the_issue_gemm():
    plan = hopper_gemm().plan
    shared = [
        (r.name, q.name)
        for r in plan.regions
        for q in plan.regions
        if r.name < q.name and r.offset < q.end and q.offset < r.end
    ]
    assert shared, "the solver should place epi_c on an operand's bytes"
    spec = smem_spec(plan)
    assert_nothing_hidden(plan, spec)
    # the region that does not share bytes keeps the whole band
    boxes = drawn_bars(spec)
    alone = [r.name for r in plan.regions if all(r.name not in pair for pair in shared)]
    for name in alone:
        assert boxes[name][3] - boxes[name][2] == pytest.approx(1.0)


def test_the_figure_plotly_draws_has_the_lanes():
    plan = hopper_gemm(2).plan
    fig = smem_figure(plan)
    by = {t.meta: t for t in fig.data}
    data = by["data"]
    ys = dict(zip(data.text, data.y))
    hs = dict(zip(data.text, data.width))
    epi = next(r for r in plan.regions if r.name == "epi_c")
    under = next(r for r in plan.regions if r.name != "epi_c" and r.offset < epi.end and epi.offset < r.end)
    assert abs(ys["epi_c"] - ys[under.name]) >= (hs["epi_c"] + hs[under.name]) / 2 - 1e-9


def test_stage_ticks_follow_their_buffer_into_its_lane():
    plan = hopper_gemm().plan
    spec = smem_spec(plan)
    boxes = drawn_bars(spec)
    stages = next(t for t in spec.traces if t["meta"] == "stages")
    for x, y in zip(stages["x"], stages["y"]):
        owner = [n for n, (x0, x1, y0, y1) in boxes.items() if x0 < x < x1 and y0 <= y <= y1]
        assert owner, (x, y)


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(st.integers(1, 8), st.integers(0, 3), st.integers(1, 4)), min_size=2, max_size=7))
def test_no_two_regions_that_share_bytes_overlap_on_the_map(buffers):
    s = SmemAllocator(steps=4)
    for i, (kib, first, length) in enumerate(buffers):
        s.add(SmemAllocation(f"buf{i}", kib * 1024, alignment=128), live=range(first, min(4, first + length)))
    s.compute_layout()
    assert_nothing_hidden(s.plan, smem_spec(s.plan))
