"""The explorer's Lifetimes tab, driven without a browser: move a control,
choose a step, compare layouts, and check what the figures now hold."""

from __future__ import annotations

import re

import pytest

pytest.importorskip("ipywidgets")
pytest.importorskip("plotly")

import smemviz  # noqa: E402
from smemviz import SmemAllocation, SmemAllocator, TmemAllocation, TmemAllocator  # noqa: E402
from smemviz.explorer import explore  # noqa: E402
from smemviz.explorer._lifetimes import AS_BUILT, PROFILE_TRACE, with_lifetimes_of  # noqa: E402
from smemviz.figures._lifetime import LIFETIME_TRACES  # noqa: E402

KIB = 1024
STEPS = ("load", "mma", "epilogue")
CALLS = {"build": 0}


def build(stages: int = 2, lifetimes: bool = True, fail: bool = False):
    """A/B stages live while loading and multiplying, an epilogue tile after
    them, a bias from the MMA on; without lifetimes, the same buffers unshared."""
    CALLS["build"] += 1
    if fail:
        raise RuntimeError("this configuration does not build")
    s = SmemAllocator(arch="sm_90a", steps=STEPS) if lifetimes else SmemAllocator(arch="sm_90a")

    def live(value):
        return {"live": value} if lifetimes else {}

    for i in range(stages):
        s.add(SmemAllocation(f"a{i}", 16 * KIB, 1024), **live(range(0, 2)))
        s.add(SmemAllocation(f"b{i}", 16 * KIB, 1024), **live(range(0, 2)))
    s.add(SmemAllocation("epi", 32 * KIB, 1024), **live("epilogue"))
    s.add(SmemAllocation("bias", 512, 16), **live({"mma", "epilogue"}))
    return s


def explorer(**controls):
    ex = explore(build, stages=(1, 6), lifetimes=True, fail=False, **controls)
    ex.show_tab("Lifetimes")
    return ex


def rectangles(fig) -> dict[str, list[tuple[float, int, int]]]:
    """(x, base, height) of each region's rectangles on the lifetime map, by name."""
    regions = fig.data[0]
    out: dict[str, list[tuple[float, int, int]]] = {}
    names = [re.match(r"<b>(.*?)</b>", h).group(1) for h in regions.hovertext]
    for name, x, base, y in zip(names, regions.x, regions.base, regions.y):
        out.setdefault(name, []).append((x, base, y))
    return out


def step_map_bases(fig) -> list[int]:
    return sorted(next(t for t in fig.data if t.meta == "data").base)


def test_no_lifetimes_no_tab():
    ex = explore(build, stages=(1, 6), lifetimes=False)
    assert ex.lifetimes is None
    assert [ex.details.get_title(i) for i in range(len(ex.details.children))] == list(ex.tab_names)
    assert ex.tab_names == ("Usage table", "Banks", "Tried")
    plain = SmemAllocator()
    plain.add(SmemAllocation("x", 1024))
    plain.compute_layout()
    ex = explore(plain)
    assert ex.lifetimes is None and ex.tab_names == ("Usage table", "Banks")


def test_the_tab_shows_the_lifetime_map_of_the_layout_on_screen():
    ex = explorer()
    lv = ex.lifetimes
    assert ex.tab_names[3] == ex.details.get_title(3) == "Lifetimes"
    fig = lv.map_widget
    assert tuple(t.name for t in fig.data) == LIFETIME_TRACES
    assert list(fig.layout.xaxis.ticktext) == list(STEPS)
    plan = ex.smem_plan
    rects = rectangles(fig)
    assert rects["epi"] == [(2, plan.region("epi").offset, 32 * KIB)]
    assert rects["a0"] == [(0.5, plan.region("a0").offset, 16 * KIB)]
    [(x, base, height)] = rects["bias"]  # 512 B, drawn taller so it shows (its hover says so)
    assert (x, base) == (1.5, plan.region("bias").offset) and height > 512
    # the chosen step (the first) is outlined
    outline = fig.layout.shapes[0]
    assert (outline.x0, outline.x1) == (-0.5, 0.5)
    assert list(fig.data[PROFILE_TRACE].y) == list(plan.live_profile)


