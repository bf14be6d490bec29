"""Issue 30, points 4, 7, 11 and 12, through the figures' data: barrier and
TMEM-pointer markers drawn at their bytes (or led to them by a line, the map
saying so), no label printed over another, one way of writing KiB, and no
colour array where plotly.js wants one colour."""

from __future__ import annotations

import re
from dataclasses import replace

import pytest
from hypothesis import given
from hypothesis import strategies as st

pytest.importorskip("plotly")

from smemviz import SmemAllocation, SmemAllocator, TmemAllocation, TmemAllocator, hardware  # noqa: E402
from smemviz._units import fmt_units, kib_label  # noqa: E402
from smemviz.figures import compare_figure, layout_figure, smem_spec, step_map_spec, tmem_spec  # noqa: E402
from smemviz.figures._bars import (  # noqa: E402
    AXIS_END,
    MARKER_GAP,
    MARKER_MOVED,
    MARKER_PX,
    STAGE_TICK_PX,
    spread,
)
from smemviz.figures._combined import TITLE_LIFT_PX  # noqa: E402

KIB = 1024


class Stages:
    def __init__(self, n: int) -> None:
        self.num_stages = n
        self.barrier_ptr = None


class Resource:
    """A resource with an ``n``-stage pipeline (its mbarriers) and the given buffers."""

    pipeline_group = None

    def __init__(self, name: str, n: int, *buffers: SmemAllocation) -> None:
        self.name = name
        self.pipeline_config = Stages(n)
        self.buffers = list(buffers)

    def get_smem_requirements(self):
        return self.buffers


def notebook_02_default() -> SmemAllocator:
    """Notebook 02's default Blackwell GEMM: A/B stages aliased with the C tile,
    two pipelines' barriers and the TMEM-pointer slot right after the data."""
    s = SmemAllocator()
    a = SmemAllocation("smem_a", dtype="bf16", count=4 * 128 * 64, alignment=1024)
    b = SmemAllocation("smem_b", dtype="bf16", count=4 * 256 * 64, alignment=1024)
    c = SmemAllocation("epi_c", dtype="bf16", count=128 * 256, alignment=1024)
    s.add_resource(Resource("mainloop", 4, a, b))
    s.add_alias_group([[a, b], [c]])
    s.add_resource(Resource("accumulators", 2))
    s.add_tmem_ptr(SmemAllocation("tmem_ptr", size_bytes=hardware.TMEM_PTR_BYTES, alignment=4))
    s.compute_layout()
    return s


def by_meta(spec) -> dict:
    return {t["meta"]: t for t in spec.traces}


def segments(leaders: dict) -> list[tuple[tuple[float, float], tuple[float, float]]]:
    """The leader trace's lines: ((x0, y0), (x1, y1)) between its None breaks."""
    out, points = [], list(zip(leaders["x"], leaders["y"]))
    for k in range(0, len(points), 3):
        (x0, y0), (x1, y1), gap = points[k : k + 3]
        assert gap == (None, None)
        out.append(((x0, y0), (x1, y1)))
    return out


# -- point 4: markers at their bytes ---------------------------------------------------------


def test_every_marker_is_at_its_bytes_or_led_to_them_by_a_line():
    plan = notebook_02_default().plan
    spec = smem_spec(plan, "sm_100a")
    span = spec.meta["span"]
    marks = by_meta(spec)["small"]
    lines = segments(by_meta(spec)["leaders"])
    small = [r for r in plan.regions if r.kind == "barrier"] + [r for r in plan.regions if r.kind == "tmem_ptr"]
    assert len(marks["x"]) == len(small) == 3
    led = 0
    for r, x, y, hover in zip(small, marks["x"], marks["y"], marks["hovertext"]):
        at = r.offset + r.size / 2
        if abs(x - at) <= MARKER_MOVED * span:
            continue
        # drawn apart: a line runs from the marker to its bytes at the band's foot, and its hover says so
        assert ((x, y), (at, 0.0)) in lines, (r.name, x, at)
        assert "the line leads to its bytes" in hover
        led += 1
    assert led == len(lines) >= 1
    assert f"{led} markers drawn apart from their bytes" in spec.layout["title"]["subtitle"]["text"]
    # the slot has a row of its own: drawn over its own bytes, not 10 KiB away under smem_b
    slot = plan.region("tmem_ptr")
    assert marks["x"][-1] == slot.offset + slot.size / 2
    assert marks["y"][-1] < min(marks["y"][:-1]) - MARKER_PX / 100  # a marker's height lower (about 100 px a unit)
    # the leaders carry the points a zoomed map draws them at: over the bytes
    assert [x for x in by_meta(spec)["leaders"]["customdata"] if x is not None] == [
        p for (_, _), (p, _) in lines for _ in (0, 1)
    ]


