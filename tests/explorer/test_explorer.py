"""The explorer's callbacks, driven without a browser: set a control's value
and check what the figures, the message area and the tables now hold."""

from __future__ import annotations

import json

import pytest

pytest.importorskip("ipywidgets")
pytest.importorskip("plotly")

import ipywidgets  # noqa: E402

import smemviz  # noqa: E402
from smemviz import SmemAllocation, SmemAllocator, TmemAllocation, TmemAllocator, hardware  # noqa: E402
from smemviz.explorer import Explorer, explore  # noqa: E402
from smemviz.explorer._fit_width import EXPLORER_CLASS  # noqa: E402
from smemviz.explorer._panels import MAX_TABLE_ROWS  # noqa: E402

EVIL = "<script>alert(1)</script>"


def build_gemm_layout(stages: int = 2, tile_n: int = 128, dtype: str = "bf16"):
    """A GEMM-like SMEM layout (A and B per stage, an aliased epilogue) plus TMEM."""
    width = 2 if dtype == "bf16" else 1
    if stages == 7:
        raise RuntimeError("stage count 7 is not supported by this kernel")
    s = SmemAllocator()
    for i in range(stages):
        s.add(SmemAllocation(f"smem_a{i}", 128 * 64 * width, 1024))
        s.add(SmemAllocation(f"smem_b{i}", tile_n * 64 * width, 1024))
    s.add_alias_group([[SmemAllocation("epi", 128 * tile_n * 2, 128)], [SmemAllocation("red", 4096, 16)]])
    t = TmemAllocator()
    t.add(TmemAllocation("acc", tile_n))
    return s, t  # not computed: a builder's own allocators are computed by the explorer


def gemm(**controls) -> Explorer:
    return explore(build_gemm_layout, stages=(1, 8), tile_n=[64, 128, 256], dtype=["bf16", "f8e4m3"], **controls)


def data_trace(fig):
    return next(t for t in fig.data if t.meta == "data")


def test_controls_are_made_the_way_interact_makes_them():
    ex = gemm()
    assert isinstance(ex, ipywidgets.Widget)
    assert isinstance(ex.controls["stages"], ipywidgets.IntSlider)
    assert (ex.controls["stages"].min, ex.controls["stages"].max, ex.controls["stages"].value) == (1, 8, 2)
    assert isinstance(ex.controls["tile_n"], ipywidgets.Dropdown) and ex.controls["tile_n"].value == 128
    assert ex.values == {"stages": 2, "tile_n": 128, "dtype": "bf16"}
    assert ex.smem_plan.total == 2 * (16384 + 16384) + 32768
    assert ex.tmem_plan.data_total == 128


def test_moving_a_slider_rebuilds_and_updates_in_place():
    ex = gemm()
    fig = ex.smem_widget
    before_bases = list(data_trace(fig).base)
    before_title = fig.layout.title.text
    ex.controls["stages"].value = 4
    assert ex.smem_widget is fig  # same widget, updated in place
    assert len(data_trace(fig).base) == 8 and list(data_trace(fig).base) != before_bases
    total = ex.smem_plan.total
    assert total == 4 * 32768 + 32768
    assert f"{total:,} B" in fig.layout.title.text != before_title
    assert f"{total:,} B" in ex.summary.value
    assert "smem_b3" in ex.table.value
    ex.controls["stages"].value = 2
    ex.controls["tile_n"].value = 256
    assert list(data_trace(ex.tmem_widget).x) == [256]
    assert "tcgen05.alloc(256)" in ex.tmem_widget.layout.title.text