def test_a_slider_move_redraws_the_open_tab_in_place_with_one_message_per_figure(monkeypatch):
    ex = explorer()
    lv = ex.lifetimes
    fig, step_fig = lv.map_widget, lv.step_widget
    sent = {"map": 0, "step": 0}
    for key, widget in (("map", fig), ("step", step_fig)):
        original = widget.send

        def counting(content, *args, _key=key, _orig=original, **kwargs):
            sent[_key] += 1
            return _orig(content, *args, **kwargs)

        monkeypatch.setattr(widget, "send", counting)
    ex.controls["stages"].value = 4
    assert ex.lifetimes is lv and lv.map_widget is fig and lv.step_widget is step_fig  # updated, not rebuilt
    assert sent == {"map": 1, "step": 1}
    assert "a3" in rectangles(fig) and "10 regions" in fig.layout.title.text
    assert list(fig.data[PROFILE_TRACE].y) == list(ex.smem_plan.live_profile)
    assert len(step_map_bases(step_fig)) == 8  # 4 stages of A and B are live at "load"


def test_a_closed_tab_is_redrawn_when_opened():
    ex = explorer()
    lv = ex.lifetimes
    ex.show_tab("Usage table")
    ex.controls["stages"].value = 3
    assert "a2" not in rectangles(lv.map_widget)  # hidden: left alone
    ex.show_tab("Lifetimes")
    assert "a2" in rectangles(lv.map_widget)


def test_a_step_shows_what_is_live_then_without_solving_again(monkeypatch):
    ex = explorer()
    lv = ex.lifetimes
    plan = ex.smem_plan
    calls = CALLS["build"]
    solved = []
    original = SmemAllocator.compute_layout
    monkeypatch.setattr(
        SmemAllocator, "compute_layout", lambda self, *a, **k: solved.append(1) or original(self, *a, **k)
    )
    for step in STEPS:
        lv.select_step(step)
        live = plan.live_at(step)
        assert step_map_bases(lv.step_widget) == sorted(r.offset for r in live if r.kind == "data")
        assert f"At step '{step}'" in lv.step_widget.layout.title.text
        k = STEPS.index(step)
        assert (lv.map_widget.layout.shapes[0].x0, lv.map_widget.layout.shapes[0].x1) == (k - 0.5, k + 0.5)
    assert {r.name for r in plan.live_at("epilogue")} == {"epi", "bias"}
    assert CALLS["build"] == calls and not solved and ex.smem_plan is plan


def test_the_step_is_kept_by_name_when_the_layout_changes():
    ex = explorer()
    lv = ex.lifetimes
    lv.select_step("epilogue")
    ex.controls["stages"].value = 5
    assert lv.step_control.label == "epilogue"
    assert step_map_bases(lv.step_widget) == sorted(r.offset for r in ex.smem_plan.live_at("epilogue"))


def test_clicking_a_column_of_live_bytes_chooses_that_step():
    ex = explorer()
    lv = ex.lifetimes
    fig = lv.map_widget
    # the message the map view sends for a click on the profile's third bar
    fig._handler_js2py_pointsCallback(
        {
            "new": {
                "event_type": "plotly_click",
                "points": {"trace_indexes": [PROFILE_TRACE], "point_indexes": [2], "xs": [2], "ys": [33280]},
                "device_state": None,
                "selector": None,
            }
        }
    )
    assert lv.step == 2 and lv.step_control.label == "epilogue"
    assert "At step 'epilogue'" in lv.step_widget.layout.title.text


def click(fig, trace: int, point: int) -> None:
    """The message the map view sends for a click on bar ``point`` of ``trace``."""
    bar = fig.data[trace]
    fig._handler_js2py_pointsCallback(
        {
            "new": {
                "event_type": "plotly_click",
                "points": {
                    "trace_indexes": [trace],
                    "point_indexes": [point],
                    "xs": [bar.x[point]],
                    "ys": [bar.y[point]],
                },
                "device_state": None,
                "selector": None,
            }
        }
    )


