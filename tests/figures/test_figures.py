"""The figures, checked through their data: every region, offsets, sizes,
lanes per phase, capacity line, hover text, escaping, stable colours."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

go = pytest.importorskip("plotly.graph_objects")

import smemviz  # noqa: E402
from smemviz import SmemAllocation, SmemAllocator, TmemAllocation, TmemAllocator, hardware  # noqa: E402
from smemviz.figures import TRACE_NAMES, layout_figure, smem_figure, tmem_figure  # noqa: E402
from smemviz.figures._bank import bank_figure  # noqa: E402
from smemviz.figures._bars import spread  # noqa: E402
from smemviz.figures._geometry import LANE_FILL  # noqa: E402
from smemviz.figures._style import (  # noqa: E402
    FAMILY_HUES,
    KIND_COLORS,
    color_for,
    family_of,
    kib_ticks,
    plain,
    region_colors,
    shade,
)

EVIL = "<img src=x onerror=alert(1)>"


class Pipe:
    """A resource owning a 4-stage pipeline (64 B of mbarriers)."""

    name = "mainloop"
    pipeline_group = None

    class pipeline_config:
        num_stages = 4
        barrier_ptr = None

    def get_smem_requirements(self):
        return []


def gemm_like(stages: int = 2, evil: bool = False) -> SmemAllocator:
    s = SmemAllocator()
    for i in range(stages):
        s.add(SmemAllocation(f"a{i}", 16384, 1024, dtype="bf16", count=8192))
    s.add(SmemAllocation("odd", 100, 1024))  # leaves padding before the next, 128-aligned, block
    epi = SmemAllocation("epi", 16384, 128)
    red = SmemAllocation(EVIL if evil else "red", 8192, 128)
    scratch = SmemAllocation("scratch", 20000, 16)
    s.add_alias_group([[epi, red], [scratch]])
    s.add_tmem_ptr(SmemAllocation("tmem_ptr", 4, 4))
    s.add_resource(Pipe())
    s.compute_layout()
    return s


def traces(fig) -> dict:
    return {t.meta: t for t in fig.data}


def bars(fig):
    by = traces(fig)
    for key in ("data", "aliased", "barrier", "tmem_ptr"):
        t = by[key]
        for i in range(len(t.base or ())):
            yield key, t, i


def test_every_region_is_one_bar_at_its_offset_and_size():
    plan = gemm_like(3).plan
    fig = smem_figure(plan)
    assert isinstance(fig, go.Figure)
    assert [t.meta for t in fig.data] == list(TRACE_NAMES)
    seen = {t.text[i]: (t.base[i], t.customdata[i], key) for key, t, i in bars(fig)}
    assert len(seen) == len(plan.regions)
    for r in plan.regions:
        base, size, key = seen[r.name]
        assert (base, size) == (r.offset, r.size), r.name
        expected = {"barrier": "barrier", "tmem_ptr": "tmem_ptr"}.get(r.kind, "aliased" if r.aliased else "data")
        assert key == expected, r.name
    assert not fig.layout.shapes or len(fig.layout.shapes) <= 3  # blocks are bars, not shapes


def test_phases_sit_on_their_own_lanes_within_the_group_span():
    plan = gemm_like().plan
    al = traces(smem_figure(plan))["aliased"]
    lane = {al.text[i]: (al.y[i], al.width[i]) for i in range(len(al.text))}
    (y_epi, h_epi), (y_red, _), (y_scr, h_scr) = lane["epi"], lane["red"], lane["scratch"]
    assert y_epi == y_red  # same phase, same lane
    assert y_epi > y_scr  # phase 1 drawn above phase 2
    assert h_epi == h_scr == pytest.approx(LANE_FILL / 2)
    assert abs(y_epi - y_scr) >= h_epi  # lanes do not overlap
    group = plan.groups[0]
    outline = traces(smem_figure(plan))["groups"]
    assert (outline.base[0], outline.x[0]) == (group.offset, group.size)
    for i in range(len(al.text)):
        assert group.offset <= al.base[i] and al.base[i] + al.customdata[i] <= group.end


def test_padding_is_drawn_and_adds_up():
    plan = gemm_like().plan
    assert plan.padding > 0
    pad = traces(smem_figure(plan))["padding"]
    assert sum(pad.x) == plan.padding
    for base, size in zip(pad.base, pad.x):
        assert not any(r.offset < base + size and base < r.end for r in plan.regions if r.size)


def test_barriers_and_tmem_slot_are_distinct_and_marked():
    fig = smem_figure(gemm_like().plan)
    by = traces(fig)
    assert list(by["barrier"].text) == ["mainloop.barriers"]
    assert list(by["tmem_ptr"].text) == ["tmem_ptr"]
    assert by["barrier"].marker.color != by["tmem_ptr"].marker.color
    assert set(by["small"].marker.symbol) == {"triangle-up", "diamond"}  # visible even when 4 B wide
    data_colors = set(by["data"].marker.color) | set(by["aliased"].marker.color)
    assert by["barrier"].marker.color[0] not in data_colors


@pytest.mark.parametrize("arch", ["sm_90", "sm_80", "sm_120"])
def test_capacity_line_and_axis_follow_the_arch(arch):
    plan = gemm_like(4).plan
    fig = smem_figure(plan, arch=arch)
    limit = hardware.get_arch(arch).smem_per_block
    line = fig.layout.shapes[0]
    assert line.x0 == line.x1 == limit
    assert fig.layout.xaxis.range[1] >= max(limit, plan.total)
    pct = f"{100 * plan.total / limit:.1f}%"
    assert pct in fig.layout.title.text and f"{plan.total:,} B" in fig.layout.title.text
    assert pct in fig.layout.annotations[0].text


def test_layout_beyond_capacity_widens_the_axis():
    s = SmemAllocator()
    s.add(SmemAllocation("huge", 150_000, 128))
    s.compute_layout()
    fig = smem_figure(s, arch="sm_86")
    assert fig.layout.xaxis.range[1] >= 150_000
    over = fig.layout.shapes[1]
    assert (over.x0, over.x1) == (99 * 1024, 150_000)
    assert "over by" in fig.layout.annotations[0].text


def test_ticks_are_in_kib():
    vals, text = kib_ticks(232448)
    assert vals[0] == 0 and vals[-1] <= 232448 and len(vals) <= 11
    assert text[1] == f"{vals[1] // 1024} KiB"
    fig = smem_figure(gemm_like().plan)
    assert all(t == "0" or t.endswith("KiB") for t in fig.layout.xaxis.ticktext)


def test_hover_has_every_detail():
    plan = gemm_like().plan
    fig = smem_figure(plan)
    hover = {t.text[i]: t.hovertext[i] for _, t, i in bars(fig)}
    a1 = plan.region("a1")
    h = hover["a1"]
    for part in (
        f"offset {a1.offset:,} (0x{a1.offset:x})",
        "size 16,384 B",
        f"end {a1.end:,}",
        "alignment 1,024 B",
        f"padding before {a1.padding_before:,} B",
        "bf16 × 8,192",
    ):
        assert part in h, part
    assert "alias group 1, phase 2" in hover["scratch"]
    assert "alias group 1, phase 1" in hover["epi"]
    assert "pipeline mbarriers" in hover["mainloop.barriers"]
    odd_next = next(r for r in plan.regions if r.offset > plan.region("odd").offset and r.padding_before)
    assert f"padding before {odd_next.padding_before:,} B" in hover[odd_next.name]


def test_names_cannot_inject_markup():
    plan = gemm_like(evil=True).plan
    for fig in (smem_figure(plan), bank_figure(plan), layout_figure(plan)):
        texts = []
        for t in fig.data:
            for attr in ("text", "hovertext"):
                v = getattr(t, attr, None)
                texts += [v] if isinstance(v, str) else list(v or ())
        texts += list(fig.layout.yaxis.ticktext or ())
        assert any("&lt;img src=x onerror=alert(1)&gt;" in s for s in texts)
        assert not any("<img" in s for s in texts)
    assert plain("a<b>&c") == "a&lt;b&gt;&amp;c"


def test_colours_follow_names_not_positions():
    small, big = gemm_like(2).plan, gemm_like(4).plan
    c_small = {t.text[i]: t.marker.color[i] for _, t, i in bars(smem_figure(small))}
    c_big = {t.text[i]: t.marker.color[i] for _, t, i in bars(smem_figure(big))}
    for name in ("a0", "a1", "odd", "epi", "scratch"):
        assert c_small[name] == c_big[name]
    assert c_small["a0"] == color_for("a0")


def test_highlight_dims_everything_but_one_phase():
    plan = gemm_like().plan
    by = traces(smem_figure(plan, highlight=(0, 1)))
    al = by["aliased"]
    op = {al.text[i]: al.marker.opacity[i] for i in range(len(al.text))}
    assert op["scratch"] == 1.0 and op["epi"] < 0.5 and op["red"] < 0.5
    assert all(o < 1.0 for o in by["data"].marker.opacity)
    plain_fig = traces(smem_figure(plan))
    assert all(o == 1.0 for o in plain_fig["aliased"].marker.opacity)


def tmem_layout() -> TmemAllocator:
    t = TmemAllocator()
    t.add(TmemAllocation("acc", 128))
    t.add_alias_group([[TmemAllocation("acc2", 64), TmemAllocation("sfa", 16)], [TmemAllocation("sfb", 32)]])
    t.compute_layout()
    return t


def test_tmem_map_spans_lanes_and_marks_the_alloc_count():
    t = tmem_layout()
    plan = t.plan
    fig = tmem_figure(t)
    assert fig.layout.xaxis.range[1] >= hardware.TMEM_COLUMNS
    data = traces(fig)["data"]
    assert list(data.text) == ["acc"] and (data.base[0], data.x[0]) == (0, 128)
    assert data.y[0] - data.width[0] / 2 == 0 and data.y[0] + data.width[0] / 2 == hardware.TMEM_LANES
    al = traces(fig)["aliased"]
    lanes = {al.text[i]: al.y[i] for i in range(len(al.text))}
    assert lanes["acc2"] == lanes["sfa"] > lanes["sfb"]
    alloc_line = fig.layout.shapes[1]
    assert alloc_line.x0 == t.tcgen05_alloc_columns == 256 and alloc_line.visible
    assert "tcgen05.alloc(256)" in fig.layout.title.text
    assert fig.layout.shapes[2].x0 == hardware.TMEM_COLUMNS
    assert "columns 128 to 191" in al.hovertext[list(al.text).index("acc2")]
    assert plan.data_total == 208 and "208 of 512" in fig.layout.title.text


def test_bank_view_gives_each_region_its_start_bank():
    plan = gemm_like().plan
    fig = bank_figure(plan)
    starts = fig.data[0]
    regions = [r for r in plan.regions if r.size]
    assert list(starts.x) == [hardware.bank_of(r.offset) for r in regions]
    assert len(starts.x) == len(regions)
    assert any(b != 0 for b in starts.x)  # the barriers after "odd" do not start at bank 0


def test_layout_figure_stacks_both_maps_without_latex():
    s, t = gemm_like(), tmem_layout()
    fig = layout_figure(s, t, arch="sm_100")
    axes = {(tr.xaxis, tr.yaxis) for tr in fig.data}
    assert axes == {("x", "y"), ("x2", "y2")}
    assert len(fig.data) == 2 * len(TRACE_NAMES)
    refs = {sh.xref for sh in fig.layout.shapes}
    assert refs == {"x", "x2"}
    text = fig.to_json()
    assert "$" not in text.replace("$schema", "")  # no MathJax needed for static export
    with pytest.raises(ValueError, match="neither"):
        layout_figure()


def test_inputs_are_checked():
    with pytest.raises(ValueError, match="TMEM"):
        smem_figure(tmem_layout())
    with pytest.raises(ValueError, match="SMEM"):
        tmem_figure(gemm_like())
    with pytest.raises(TypeError, match="LayoutPlan"):
        smem_figure("not a layout")


def test_top_level_names_are_the_figure_functions():
    assert smemviz.smem_figure is smem_figure
    assert smemviz.tmem_figure is tmem_figure
    assert smemviz.bank_conflict_figure is smemviz.figures.bank_conflict_figure


def test_five_thousand_regions_stay_a_handful_of_traces():
    s = SmemAllocator()
    for i in range(5000):
        s.add(SmemAllocation(f"r{i}", 64 + (i % 5) * 16, 16))
    s.compute_layout()
    fig = smem_figure(s, arch="sm_90")
    assert len(fig.data) == len(TRACE_NAMES)
    assert len(traces(fig)["data"].base) == 5000
    assert len(fig.layout.shapes) == 2


@pytest.mark.cutlass
def test_figures_read_a_computed_cutlass_allocator():
    memory = pytest.importorskip("cutlass.experimental.task_scheduling.memory")
    theirs = memory.SmemAllocator()
    theirs.add(memory.SmemAllocation("a", 4096, 1024))
    theirs.add_alias_group([[memory.SmemAllocation("p1", 2048, 128)], [memory.SmemAllocation("p2", 1024, 128)]])
    theirs.compute_layout()
    fig = smem_figure(theirs, arch="sm_90a")
    names = {t.text[i] for _, t, i in bars(fig)}
    assert names == {"a", "p1", "p2"}
    tm = memory.TmemAllocator()
    tm.add(memory.TmemAllocation("acc", 96))
    tm.compute_layout()
    tfig = tmem_figure(tm)
    assert list(traces(tfig)["data"].x) == [96] and tfig.layout.shapes[1].x0 == 128


def test_an_operands_stages_share_a_hue_shaded_by_stage():
    assert family_of("a_stage3") == family_of("a3") == family_of("a_s3") == ("a", 3)
    assert family_of("smem_b12") == ("smem_b", 12) and family_of("load.a") == ("load.a", None)
    assert family_of("epi") == ("epi", None)
    stages = [color_for(f"a_stage{i}") for i in range(4)]
    assert len(set(stages)) == 4  # shades differ ...
    hue = FAMILY_HUES[[shade(h, 0) for h in FAMILY_HUES].index(color_for("a"))]
    assert all(s_ in {shade(hue, -0.28 + 0.09 * k) for k in range(8)} for s_ in stages)  # ... of one hue
    light = [sum(int(c[i : i + 2], 16) for i in (1, 3, 5)) for c in stages]
    assert light == sorted(light)  # stage 0 darkest
    t = TmemAllocator()
    t.add(TmemAllocation("acc0", 256))
    t.add(TmemAllocation("acc1", 256))
    t.compute_layout()
    data = traces(tmem_figure(t))["data"]
    assert data.marker.color[0] != data.marker.color[1]


def test_families_in_one_map_get_distinct_hues_and_the_bank_view_agrees():
    s = SmemAllocator()
    names = []
    for operand in ("sfa", "sfb", "a", "b", "c", "d"):  # six families of four stages: 24 regions
        for k in range(4):
            names.append(f"{operand}_stage{k}")
            s.add(SmemAllocation(names[-1], 2048, 128))
    s.add_resource(Pipe())
    s.compute_layout()
    fig = smem_figure(s)
    data = traces(fig)["data"]
    color = dict(zip(data.text, data.marker.color))
    hues = {}
    for name, c in color.items():
        hues.setdefault(family_of(name)[0], set()).add(c)
    base = {
        op: next(h for h in FAMILY_HUES if shade(h, -0.28) == color[f"{op}_stage0"])
        for op in ("sfa", "sfb", "a", "b", "c", "d")
    }
    assert len(set(base.values())) == 6  # one hue per family, none shared
    assert all(len(v) == 4 for v in hues.values())
    bank = bank_figure(s).data[0]
    rows = [r for r in s.plan.regions if r.size]
    for r, c in zip(rows, bank.marker.color):
        if r.kind == "data":
            assert c == color[r.name]
    # resource members without numbers are shaded apart
    load = region_colors(["load.a", "load.b"])
    assert load["load.a"] != load["load.b"]


def test_labels_that_do_not_fit_fall_back_to_the_stage_number_and_dimmed_ones_stay_readable():
    s = SmemAllocator()
    s.add(SmemAllocation("big_tile", 131072, 1024))
    for k in range(4):
        s.add(SmemAllocation(f"scale_factor_a_stage{k}", 4096, 128))  # ~16 px on a 900 px map
    s.add_alias_group([[SmemAllocation("epi", 8192, 128)], [SmemAllocation("red", 8192, 128)]])
    s.compute_layout()
    data = traces(smem_figure(s, "sm_100"))["data"]
    tmpl = dict(zip(data.text, data.texttemplate))
    assert tmpl["big_tile"] == "%{text}"
    assert [tmpl[f"scale_factor_a_stage{k}"] for k in range(4)] == ["0", "1", "2", "3"]
    al = traces(smem_figure(s, "sm_100", highlight=(0, 1)))["aliased"]
    font = dict(zip(al.text, al.textfont.color))
    assert font["epi"] == "#37474f"  # dimmed bar: dark text, not white on near-white


def test_only_bars_wide_enough_carry_a_label():
    s = SmemAllocator()
    s.add(SmemAllocation("big_tile", 65536, 1024))
    for i in range(50):
        s.add(SmemAllocation(f"tiny{i}", 16, 16))
    s.compute_layout()
    data = traces(smem_figure(s))["data"]
    pos = dict(zip(data.text, data.textposition))
    assert pos["big_tile"] == "inside"
    assert all(pos[f"tiny{i}"] == "none" for i in range(50))
    assert len(data.text) == 51  # every region keeps its name (hover, tests), drawn or not


def test_tmem_alloc_note_sits_above_the_plot_area():
    fig = tmem_figure(tmem_layout())
    note = fig.layout.annotations[0]
    assert note.yref == "y domain" and note.y == 1.0 and note.yanchor == "bottom"
    assert "tcgen05.alloc 256 cols" in note.text


def test_tiny_regions_are_drawn_wider_and_say_so():
    plan = gemm_like(3).plan  # "odd" is 100 B of a 227 KiB axis
    fig = smem_figure(plan, "sm_100")
    span = fig.layout.xaxis.range[1] / 1.01
    data = traces(fig)["data"]
    for i, name in enumerate(data.text):
        assert data.x[i] >= 0.0035 * span, name  # a few px even on a 400 px map
        assert data.x[i] >= data.customdata[i]
    odd = list(data.text).index("odd")
    assert data.x[odd] > 100 and "not to scale" in data.hovertext[odd]
    assert odd == len(data.text) - 1  # drawn last, over its neighbours
    assert all("not to scale" not in h for i, h in enumerate(data.hovertext) if i != odd)
    assert "1 tiny region drawn wider (not to scale)" in fig.layout.title.subtitle.text
    plain_layout = SmemAllocator()
    plain_layout.add(SmemAllocation("a", 65536, 1024))
    plain_layout.compute_layout()
    assert "not to scale" not in smem_figure(plain_layout).layout.title.subtitle.text


def test_every_barrier_region_has_a_marker_of_its_own():
    s = SmemAllocator()
    s.add(SmemAllocation("big", 65536, 1024))
    s.add(SmemAllocation("tiny", 32, 16))
    for name in ("load", "mma", "epi"):
        p = Pipe()
        p.name = name
        s.add_resource(p)
    s.add_tmem_ptr(SmemAllocation("tmem_ptr", 4, 4))
    s.compute_layout()
    fig = smem_figure(s.plan)
    marks = traces(fig)["small"]
    span = fig.layout.xaxis.range[1] / 1.01
    barrier_xs = sorted(x for x, sym in zip(marks.x, marks.marker.symbol) if sym == "triangle-up")
    assert len(barrier_xs) == 3 == len(s.plan.barrier_regions)
    assert all(b - a >= 0.044 * span for a, b in zip(barrier_xs, barrier_xs[1:]))  # 18 px apart at 400 px
    hovers = [h for h, sym in zip(marks.hovertext, marks.marker.symbol) if sym == "triangle-up"]
    assert len(set(hovers)) == 3
    assert "tiny" in traces(fig)["data"].text


@given(st.lists(st.floats(0, 1000), min_size=0, max_size=30), st.floats(0.5, 50), st.floats(1, 500))
def test_spread_markers_keep_their_order_and_a_gap(xs, gap, limit):
    out = spread(xs, gap, limit)
    assert len(out) == len(xs)
    order = sorted(range(len(xs)), key=lambda i: xs[i])
    moved = [out[i] for i in order]
    least = min(gap, limit / max(1, len(xs) - 1))
    assert all(b - a >= least - 1e-6 for a, b in zip(moved, moved[1:]))


def test_an_over_capacity_map_has_a_red_title_and_shaded_overflow():
    s = SmemAllocator()
    s.add(SmemAllocation("a", 300 * 1024, 1024))
    s.compute_layout()
    fig = smem_figure(s, "sm_90")
    assert fig.layout.title.font.color == KIND_COLORS["capacity"]
    over = fig.layout.shapes[1]
    assert (over.x0, over.x1) == (232448, 300 * 1024)
    assert smem_figure(gemm_like().plan, "sm_90").layout.title.font.color != KIND_COLORS["capacity"]


def test_the_tmem_map_is_shorter_than_the_smem_map():
    t = TmemAllocator()
    t.add(TmemAllocation("acc", 128))
    t.compute_layout()
    assert tmem_figure(t).layout.height < smem_figure(gemm_like().plan).layout.height
