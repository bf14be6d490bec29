"""The lifetime map and the layout comparison, checked through their data."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings

import smemviz
from smemviz import SmemAllocation, SmemAllocator

from ..strategies import lifetime_instances

pytest.importorskip("plotly")
from smemviz.analysis import text_report
from smemviz.figures import lifetime_spec, totals_figure  # noqa: E402
from smemviz.figures._lifetime import LIFETIME_TRACES  # noqa: E402

KIB = 1024


def staged():
    s = SmemAllocator(arch="sm_90a", steps=("load", "mma", "epilogue", "store"))
    s.add(SmemAllocation("smem_a", 96 * KIB, alignment=1024), live=range(0, 2))
    s.add(SmemAllocation("epi", 64 * KIB, alignment=1024), live={"epilogue"})
    s.add(SmemAllocation("scales", 4 * KIB, alignment=128), live={"load", "store"})  # live twice
    s.add(SmemAllocation("flags", 256, alignment=16))
    return s


def test_one_rectangle_per_run_of_live_steps():
    s = staged()
    s.compute_layout()
    spec = lifetime_spec(s.plan)
    assert tuple(t["name"] for t in spec.traces) == LIFETIME_TRACES
    rects = spec.traces[0]
    by_name: dict[str, list[tuple[float, float, int, int]]] = {}
    names = [re.match(r"<b>(.*?)</b>", h).group(1) for h in rects["hovertext"]]
    for name, x, w, base, y in zip(names, rects["x"], rects["width"], rects["base"], rects["y"]):
        by_name.setdefault(name, []).append((x, w, base, y))
    plan = s.plan
    assert [(x, base, y) for x, _, base, y in by_name["smem_a"]] == [(0.5, plan.region("smem_a").offset, 96 * KIB)]
    assert [x for x, *_ in by_name["scales"]] == [0, 3]  # two runs: load, then store
    assert [x for x, *_ in by_name["flags"]] == [1.5]  # every step, one run
    assert by_name["flags"][0][1] == pytest.approx(3.92)
    assert spec.layout["xaxis"]["ticktext"] == ["load", "mma", "epilogue", "store"]
    # a label only where it has room: the 256 B flags on a 227 KiB axis get none
    labels = dict(zip(names, rects["text"]))
    assert labels["smem_a"] == "smem_a" and labels["flags"] == ""


def test_profile_bound_peak_and_sharing():
    s = staged()
    s.compute_layout()
    plan = s.plan
    spec = lifetime_spec(plan)
    profile = spec.traces[2]
    assert profile["y"] == [100 * KIB + 256, 96 * KIB + 256, 64 * KIB + 256, 4 * KIB + 256]
    assert spec.meta["bound_steps"] == (0,)  # load needs the most
    assert profile["marker"]["color"][0] != profile["marker"]["color"][1]
    shades = [sh for sh in spec.layout["shapes"] if sh["type"] == "rect"]
    assert [(sh["x0"], sh["x1"]) for sh in shades] == [(-0.5, 0.5)]
    peak = [sh for sh in spec.layout["shapes"] if sh["type"] == "line" and sh["y0"] == plan.data_total]
    assert peak and plan.optimal
    assert "optimal (proven)" in spec.layout["annotations"][0]["text"]
    assert any("sm_90 limit" in a["text"] for a in spec.layout["annotations"])
    # epi reuses bytes of smem_a after the mainloop, and the hover says so
    assert "epi" in spec.meta["sharing"]["smem_a"]
    hover = next(h for t, h in zip(spec.traces[0]["text"], spec.traces[0]["hovertext"]) if t == "epi")
    assert "shares bytes with smem_a" in hover


def test_gaps_are_the_unused_stretches_under_what_is_live():
    s = SmemAllocator(steps=2)
    s.add(SmemAllocation("low", 1000, alignment=8), live=0)
    s.add(SmemAllocation("high", 1000, alignment=8), live={0, 1})
    s.compute_layout()
    gaps = lifetime_spec(s.plan).traces[1]
    plan = s.plan
    step1 = [(base, h) for x, base, h in zip(gaps["x"], gaps["base"], gaps["y"]) if x == 1]
    high = plan.region("high")
    assert step1 == ([(0, high.offset)] if high.offset else [])
    assert gaps["marker"]["pattern"]["shape"] == "/"


def test_unproven_layout_shows_its_gap():
    from dataclasses import replace

    s = staged()
    s.compute_layout()
    plan = replace(s.plan, optimal=False, lower_bound=s.plan.data_total - 512)
    assert plan.gap == 512
    assert "gap ≤ 512 B" in lifetime_spec(plan).layout["annotations"][0]["text"]


def test_a_plan_without_lifetimes_is_refused():
    s = SmemAllocator()
    s.add(SmemAllocation("x", 64))
    s.compute_layout()
    with pytest.raises(ValueError, match="needs a layout solved from lifetimes"):
        lifetime_spec(s.plan)


def test_one_step_as_a_byte_map():
    s = staged()
    s.compute_layout()
    at_store = s.plan.at_step("store")
    assert sorted(r.name for r in at_store.regions) == ["flags", "scales"]
    fig = smemviz.smem_figure(at_store)
    assert fig.layout.title.text.startswith("SMEM layout")


def test_compare_layouts_hand_written_greedy_optimal():
    s = SmemAllocator(arch="sm_90a")
    s.add(SmemAllocation("keep", 100, alignment=16))
    s.add_alias_group(
        [
            [SmemAllocation("x", 1000, alignment=1024)],
            [SmemAllocation("y", 3000, alignment=16), SmemAllocation("w", 2000, alignment=16)],
        ]
    )
    plans = smemviz.experimental.compare_layouts(s)
    assert list(plans) == ["hand-written", "greedy", "optimal"]
    assert plans["optimal"].data_total <= plans["greedy"].data_total <= plans["hand-written"].data_total
    assert plans["optimal"].optimal and plans["hand-written"].optimal is None
    assert not s.layout_computed and all(a.offset == 0 for a in s.allocations)  # the caller's allocator is untouched
    fig = totals_figure(plans)
    assert list(fig.data[0].y) == ["hand-written", "greedy", "optimal"]
    assert list(fig.data[0].x) == [p.data_total for p in plans.values()]


def test_exported_as_html(tmp_path):
    s = staged()
    s.compute_layout()
    out = smemviz.export(s.plan, tmp_path / "lifetimes.html", figure=smemviz.experimental.lifetime_figure(s))
    text = out.read_text()
    assert "epilogue" in text and "live bytes" in text


def _unused_at(plan, k):
    """The unused stretches under what is live at step ``k``, computed directly."""
    out, cursor = [], 0
    for r in sorted((r for r in plan.data_regions if r.live_in(k) and r.size), key=lambda r: r.offset):
        if r.offset > cursor:
            out.append((cursor, r.offset))
        cursor = max(cursor, r.end)
    return sorted(out)


@pytest.mark.parametrize("seed", range(6))
def test_gap_bars_cover_each_steps_unused_stretches_once_merged_across_steps(seed):
    import random

    rng = random.Random(seed)
    s = SmemAllocator(steps=6)
    for k in range(12):
        first = rng.randrange(6)
        s.add(
            SmemAllocation(f"b{k}", rng.randint(1, 40) * 64, alignment=rng.choice([16, 128, 1024])),
            live=range(first, rng.randint(first + 1, 6)),
        )
    s.compute_layout(solver="greedy")
    plan = s.plan
    gaps = lifetime_spec(plan).traces[1]
    runs = [
        (round(x - (w - 0.92) / 2), round(x + (w - 0.92) / 2), base, base + y)
        for x, w, base, y in zip(gaps["x"], gaps["width"], gaps["base"], gaps["y"])
    ]
    for k in range(6):
        assert sorted((a, b) for first, last, a, b in runs if first <= k <= last) == _unused_at(plan, k)
    # a stretch unused at consecutive steps is one bar
    for _first, last, a, b in runs:
        assert not any(f2 == last + 1 and (a2, b2) == (a, b) for f2, _, a2, b2 in runs)
    assert all(h.startswith("unused at ") for h in gaps["hovertext"])


@settings(max_examples=40, deadline=None)
@given(lifetime_instances(max_buffers=8, max_steps=6, max_size=4096))
def test_step_bounds_are_each_steps_exact_packing_whatever_was_computed_before(instance):
    """The per-step bounds are kept by buffer set across plans: a plan must
    still get its own steps' packing, as computed from scratch."""
    from smemviz.solver import packed_bound

    sizes, aligns, lives = instance
    steps = max(max(live) for live in lives) + 1
    s = SmemAllocator(steps=steps)
    for i, (size, align, live) in enumerate(zip(sizes, aligns, lives)):
        s.add(SmemAllocation(f"b{i}", size, alignment=align), live=sorted(live))
    s.compute_layout(solver="greedy")
    plan = s.plan
    for k, bound in enumerate(plan.step_bounds):
        live = [r for r in plan.data_regions if r.live_in(k) and r.size]
        assert bound == packed_bound([r.size for r in live], [r.alignment for r in live])
        assert plan.live_profile[k] <= bound <= plan.data_total