def test_clicking_a_region_chooses_the_step_of_its_run_nearest_the_chosen_one():
    ex = explorer()
    lv = ex.lifetimes
    fig = lv.map_widget
    names = [re.match(r"<b>(.*?)</b>", h).group(1) for h in fig.data[0].hovertext]
    lv.select_step("epilogue")
    click(fig, 0, names.index("a0"))  # live at load and mma: mma is nearest
    assert lv.step_control.label == "mma"
    click(fig, 0, names.index("bias"))  # live at mma and epilogue: mma stays
    assert lv.step_control.label == "mma"
    click(fig, 0, names.index("epi"))  # only in the epilogue
    assert lv.step_control.label == "epilogue"
    click(fig, 2, 0)  # the first column of live bytes
    assert lv.step_control.label == "load"


def test_compare_layouts_draws_each_layout_of_the_same_declarations():
    ex = explorer()
    lv = ex.lifetimes
    assert lv._totals is None  # nothing solved until asked
    lv.compare_toggle.value = True
    expected = smemviz.experimental.compare_layouts(build(2))
    assert list(lv.layout_choice.options) == [AS_BUILT, *expected]
    bars = lv._totals.widget.data[0]
    assert list(bars.y) == list(expected) and list(bars.x) == [p.data_total for p in expected.values()]
    assert lv._compare_box.layout.display is None
    # the unshared layout drawn over the same steps: every buffer in its own bytes
    lv.layout_choice.value = "no aliasing"
    rects = rectangles(lv.map_widget)
    unshared = expected["no aliasing"]
    assert rects["epi"] == [(2, unshared.region("epi").offset, 32 * KIB)]
    assert "gap" in lv.map_widget.layout.annotations[0].text
    assert list(lv._totals.widget.data[0].marker.line.color)[0] != "rgba(0,0,0,0)"  # the shown one is outlined
    lv.layout_choice.value = "optimal"
    assert rectangles(lv.map_widget)["epi"][0][1] == expected["optimal"].region("epi").offset
    # a new layout from the controls is compared again
    ex.controls["stages"].value = 3
    assert list(lv._totals.widget.data[0].x) == [
        p.data_total for p in smemviz.experimental.compare_layouts(build(3)).values()
    ]
    lv.compare_toggle.value = False
    assert lv.layout_choice.value == AS_BUILT and lv._compare_box.layout.display == "none"
    assert rectangles(lv.map_widget)["epi"][0][1] == ex.smem_plan.region("epi").offset


def test_hand_written_groups_are_compared_over_the_solver_steps():
    s = SmemAllocator(arch="sm_90a")
    a, e = SmemAllocation("a", 64 * KIB, 1024), SmemAllocation("epi", 32 * KIB, 1024)
    s.add(SmemAllocation("flags", 256, 16))
    s.add_alias_group([[a], [e]])
    s.compute_layout(solver="auto")  # the groups read as lifetimes
    ex = explore(s)
    lv = ex.lifetimes
    assert lv is not None
    lv.compare_toggle.value = True
    assert list(lv.layout_choice.options) == [AS_BUILT, "hand-written", "greedy", "optimal"]
    lv.layout_choice.value = "hand-written"
    hand = smemviz.experimental.compare_layouts(s)["hand-written"]
    drawn = with_lifetimes_of(hand, s.plan)
    assert drawn.steps == s.plan.steps and drawn.region("epi").live == s.plan.region("epi").live
    assert rectangles(lv.map_widget)["a"] == [(0, hand.region("a").offset, 64 * KIB)]


def test_a_plan_alone_cannot_be_compared_and_says_why():
    s = build(2)
    s.compute_layout()
    ex = explore(s.plan)
    lv = ex.lifetimes
    lv.compare_toggle.value = True
    assert "needs the declarations" in lv.note.value
    assert list(lv.layout_choice.options) == [AS_BUILT] and lv._totals is None


def test_a_builder_error_keeps_the_last_lifetime_map():
    ex = explorer()
    lv = ex.lifetimes
    ex.controls["stages"].value = 3
    before = rectangles(lv.map_widget)
    ex.controls["fail"].value = True
    assert "RuntimeError" in ex.message.value
    assert ex.lifetimes is lv and rectangles(lv.map_widget) == before
    assert ex.tab_names[3] == ex.details.get_title(3) == "Lifetimes"


def test_the_tab_goes_when_the_layout_has_no_lifetimes_and_comes_back():
    ex = explorer()
    ex.controls["lifetimes"].value = False
    assert ex.tab_names == ("Usage table", "Banks", "Tried") and ex.open_tab == "Usage table"
    ex.controls["lifetimes"].value = True
    assert ex.details.children[3] is ex.lifetimes