def test_in_a_running_loop_the_panels_follow_the_maps_once():
    """Where an event loop runs (a kernel), the maps update at once and the
    text panels once, after the last of several quick moves."""
    import asyncio

    from smemviz.explorer import _widget

    ex = gemm()
    fig = ex.smem_widget
    tables: list[str] = []
    ex.table.observe(lambda change: tables.append(change["new"]), names="value")

    async def drag() -> None:
        for stages in (3, 4, 5):
            ex.controls["stages"].value = stages
            assert f"{ex.smem_plan.total:,} B" in fig.layout.title.text  # the map: at once
        assert not tables and "smem_b4" not in ex.table.value  # the panels: not yet
        assert f"{ex.smem_plan.total:,} B" not in ex.summary.value
        await asyncio.sleep(_widget.PANEL_DELAY_S * 2)

    asyncio.run(drag())
    assert len(tables) == 1 and "smem_b4" in ex.table.value
    assert f"{ex.smem_plan.total:,} B" in ex.summary.value


def test_one_update_message_per_map(monkeypatch):
    ex = gemm()
    sent = {"smem": 0, "tmem": 0}
    for key, fig in (("smem", ex.smem_widget), ("tmem", ex.tmem_widget)):
        original = fig.send

        def counting(content, *args, _key=key, _orig=original, **kwargs):
            sent[_key] += 1
            return _orig(content, *args, **kwargs)

        monkeypatch.setattr(fig, "send", counting)
        # plotly's own update path (four state messages) is not taken
        monkeypatch.setattr(fig, "_send_update_msg", lambda *a, **k: pytest.fail("plotly's update path used"))
    ex.controls["tile_n"].value = 64
    assert sent == {"smem": 1, "tmem": 1}
    ex.controls["stages"].value = 3  # TMEM does not change: nothing sent for it
    assert sent == {"smem": 2, "tmem": 1}


def test_a_builder_exception_is_shown_and_the_last_layout_stays():
    ex = gemm()
    ex.controls["stages"].value = 3
    kept_bases = list(data_trace(ex.smem_widget).base)
    kept_title = ex.smem_widget.layout.title.text
    kept_plan = ex.smem_plan
    ex.controls["stages"].value = 7
    assert "RuntimeError: stage count 7 is not supported" in ex.message.value
    assert "stages=7" in ex.message.value and "last layout" in ex.message.value
    assert ex.last_error is not None
    assert list(data_trace(ex.smem_widget).base) == kept_bases
    assert ex.smem_widget.layout.title.text == kept_title and ex.smem_plan is kept_plan
    ex.controls["stages"].value = 2  # recovers
    assert ex.message.value == "" and ex.last_error is None and len(data_trace(ex.smem_widget).base) == 4


def test_an_over_capacity_layout_is_drawn_as_asked_with_the_overflow_and_a_red_summary():
    ex = gemm()
    ex.controls["stages"].value = 3  # fits: the last layout that fit
    ex.controls["stages"].value = 8  # 8 x 32 KiB + 32 KiB > 227 KiB
    assert ex.arch == "sm_100"  # a layout with TMEM starts on Blackwell
    assert "exceeds the sm_100 per-block limit of 232,448 B by 62,464 B" in ex.message.value
    # the map shows the 8-stage layout, not the last one that fit
    assert ex.smem_plan.total == 8 * 32768 + 32768
    assert len(data_trace(ex.smem_widget).base) == 16
    overflow = ex.smem_widget.layout.shapes[1]
    assert (overflow.x0, overflow.x1) == (232448, 8 * 32768 + 32768)
    assert "over by 62,464 B" in ex.smem_widget.layout.annotations[0].text
    # the summary is in the error colour and says by how much; the last fit is a note only
    smem_line = ex.summary.value.split("<br>")[0]
    assert "smemviz-over" in smem_line and "over by 62,464 B" in smem_line
    assert "smemviz-fits" not in smem_line
    note = ex.message.value.split("smemviz-note", 1)[1]
    assert "Last layout that fit" in note and "stages=3" in note and "131,072 B" in note
    ex.controls["stages"].value = 2  # fits again: message and note gone
    assert ex.message.value == "" and "smemviz-fits" in ex.summary.value