def test_a_barrier_at_offset_zero_is_not_cut_in_half_by_the_plot_edge():
    s = SmemAllocator()
    s.add_resource(Resource("load", 2))
    s.add(SmemAllocation("tile", 64 * KIB, alignment=1024))
    s.compute_layout()
    plan = replace(
        s.plan,
        regions=tuple(replace(r, offset=0) if r.kind == "barrier" else replace(r, offset=1024) for r in s.plan.regions),
    )
    spec = smem_spec(plan, "sm_90a")
    span = spec.meta["span"]
    x = by_meta(spec)["small"]["x"][0]
    assert x >= MARKER_GAP * span / 2 - 1e-9  # a marker's half width and more from the edge, at 400 px
    assert segments(by_meta(spec)["leaders"]) == [((x, by_meta(spec)["small"]["y"][0]), (16.0, 0.0))]
    assert "1 marker drawn apart from its bytes" in spec.layout["title"]["subtitle"]["text"]


def test_a_lone_marker_in_the_open_is_drawn_at_its_bytes_with_no_leader():
    s = SmemAllocator()
    s.add(SmemAllocation("tile", 64 * KIB, alignment=1024))
    s.add_resource(Resource("load", 2))
    s.compute_layout()
    spec = smem_spec(s.plan, "sm_90a")
    barrier = s.plan.barrier_regions[0]
    assert by_meta(spec)["small"]["x"] == [barrier.offset + barrier.size / 2]
    assert by_meta(spec)["leaders"]["x"] == []
    assert "drawn apart" not in spec.layout["title"]["subtitle"]["text"]


@given(
    st.lists(st.floats(0, 1000), min_size=1, max_size=12),
    st.floats(1, 20),
    st.floats(0, 50),
)
def test_spread_markers_stay_inside_the_bounds_they_fit_in(xs, gap, lo):
    hi = 1000.0
    out = spread(xs, gap, 400, lo=lo, hi=hi)
    order = sorted(range(len(xs)), key=lambda i: xs[i])
    moved = [out[i] for i in order]
    assert all(lo - 1e-6 <= x <= hi + 1e-6 for x in out)
    least = min(gap, 400 / max(1, len(xs) - 1))
    assert all(b - a >= least - 1e-6 for a, b in zip(moved, moved[1:]))


# -- point 7: labels over labels -------------------------------------------------------------


def test_the_occupancy_label_sits_at_the_foot_of_the_plot_clear_of_the_group_labels():
    plan = notebook_02_default().plan
    spec = smem_spec(plan, "sm_100a")
    occupancy = next(a for a in spec.layout["annotations"] if "CTAs/SM" in a["text"])
    # the group labels and the capacity label take the top of the plot and the row above it
    assert occupancy["yref"] == "y domain" and occupancy["y"] == 0.0 and occupancy["yanchor"] == "bottom"
    # reading leftwards from its line: the barriers and the slot are to its right
    assert occupancy["xanchor"] == "right" and occupancy["x"] < min(r.offset for r in plan.barrier_regions)


def test_the_occupancy_label_turns_right_where_a_marker_is_in_its_way():
    s = SmemAllocator()
    s.add(SmemAllocation("tile0", 40 * KIB, alignment=1024))
    s.add_resource(Resource("load", 4))
    s.add(SmemAllocation("tile1", 150 * KIB, alignment=1024))
    s.compute_layout()
    # the barriers between the tiles (a struct's order), left of the 2-CTA line at 113 KiB
    moved = {"tile0": 0, "load.barriers": 40 * KIB, "tile1": 41 * KIB}
    plan = replace(s.plan, regions=tuple(replace(r, offset=moved[r.name]) for r in s.plan.regions))
    spec = smem_spec(plan, "sm_90a")
    occupancy = next(a for a in spec.layout["annotations"] if "CTAs/SM" in a["text"])
    assert occupancy["xanchor"] == "left"


def _px_per_unit(spec) -> float:
    lay = spec.layout
    lo, hi = lay["yaxis"]["range"]
    return (lay["height"] - lay["margin"]["t"] - lay["margin"]["b"]) / (hi - lo)


def test_stage_ticks_leave_the_middle_of_the_bar_to_its_label():
    plans = []
    for aliased in (True, False):  # in an alias group's lane (notebook 05), and filling the band
        s = SmemAllocator()
        a = SmemAllocation("gemm.a_stages", dtype="f16", shape=(7, 128, 64), alignment=1024)
        b = SmemAllocation("gemm.b_stages", dtype="f16", shape=(7, 128, 64), alignment=1024)
        c = SmemAllocation("gemm.c_staging", dtype="f16", count=128 * 64, alignment=1024)
        if aliased:
            s.add_alias_group([[a, b], [c]])
        else:
            for buffer in (a, b, c):
                s.add(buffer)
        s.compute_layout()
        plans.append(s.plan)
    for spec in (smem_spec(p, "sm_90a") for p in plans):
        ticks = by_meta(spec)["stages"]
        px = _px_per_unit(spec)
        assert len(ticks["x"]) == 2 * 2 * 6  # two buffers, six boundaries, a tick above and below the middle
        bars = [t for t in spec.traces if t["meta"] in ("data", "aliased")]
        middles = {y for t in bars for y, text in zip(t["y"], t["text"]) if "stages" in text}
        for y in ticks["y"]:
            middle = min(middles, key=lambda m: abs(m - y))
            # the tick's inner end at least 7 px from the middle: clear of a 12 px label
            assert abs(y - middle) * px - STAGE_TICK_PX / 2 >= 7, (y, middle, px)
        assert ticks["marker"]["size"] == STAGE_TICK_PX