def test_a_tmem_layout_with_lifetimes_gets_its_column_map_per_step():
    t = TmemAllocator(steps=("mma", "epilogue"))
    t.add(TmemAllocation("acc", 256), live="mma")
    t.add(TmemAllocation("out", 128), live="epilogue")
    t.compute_layout()
    ex = explore(t)
    lv = ex.lifetimes
    ex.show_tab("Lifetimes")  # a fixed layout: no "Tried" tab before it
    assert "TMEM lifetimes" in lv.map_widget.layout.title.text
    lv.select_step("epilogue")
    data = next(tr for tr in lv.step_widget.data if tr.meta == "data")
    assert list(data.customdata) == [128]  # only "out" is live in the epilogue


def test_show_lifetimes_opens_the_tab_at_a_step_or_says_there_is_none():
    ex = explore(build, stages=(1, 6), lifetimes=True)
    assert ex.open_tab == "Usage table"
    ex.show_lifetimes(step="mma")
    assert ex.open_tab == "Lifetimes" and ex.lifetimes.step == 1
    ex.controls["lifetimes"].value = False
    with pytest.raises(ValueError, match="not solved from lifetimes"):
        ex.show_lifetimes()


def test_the_byte_map_is_sent_first_and_the_open_tab_right_after_it(monkeypatch):
    """Issue 30, point 5: the map the slider moves goes out first; the open Lifetimes tab
    follows it in the same change, and the hidden tab waits until it is opened."""
    ex = explorer()
    order: list[str] = []
    for key, widget in (
        ("byte map", ex.smem_widget),
        ("lifetime map", ex.lifetimes.map_widget),
        ("step map", ex.lifetimes.step_widget),
    ):
        original = widget.send

        def recording(content, *args, _key=key, _orig=original, **kwargs):
            order.append(_key)
            return _orig(content, *args, **kwargs)

        monkeypatch.setattr(widget, "send", recording)
    ex.controls["stages"].value = 3
    assert order == ["byte map", "lifetime map", "step map"]
    order.clear()
    ex.show_tab("Usage table")
    ex.controls["stages"].value = 4
    assert order == ["byte map"]  # the hidden tab waits until it is opened


def test_the_open_tab_draws_once_per_change(monkeypatch):
    """The open Lifetimes tab is drawn with the maps and not again with the text panels
    that follow them: one lifetime map and one step map per control change."""
    from smemviz.explorer import _lifetimes

    ex = explorer()
    made = {"lifetime map": 0, "step map": 0}
    for key, name in (("lifetime map", "marked_lifetime_spec"), ("step map", "step_spec")):
        original = getattr(_lifetimes, name)

        def counted(*args, _key=key, _orig=original, **kwargs):
            made[_key] += 1
            return _orig(*args, **kwargs)

        monkeypatch.setattr(_lifetimes, name, counted)
    for stages in (3, 4, 2):
        ex.controls["stages"].value = stages
    assert made == {"lifetime map": 3, "step map": 3}, made
    assert ex.lifetimes.plan is ex.smem_plan  # and it shows the layout on screen


def test_a_region_has_the_same_colour_on_the_lifetime_map_and_on_its_steps_map():
    ex = explorer()
    lv = ex.lifetimes
    regions = lv.map_widget.data[0]
    on_map = {re.match(r"<b>(.*?)</b>", h).group(1): c for h, c in zip(regions.hovertext, regions.marker.color)}
    plan = ex.smem_plan
    for step in STEPS:
        lv.select_step(step)
        data = next(t for t in lv.step_widget.data if t.meta == "data")
        by_offset = {r.offset: r.name for r in plan.live_at(step) if r.kind == "data"}
        seen = {by_offset[base]: color for base, color in zip(data.base, data.marker.color)}
        assert seen and all(on_map[name] == color for name, color in seen.items()), (step, seen)