def test_arch_selector_moves_the_capacity_line():
    ex = gemm()
    assert ex.smem_widget.layout.shapes[0].x0 == hardware.get_arch(ex.arch).smem_per_block
    ex.arch_selector.value = "sm_80"
    assert ex.smem_widget.layout.shapes[0].x0 == 163 * 1024
    assert "sm_80" in ex.smem_widget.layout.title.text
    ex.controls["stages"].value = 4  # 160 KiB: fits sm_80 (163 KiB)
    assert ex.message.value == ""
    ex.arch_selector.value = "sm_86"  # 99 KiB: the rebuilt layout no longer fits
    assert ex.smem_widget.layout.shapes[0].x0 == 99 * 1024
    assert "exceeds the sm_86" in ex.message.value


def test_phase_selector_highlights_one_phase():
    ex = gemm()
    values = [v for _, v in ex.phase_selector.options]
    assert values == [None, ("smem", 0, 0), ("smem", 0, 1)]
    assert ex.phase_selector.index == 0 and ex.phase_selector.label == "all phases"
    ex.phase_selector.value = ("smem", 0, 1)
    al = next(t for t in ex.smem_widget.data if t.meta == "aliased")
    opacity = dict(zip(al.text, al.marker.opacity))
    assert opacity["red"] == 1.0 and opacity["epi"] < 0.5
    ex.controls["stages"].value = 3  # the highlight survives a rebuild
    al = next(t for t in ex.smem_widget.data if t.meta == "aliased")
    assert dict(zip(al.text, al.marker.opacity))["red"] == 1.0
    ex.phase_selector.value = None
    assert all(o == 1.0 for o in al.marker.opacity)
    assert ex.phase_selector.index == 0  # the box reads "all phases", never blank


def test_plain_layouts_pairs_and_plans():
    s, t = build_gemm_layout()
    s.compute_layout()
    ex = explore(s)
    assert ex.controls == {} and ex.tmem_plan is None
    assert ex._tmem_box.layout.display == "none"
    t.compute_layout()
    ex2 = explore((s.plan, t))
    assert ex2.smem_plan == s.plan and ex2.tmem_plan == t.plan
    ex3 = explore(t.plan)
    assert ex3.smem_plan is None and ex3.arch == "sm_100"
    assert smemviz.explore is explore and smemviz.Explorer is Explorer


def test_bad_controls_are_named():
    with pytest.raises(TypeError, match="no parameter 'stage'"):
        explore(build_gemm_layout, stage=(1, 4))

    def needs(n):
        return SmemAllocator()

    with pytest.raises(TypeError, match="parameter 'n' has no default"):
        explore(needs)
    empty = explore(needs, n=ipywidgets.fixed(3))
    assert empty.values == {"n": 3} and empty.smem_plan.total == 0


def test_fixed_and_widget_controls():
    seen = {}

    def build(stages=2, tile_n=128, dtype="bf16"):
        seen.update(stages=stages, tile_n=tile_n, dtype=dtype)
        return build_gemm_layout(stages, tile_n, dtype)

    slider = ipywidgets.IntSlider(value=3, min=1, max=6)
    ex = explore(build, stages=slider, dtype=ipywidgets.fixed("f8e4m3"))
    assert ex.controls["stages"] is slider and "dtype" not in ex.controls
    assert seen == {"stages": 3, "tile_n": 128, "dtype": "f8e4m3"}


def test_user_text_is_escaped_in_the_widget():
    def build(n=1):
        s = SmemAllocator()
        s.add(SmemAllocation(EVIL, 256 * n, 128))
        return s

    ex = explore(build, n=(1, 3))
    assert EVIL not in ex.table.value and "&lt;script&gt;" in ex.table.value
    assert "<script>" not in "".join(data_trace(ex.smem_widget).text)

    def fails(n=1):
        raise ValueError(EVIL)

    bad = explore(fails, n=(1, 2))
    assert EVIL not in bad.message.value and "&lt;script&gt;alert(1)&lt;/script&gt;" in bad.message.value