@settings(max_examples=40, deadline=None)
@given(lifetime_instances(max_buffers=10, max_steps=6, max_size=4096))
def test_sharing_names_exactly_the_regions_that_reuse_bytes_at_other_steps(instance):
    from smemviz.figures._lifetime import sharing

    sizes, aligns, lives = instance
    s = SmemAllocator(steps=max(max(live) for live in lives) + 1)
    for i, (size, align, live) in enumerate(zip(sizes, aligns, lives)):
        s.add(SmemAllocation(f"b{i}", size, alignment=align), live=sorted(live))
    s.compute_layout(solver="greedy")
    regions = [r for r in s.plan.regions if r.size]
    every = set(range(len(s.plan.steps)))
    expected = {
        r.name: [
            q.name
            for q in regions
            if q is not r and r.offset < q.end and q.offset < r.end and not set(r.live or every) & set(q.live or every)
        ]
        for r in regions
    }
    assert sharing(s.plan) == expected


def test_buffers_that_stack_without_one_common_step_are_named_as_the_bound():
    # x meets y at step 0 and z at step 2, y meets z at step 1: never all three at
    # one step (each step holds 2 KiB), yet they stack: 3 KiB at least
    s = SmemAllocator(arch="sm_90a", steps=("load", "mma", "epilogue"))
    for name, live in (("x", {"load", "epilogue"}), ("y", {"load", "mma"}), ("z", {"mma", "epilogue"})):
        s.add(SmemAllocation(name, KIB, alignment=16), live=live)
    s.compute_layout()
    plan = s.plan
    assert plan.step_bounds == (2 * KIB,) * 3
    assert plan.pairwise_bound == (3 * KIB, ("x", "y", "z")) and plan.lower_bound == 3 * KIB
    assert plan.optimal and plan.data_total == 3 * KIB
    spec = lifetime_spec(plan)
    assert spec.meta["pairwise_bound"] == (3 * KIB, ("x", "y", "z"))
    assert "x, y, z meet pairwise at different steps, so they stack" in spec.layout["title"]["subtitle"]["text"]
    assert "lower bound 3,072 B (3 KiB) (x, y, z stack: they meet pairwise at different steps)" in text_report(plan)
    # with ranges of steps only, the steps set the bound and nothing else is named
    staged_plan = staged()
    staged_plan.compute_layout()
    assert staged_plan.plan.pairwise_bound == (0, ())
    assert "pairwise" not in lifetime_spec(staged_plan.plan).layout["title"]["subtitle"]["text"]