def test_colours_stay_when_a_step_shows_only_some_families():
    """``acc`` and ``epi`` pick the same hue and ``acc`` keeps it; alone at its
    step, ``epi`` still wears the shifted hue it has on the lifetime map."""
    s = SmemAllocator(arch="sm_90a", steps=("load", "epilogue"))
    s.add(SmemAllocation("acc", 8 * KIB, 1024), live="load")
    s.add(SmemAllocation("epi", 8 * KIB, 1024), live="epilogue")
    s.compute_layout()
    ex = explore(s)
    ex.show_lifetimes(step="epilogue")
    regions = ex.lifetimes.map_widget.data[0]
    on_map = {re.match(r"<b>(.*?)</b>", h).group(1): c for h, c in zip(regions.hovertext, regions.marker.color)}
    assert on_map["epi"] != smemviz.figures.color_for("epi")  # shifted: the case this test is about
    data = next(t for t in ex.lifetimes.step_widget.data if t.meta == "data")
    assert list(data.marker.color) == [on_map["epi"]]


def test_the_comparison_is_solved_once_per_set_of_declarations(monkeypatch):
    from smemviz.explorer import _lifetimes

    calls = []
    monkeypatch.setattr(
        _lifetimes, "compare_layouts", lambda a: calls.append(a) or smemviz.experimental.compare_layouts(a)
    )
    ex = explorer()
    lv = ex.lifetimes
    lv.compare_toggle.value = True
    lv.select_step("mma")
    ex.show_tab("Usage table")
    ex.show_tab("Lifetimes")
    assert len(calls) == 1
    ex.controls["stages"].value = 3  # the builder's new allocator
    assert len(calls) == 2
    lv.compare_toggle.value = False
    ex.controls["stages"].value = 4
    assert len(calls) == 2  # not shown: not solved
    # an allocator explored as it is: another arch redraws, the declarations stay
    s = build(2)
    s.compute_layout()
    ex = explore(s)
    ex.show_lifetimes()
    ex.lifetimes.compare_toggle.value = True
    ex.arch_selector.value = "sm_100"
    assert len(calls) == 3
    assert "sm_100" in ex.lifetimes.map_widget.layout.annotations[1].text


def test_the_tab_exports_the_lifetime_map_it_shows(tmp_path):
    pytest.importorskip("smemviz._export")
    import json

    ex = explorer()
    view = ex.lifetimes
    assert view.export_path.value == "smemviz-lifetimes"
    view.export_path.value = str(tmp_path / "life")
    view.export_buttons["json"].click()
    data = json.loads((tmp_path / "life.json").read_text())
    assert data["steps"] == list(STEPS) and "Wrote" in view.note.value
    view.export_buttons["html"].click()
    page = (tmp_path / "life.html").read_text()
    # the lifetime map's traces, not the byte map's
    assert all(f'"name":"{name}"' in page for name in LIFETIME_TRACES)
    view.export_path.value = str(tmp_path / "missing" / "x")
    view.export_buttons["json"].click()
    assert "Could not write" in view.note.value


def both_memories(tmem_lifetimes: bool = True):
    s = build(stages=2)
    t = TmemAllocator(steps=("mma", "epilogue")) if tmem_lifetimes else TmemAllocator()
    t.add(TmemAllocation("acc", 256), **({"live": "mma"} if tmem_lifetimes else {}))
    t.add(TmemAllocation("out", 128), **({"live": "epilogue"} if tmem_lifetimes else {}))
    return s, t


def test_with_lifetimes_in_both_memories_the_tab_offers_each():
    ex = explore(both_memories, tmem_lifetimes=True)
    ex.show_lifetimes()
    lv = ex.lifetimes
    assert lv.memory_choice.layout.display is None  # shown: both were solved from lifetimes
    assert lv.plan.memory == "smem" and "SMEM lifetimes" in lv.map_widget.layout.title.text
    lv.memory_choice.value = "tmem"
    assert lv.plan.memory == "tmem" and "TMEM lifetimes" in lv.map_widget.layout.title.text
    assert [o[0] for o in lv.step_control.options] == ["mma", "epilogue"]
    lv.select_step("epilogue")
    data = next(tr for tr in lv.step_widget.data if tr.meta == "data")
    assert list(data.customdata) == [128]
    ex.controls["tmem_lifetimes"].value = False  # TMEM without lifetimes: back to SMEM, no choice
    assert lv.plan.memory == "smem" and lv.memory_choice.layout.display == "none"