def test_large_tables_are_cut_with_a_note():
    s = SmemAllocator()
    for i in range(MAX_TABLE_ROWS + 50):
        s.add(SmemAllocation(f"r{i}", 64, 16))
    s.compute_layout()
    ex = explore(s)
    assert "and 50 more regions" in ex.table.value
    assert len(data_trace(ex.smem_widget).base) == MAX_TABLE_ROWS + 50


def test_the_banks_tab_is_drawn_when_it_opens():
    def with_access(stages=2):
        s, t = build_gemm_layout(stages)
        s.add(
            SmemAllocation(
                "epi_c",
                dtype="bf16",
                count=4096,
                access={"instruction": "stmatrix.x4", "layout": "(128,32):(32,1)", "warps": (8, 1)},
            )
        )
        return s, t

    ex = explore(with_access, stages=(1, 4))
    assert ex.details.get_title(1) == "Banks" and ex.banks.plan is None  # hidden: not drawn yet
    ex.controls["stages"].value = 3
    ex.show_tab("Banks")
    assert ex.banks.plan.regions == ex.smem_plan.regions and ex.banks.region.value == "epi_c"
    assert "epi_c: stmatrix.x4: 16 wavefronts (ideal 4)" in ex.bank_widget.value
    ex.show_banks("epi_c", swizzle="64B")
    assert "epi_c: stmatrix.x4: 4 wavefronts (ideal 4), 0 conflicts" in ex.bank_widget.value


def test_the_banks_tab_of_a_layout_without_accesses_says_how_to_declare_them():
    ex = gemm()
    ex.show_tab("Banks")
    assert "declares no accesses" in ex.banks.message.value
    with pytest.raises(ValueError, match="declares no accesses"):
        ex.show_banks()


def test_export_buttons_write_files_or_say_why(tmp_path, monkeypatch):
    ex = gemm()
    monkeypatch.chdir(tmp_path)
    ex.export_path.value = str(tmp_path / "layout")
    try:
        import smemviz._export  # noqa: F401
    except ImportError:
        ex.export_buttons["json"].click()
        assert "could not be imported" in ex.message.value
        return
    ex.export_buttons["json"].click()
    out = tmp_path / "layout.json"
    assert out.exists() and "Wrote" in ex.message.value
    assert "smemviz.layout-plan" in out.read_text()
    ex.export_path.value = str(tmp_path / "missing-dir" / "x")
    ex.export_buttons["json"].click()
    assert "Could not write" in ex.message.value


def test_updates_carry_only_the_changed_leaf_paths(monkeypatch):
    from smemviz.explorer._sync import changed_paths

    assert changed_paths({"title": {"text": "a", "x": 0}}, {"title": {"text": "b", "x": 0}}) == {"title.text": "b"}
    assert changed_paths(
        {"annotations": [{"text": "a"}, {"text": "c"}]}, {"annotations": [{"text": "a"}, {"text": "d"}]}
    ) == {"annotations[1].text": "d"}
    assert changed_paths({"x": [1, 2], "gone": 1}, {"x": [1, 3]}) == {"x": [1, 3], "gone": None}
    ex = gemm()
    sent = []
    monkeypatch.setattr(ex.smem_widget, "send", sent.append)
    ex.controls["stages"].value = 3
    (message,) = sent
    restyle, relayout = message["style_data"], message["layout_data"]
    json.dumps(message)  # plain JSON: no plotly objects on the wire
    assert "_undefined_" in restyle["base"]  # traces whose bases did not change are left alone
    assert "title.text" in relayout and "title" not in relayout
    assert "xaxis.range" not in relayout  # the capacity span did not change
    assert "base" in restyle