def _both_maps():
    s = notebook_02_default()
    t = TmemAllocator()
    t.add(TmemAllocation("acc0", 256))
    t.add(TmemAllocation("acc1", 256))
    t.compute_layout()
    return s, t


def test_side_by_side_maps_keep_their_titles_over_the_capacity_labels_and_short():
    s, t = _both_maps()
    fig = layout_figure(s, t, arch="sm_100a")
    titles = [a for a in fig.layout.annotations if a.yref == "paper"]
    assert [a.text for a in titles] == [
        smem_spec(s.plan, "sm_100a").meta["short_title"],
        tmem_spec(t.plan).meta["short_title"],
    ]
    for a in titles:
        assert a.yshift == TITLE_LIFT_PX and a.yanchor == "bottom"  # a row above the capacity/alloc label
        assert "KiB" not in a.text and len(a.text) <= 50  # fits a 460 px wide map (two side by side)
    labels = [a for a in fig.layout.annotations if a.yref != "paper" and a.yanchor == "bottom" and a.y == 1.0]
    assert labels and all(not a.yshift for a in labels)
    # a title the notebook gives the figure sits in the top margin, above the lifted map title
    assert fig.layout.margin.t >= 60 + TITLE_LIFT_PX + 16


def test_compare_lifts_its_titles_over_the_capacity_labels():
    s, _ = _both_maps()
    fig = compare_figure(s, s, arch="sm_100a")
    titles = [a for a in fig.layout.annotations if a.yref == "paper"]
    assert len(titles) == 2 and all(a.yshift == TITLE_LIFT_PX for a in titles)


# -- point 11: KiB one way -------------------------------------------------------------------


def test_kib_is_written_one_way_on_a_map():
    s = SmemAllocator()
    s.add(SmemAllocation("odd", 100_000, alignment=128))
    s.add(SmemAllocation("tile", 129_488, alignment=128))
    s.compute_layout()
    spec = smem_spec(s.plan, "sm_90a")
    hover = next(h for h in by_meta(spec)["data"]["hovertext"] if "<b>odd</b>" in h)
    assert fmt_units(100_000, "B") in hover  # 97.656 KiB, as tables and titles write it
    used = spec.meta["capacity"].used
    assert spec.meta["narrow"]["title.text"].startswith(f"SMEM {kib_label(used)} of 227 KiB")
    text = repr(spec.layout) + repr(spec.meta["narrow"]) + repr(by_meta(spec)["data"]["hovertext"])
    for number in re.findall(r"([\d.]+) KiB", text):
        decimals = number.partition(".")[2]
        assert len(decimals) in (0, 3) or not decimals.endswith("0"), number  # kib_label's form, never .1f


# -- point 12: one colour where plotly.js wants one ------------------------------------------


def _lifetime_plan():
    s = SmemAllocator(arch="sm_90a", steps=("load", "mma", "epilogue"))
    s.add(SmemAllocation("smem_a", 80 * KIB, alignment=1024), live=range(0, 2))
    s.add(SmemAllocation("smem_b", 80 * KIB, alignment=1024), live=range(0, 2))
    s.add(SmemAllocation("epi_c", 32 * KIB, alignment=1024), live="epilogue")
    s.add(SmemAllocation("bias", 512, alignment=16), live={"mma", "epilogue"})
    s.add_resource(Resource("mainloop", 5))
    s.compute_layout()
    return s.plan


def test_hatched_bars_never_take_their_background_from_a_colour_array():
    """Left out, a pattern's background is the marker's colour, and plotly.js logs
    "Invalid color specifier: Array(n)" when that is an array (15 per run of notebook 02)."""
    plan = _lifetime_plan()
    specs = [step_map_spec(plan, k) for k in range(3)] + [smem_spec(notebook_02_default().plan)]
    checked = 0
    for spec in specs:
        for t in spec.traces:
            marker = t.get("marker", {})
            # a pattern per bar (a list, even of "" for no hatching) draws each bar's background
            shape = marker.get("pattern", {}).get("shape")
            if isinstance(marker.get("color"), list) and (isinstance(shape, list) or shape):
                assert isinstance(marker["pattern"].get("bgcolor"), str), (t["name"], marker)
                checked += 1
    assert checked >= 1  # the step maps' padding / not-live bars
    assert AXIS_END > 1