def test_long_lists_of_names_are_cut_short():
    from smemviz.analysis._report import some_names

    assert some_names(["a", "b"]) == "a, b"
    assert some_names([f"b{k}" for k in range(9)]) == "b0, b1, b2, b3, b4, b5 and 3 more"
    assert some_names(["esc\x1b"]) == "esc\\x1b"


# -- issue 30, point 3: tiny regions each visible and hoverable on their own ------------------


def notebook_02_lifetimes():
    """Notebook 02's lifetime section: A and B while loading and multiplying, C in the
    epilogue, a 512 B bias from the MMA on, the mainloop's barriers throughout."""

    class Mainloop:
        name = "mainloop"
        pipeline_group = None

        class pipeline_config:
            num_stages = 5
            barrier_ptr = None

        def get_smem_requirements(self):
            return [
                SmemAllocation("smem_a", dtype="bf16", count=5 * 128 * 64, alignment=1024),
                SmemAllocation("smem_b", dtype="bf16", count=5 * 128 * 64, alignment=1024),
            ]

    s = SmemAllocator(arch="sm_90a", steps=("load", "mma", "epilogue"))
    s.add_resource(Mainloop(), live=range(0, 2))
    s.add(SmemAllocation("epi_c", dtype="bf16", count=128 * 128, alignment=1024), live="epilogue")
    s.add(SmemAllocation("bias", dtype="f32", count=128, alignment=16), live={"mma", "epilogue"})
    s.add(SmemAllocation("sched", 16, alignment=16), live={"mma"})
    s.compute_layout()
    return s.plan