def test_the_width_measured_in_the_browser_is_kept_across_updates():
    ex = gemm()
    assert ex._fitter is not None and EXPLORER_CLASS in ex._dom_classes
    ex._fitter.width = 1208
    assert ex.smem_widget.layout.width == ex.tmem_widget.layout.width == 1200
    ex.controls["stages"].value = 3
    assert ex.smem_widget.layout.width == 1200
    ex._fitter.width = 120  # a collapsed output: left alone
    assert ex.smem_widget.layout.width == 1200


def test_usage_tables_list_every_region_of_both_memories():
    def two_accumulators(stages=2):
        s, _ = build_gemm_layout(stages)
        t = TmemAllocator()
        t.add(TmemAllocation("acc0", 256))
        t.add(TmemAllocation("acc1", 256))
        return s, t

    ex = explore(two_accumulators, stages=(1, 3))
    table = ex.table.value
    assert "TMEM allocations" in table and "acc0" in table and "acc1" in table
    for r in ex.smem_plan.regions:
        assert r.name in table
    assert f"{ex.smem_plan.region('smem_b1').offset:,}" in table


def test_the_maps_are_figure_widgets_drawn_by_the_map_view():
    """Python sees plotly FigureWidgets; the browser gets plotly.js's basic bundle of the version
    the installed plotly ships (a quarter of the full one) and the explorer's map view."""
    import plotly.graph_objects as go
    from plotly.offline import get_plotlyjs_version

    ex = gemm()
    for fig in (ex.smem_widget, ex.tmem_widget):
        assert isinstance(fig, go.FigureWidget)
        assert type(fig).__name__ == "MapFigureWidget"
    module = ex.smem_widget._esm
    shipped = ex.smem_widget._smemviz_plotly_js
    assert f"plotly.js (basic - minified) v{get_plotlyjs_version()}" in shipped[:200]  # beside the view
    assert ex.smem_widget._smemviz_plotly_version == f"{get_plotlyjs_version()}-basic"
    assert len(shipped) < 1_300_000  # not the full bundle (4.8 MB)
    assert shipped[:200] not in module and len(module) < 100_000  # small: anywidget gives a module 2 s to load
    assert "export default" in module and "_py2js_update" in module


def test_another_plotly_gets_its_own_full_bundle(monkeypatch):
    """Where the installed plotly ships another plotly.js than the vendored basic bundle, the maps
    take plotly's own (full) bundle rather than mix versions."""
    import plotly

    from smemviz.explorer import _map_widget

    monkeypatch.setattr(_map_widget, "basic_bundle_version", lambda: "0.0.1")
    _map_widget.map_plotly_js.cache_clear()
    try:
        source, name = _map_widget.map_plotly_js()
        with open(plotly.__path__[0] + "/package_data/plotly.min.js", encoding="utf-8") as f:
            assert source == f.read()
        assert name.endswith(f"-full-{plotly.__version__}")
    finally:
        _map_widget.map_plotly_js.cache_clear()


def test_live_maps_show_a_fixed_key_instead_of_plotly_legends():
    """plotly's legend is redrawn on every update; the explorer's maps carry an
    HTML key instead, while the exported figures keep their legends."""
    ex = gemm()
    for fig in (ex.smem_widget, ex.tmem_widget):
        assert fig.layout.showlegend is False
    ex.controls["stages"].value = 3
    assert ex.smem_widget.layout.showlegend is False  # updates keep it off
    keys = [w.value for box in (ex._smem_box, ex._tmem_box) for w in box.children if isinstance(w, ipywidgets.HTML)]
    assert "smemviz-key-smem" in keys[0] and "capacity" in keys[0]
    assert "pipeline mbarriers" not in keys[0]  # this layout has none: the key lists what the map draws
    assert "smemviz-key-tmem" in keys[1] and "tcgen05.alloc" in keys[1]
    assert smemviz.smem_figure(ex.smem_plan).layout.showlegend is not False


def test_live_figures_also_drive_a_plain_figure_widget(monkeypatch):
    """With plotly's own FigureWidget (the browser benchmark's baseline) the
    updates go through plotly_update and still land in the figure."""
    import plotly.graph_objects as go

    from smemviz.explorer import _map_widget

    monkeypatch.setattr(_map_widget, "map_widget_class", lambda: go.FigureWidget)
    ex = gemm()
    assert isinstance(ex.smem_widget, go.FigureWidget) and not hasattr(ex.smem_widget, "update_browser_first")
    ex.controls["stages"].value = 3
    assert len(data_trace(ex.smem_widget).base) == 6 and f"{ex.smem_plan.total:,} B" in ex.smem_widget.layout.title.text


def build_for_arch(stages: int = 2, arch: str = "sm_90a"):
    s = SmemAllocator(arch=arch)
    s.add(SmemAllocation("a", 1024 * stages, 128))
    return s


def test_a_plan_is_judged_against_its_own_arch_until_one_is_picked():
    ex = explore(build_for_arch, stages=(1, 4), arch=["sm_100a", "sm_90a", "sm_80"])
    assert "arch" in ex.controls  # the builder takes arch: the list is its control
    assert ex.arch == "sm_90" and "on sm_90 " in ex.smem_widget.layout.title.text
    ex.controls["arch"].value = "sm_80"
    assert ex.arch == "sm_80" and "on sm_80 " in ex.smem_widget.layout.title.text
    ex.arch_selector.value = "sm_120"  # picked by hand: plans no longer move it
    ex.controls["arch"].value = "sm_100a"
    assert ex.smem_plan.arch == "sm_100" and ex.arch == "sm_120"
    assert "on sm_120 " in ex.smem_widget.layout.title.text
    fixed_arch = explore(build_for_arch, arch="sm_80")
    assert fixed_arch.values["arch"] == "sm_80" and fixed_arch.arch == "sm_80"


def test_a_narrow_explorer_shortens_titles_and_keeps_table_cells_whole():
    ex = gemm()
    long_title = ex.smem_widget.layout.title.text
    ex._on_width({"new": 460})  # two explorers side by side
    short = ex.smem_widget.layout.title.text
    assert ex.smem_widget.layout.width == 460 - 8
    assert len(short) < len(long_title) and short.startswith("SMEM ") and "sm_100" in short
    assert len(short) * 7 < 460 - 40  # fits at ~7 px a character
    assert len(ex.smem_widget.layout.annotations[0].text) * 7 < 200
    assert ex.tmem_widget.layout.title.text.startswith("TMEM ")
    ex.controls["stages"].value = 3  # updates keep the short forms
    assert ex.smem_widget.layout.title.text.startswith("SMEM ") and "of" in ex.smem_widget.layout.title.text
    assert len(ex.smem_widget.layout.title.text) < len(long_title)
    ex._on_width({"new": 1200})
    assert ex.smem_widget.layout.title.text.startswith("SMEM layout: ")
    # a real table, numbers never broken over two lines
    assert "<table class='smemviz-utable'" in ex.table.value and "table-layout:fixed" in ex.table.value
    css = ex.children[0].value  # the tables' stylesheet, on the page once
    assert "smemviz-utable" in css and "white-space:nowrap" in css and "<style" not in ex.table.value
    assert "<td class=n>16,384<td" in ex.table.value  # one cell per number (closing tags are optional)


def build_for_sm100(stages: int = 2):
    s = SmemAllocator(arch="sm_100a")  # refuses over-capacity layouts outside the explorer
    for i in range(stages):
        s.add(SmemAllocation(f"a_stage{i}", 32768, 1024))
    s.compute_layout()
    return s