def _bands(spec) -> dict[str, list[tuple[float, float, float, float]]]:
    """(first step, last step, base, top) of every rectangle, by region name."""
    rects = spec.traces[0]
    out: dict[str, list[tuple[float, float, float, float]]] = {}
    for h, x, w, base, y in zip(rects["hovertext"], rects["x"], rects["width"], rects["base"], rects["y"]):
        name = re.match(r"<b>(.*?)</b>", h).group(1)
        out.setdefault(name, []).append((x - w / 2, x + w / 2, base, base + y))
    return out


def test_tiny_regions_are_drawn_apart_tall_enough_to_hover_and_over_the_peak_line():
    from smemviz.figures._lifetime import MIN_HEIGHT_FRACTION

    plan = notebook_02_lifetimes()
    spec = lifetime_spec(plan)
    axis = spec.layout["yaxis"]["range"][1]
    px = 260 / axis  # the map's ~260 px of addresses
    bands = _bands(spec)
    tiny = ["bias", "sched", "mainloop.barriers"]
    assert f"{len(tiny)} tiny regions drawn taller" in spec.layout["title"]["subtitle"]["text"]
    for name in tiny:
        for _, _, base, top in bands[name]:
            assert (top - base) * px >= 9, name  # a band the pointer finds, not 3 px
            assert base >= plan.region(name).offset  # drawn from its bytes up, never below them
        assert MIN_HEIGHT_FRACTION * 0.9 <= (bands[name][0][3] - bands[name][0][2]) / axis
    # no two tiny regions live at a common step are drawn over each other
    rects = [(name, r) for name in tiny for r in bands[name]]
    for i, (a, (x0, x1, b0, t0)) in enumerate(rects):
        for b, (y0, y1, b1, t1) in rects[i + 1 :]:
            if min(x1, y1) > max(x0, y0):  # they share a step
                assert min(t0, t1) <= max(b0, b1), (a, b)
    # the peak line is drawn under the bars, and its label above the tallest of them
    peak = next(sh for sh in spec.layout["shapes"] if sh["type"] == "line" and sh["y0"] == plan.data_total)
    assert peak["layer"] == "below"
    top = max(t for name in tiny for *_, t in bands[name])
    assert spec.layout["annotations"][0]["y"] == top
    assert spec.layout["yaxis"]["range"][1] >= top


def test_a_long_stack_of_tiny_regions_is_drawn_thinner_not_taller_than_a_quarter_of_the_axis():
    from smemviz.figures._lifetime import MIN_HEIGHT_FLOOR, STACK_FRACTION

    s = SmemAllocator(arch="sm_90a", steps=2)
    s.add(SmemAllocation("tile", 128 * KIB, alignment=1024), live=0)
    for k in range(20):
        s.add(SmemAllocation(f"flag{k}", 16, alignment=16), live={0, 1})
    s.compute_layout()
    spec = lifetime_spec(s.plan)
    bands = _bands(spec)
    span = max(s.plan.data_total, s.plan.capacity("sm_90a").limit)
    flags = sorted(bands[f"flag{k}"][0] for k in range(20))
    assert all(b[2] >= a[3] - 1e-6 for a, b in zip(flags, flags[1:]))  # stacked, none over another
    assert flags[-1][3] - flags[0][2] <= STACK_FRACTION * span + 1e-6
    assert min(b[3] - b[2] for b in flags) >= MIN_HEIGHT_FLOOR * span - 1e-6