def test_a_builder_whose_allocator_refuses_over_capacity_is_still_drawn_as_asked():
    ex = explore(build_for_sm100, stages=(1, 12))
    ex.controls["stages"].value = 9  # 288 KiB
    assert ex.smem_plan.total == 9 * 32768 and len(data_trace(ex.smem_widget).base) == 9
    assert "exceeds the sm_100 per-block limit" in ex.message.value and "stages=2" in ex.message.value
    with pytest.raises(smemviz.CapacityError):  # outside the explorer the check is back
        build_for_sm100(9)


def build_that_fails(n: int = 1):
    s = SmemAllocator()
    s.add(SmemAllocation("a", 1024 * n, 3))  # alignment 3: refused inside smemviz
    return s


def test_a_builder_error_points_at_the_builders_line():
    ex = explore(build_that_fails, n=(1, 2))
    assert "at build_that_fails, line" in ex.message.value
    import inspect

    line = inspect.getsourcelines(build_that_fails)[1] + 2
    assert f"line {line})" in ex.message.value


def test_tried_configurations_are_listed_and_reset_goes_back():
    ex = gemm()
    ex.controls["stages"].value = 3
    ex.controls["tile_n"].value = 256
    ex.controls["stages"].value = 7  # the builder raises
    ex.controls["stages"].value = 8  # over capacity
    tried = [(a.arguments["stages"], a.arguments["tile_n"], a.fits) for a in ex.history]
    assert tried == [(2, 128, True), (3, 128, True), (3, 256, True), (7, 256, None), (8, 256, False)]
    assert ex.history[1].smem_total == 3 * 32768 + 32768 and ex.history[1].arch == "sm_100"
    ex.show_tab("Tried")
    html = ex.history_table.value
    assert html.index("<td>8</td>") < html.index("<td>2</td>")  # newest first
    assert ">over (sm_100)<" in html and ">error (sm_100)<" in html and "+32,768" in html
    ex.reset()
    assert ex.values == {"stages": 2, "tile_n": 128, "dtype": "bf16"} and ex.message.value == ""
    assert len(ex.history) == 6 and ex.history[-1] == ex.history[0]  # one rebuild for the whole reset
    assert "reset" in [getattr(w, "description", "") for w in ex.control_bar.children]
    fixed = explore(_computed())  # a fixed layout: nothing to reset, nothing tried
    assert "reset" not in [getattr(w, "description", "") for w in fixed.control_bar.children]
    assert fixed.history == [] and fixed.tab_names == ("Usage table", "Banks")


def _computed():
    s, _ = build_gemm_layout()
    s.compute_layout()
    return s


def test_html_export_is_offline_or_small_as_chosen_and_the_tooltip_says_which(tmp_path):
    pytest.importorskip("plotly")
    ex = gemm()
    ex.export_path.value = str(tmp_path / "big")
    assert ex.export_offline.value and "offline" in ex.export_buttons["html"].tooltip
    ex.export_buttons["html"].click()
    big = (tmp_path / "big.html").read_text()
    ex.export_offline.value = False
    assert "CDN" in ex.export_buttons["html"].tooltip and "network" in ex.export_buttons["html"].tooltip
    ex.export_path.value = str(tmp_path / "small")
    ex.export_buttons["html"].click()
    small = (tmp_path / "small.html").read_text()
    assert len(small) < len(big) / 10 and len(big) > 3_000_000
    import re

    src = re.search(r'<script[^>]*\bsrc="([^"]+)"', small).group(1)
    assert (
        src.startswith("https://cdn.plot.ly/") and src in small.split("Content-Security-Policy", 1)[1].split(">", 1)[0]
    )
    assert "https://" not in big.split("Content-Security-Policy", 1)[1].split(">", 1)[0]  # offline page: no network


def test_tabs_are_addressed_by_name_whatever_tabs_an_explorer_has():
    ex = gemm()
    assert ex.tab_names == ("Usage table", "Banks", "Tried") and ex.open_tab == "Usage table"
    ex.show_tab("Tried")
    assert ex.open_tab == "Tried" and ex.details.get_title(ex.details.selected_index) == "Tried"
    assert "<td>128</td>" in ex.history_table.value  # drawn when opened
    fixed = explore(_computed())
    with pytest.raises(ValueError, match="no 'Tried' tab here"):
        fixed.show_tab("Tried")
    fixed.show_tab("Banks")
    assert fixed.open_tab == "Banks" and fixed.details.selected_index == 1


def test_plan_is_the_layout_on_screen_and_smem_plan_still_works():
    ex = gemm()
    assert ex.plan.regions == ex.smem_plan.regions and ex.plan.arch == ex.arch
    ex.controls["stages"].value = 3
    assert ex.plan.total == ex.smem_plan.total == 3 * 32768 + 32768
    ex.arch_selector.value = "sm_90"
    assert ex.plan.arch == "sm_90"


def test_one_lint_per_control_change(monkeypatch):
    """The explorer analyses the layout once per change (ExplorerState.analysed);
    the byte map, the summary and the Banks tab read that analysis."""
    import smemviz.analysis._analysed
    import smemviz.analysis._lint

    calls = {"lint": 0}
    lint, with_accesses = smemviz.analysis._lint.lint, smemviz.analysis._analysed.lint_with_accesses

    def counting(original):
        def counted(*args, **kwargs):
            calls["lint"] += 1
            return original(*args, **kwargs)

        return counted

    monkeypatch.setattr(smemviz.analysis, "lint", counting(lint))
    monkeypatch.setattr(smemviz.analysis._lint, "lint", counting(lint))  # however a caller reaches it
    monkeypatch.setattr(smemviz.analysis._analysed, "lint_with_accesses", counting(with_accesses))
    ex = explore(lambda stages=2: build_gemm_layout(stages)[0], stages=(1, 8))  # SMEM only: one plan
    ex.show_tab("Banks")
    calls.update(lint=0)
    ex.controls["stages"].value = 3
    assert calls["lint"] == 1
    total = f"{3 * 32768 + 32768:,} B"
    assert total in ex.smem_widget.layout.title.text and total in ex.summary.value  # both drawn from the change
    ex.show_tab("Usage table")
    ex.show_tab("Tried")
    assert calls["lint"] == 1  # opening tabs analyses nothing again
    ex.controls["stages"].value = 4
    assert calls["lint"] == 2


def test_a_run_click_runs_the_controls_on_screen_not_those_the_kernel_has_yet():
    """The browser holds a control's second change back until the kernel has
    taken the first, while a click goes at once: the click carries the values
    on screen (run_button.js) and they are applied before the run."""
    runs = []

    class Measured:
        def __init__(self, controls):
            self.controls = controls

        def row(self):
            return {"label": f"s{self.controls['stages']} n{self.controls['tile_n']}", "ran": True, "tflops": 1.0}

        def summary(self):
            return self.row()["label"]

    def runner(**controls):
        runs.append(dict(controls))
        return Measured(controls)

    ex = explore(build_gemm_layout, run=runner, stages=(1, 8), tile_n=[64, 128, 256])
    button = ex.run_panel.button
    assert [c[0] for c in button.controls] == ["stages", "tile_n"]
    assert button.controls[1][2] == "index" and button.controls[0][2] == "value"
    ex.controls["stages"].value = 3  # what the kernel has; the page shows stages 5 and tile_n 256
    button._on_message(button, {"event": "click", "state": {"stages": 5, "tile_n": 2}}, [])
    assert runs[-1] == {"stages": 5, "tile_n": 256}
    assert ex.values == {"stages": 5, "tile_n": 256}
    assert ex.smem_plan.total == 5 * (16384 + 32768) + 65536  # the maps follow before the run
    assert ex.history[-1].arguments == runs[-1]
    button.click()  # a click from Python: the controls as they are
    assert runs[-1] == {"stages": 5, "tile_n": 256} and len(ex.run_panel.history) == 2
