"""Per-stage view: an allocation's shape (stages first) is kept in the plan and drawn as stage boundaries."""

from __future__ import annotations

import pytest

from smemviz import DeclarationError, SmemAllocation, SmemAllocator
from smemviz.layout import plan_from_dict, plan_from_json


def _plan():
    s = SmemAllocator(arch="sm_90a")
    s.add(SmemAllocation("a_stages", dtype="bf16", shape=(4, 128, 64), alignment=1024, swizzle="128B"))
    s.add(SmemAllocation("b_stages", dtype="bf16", stages=3, count=3 * 64 * 64, alignment=1024))
    s.add(SmemAllocation("epi", 4096))
    s.compute_layout()
    return s.plan


def test_shape_gives_count_and_stages_and_travels_in_the_plan():
    plan = _plan()
    a = plan.region("a_stages")
    assert (a.shape, a.stages, a.count, a.size) == ((4, 128, 64), 4, 4 * 128 * 64, 4 * 128 * 64 * 2)
    assert plan.region("epi").shape is None
    again = plan_from_json(plan.to_json())
    assert again == plan and again.region("a_stages").shape == (4, 128, 64)
    assert "shape" not in plan.region("epi").to_dict()  # written only when set


@pytest.mark.parametrize(
    "kwargs, words",
    [
        ({"shape": (4, 128, 64)}, "needs a dtype"),
        ({"dtype": "bf16", "shape": (4, 0)}, "int > 0"),
        ({"dtype": "bf16", "shape": ()}, "non-empty"),
        ({"dtype": "bf16", "shape": (4, 8), "count": 5}, "disagrees with shape"),
        ({"dtype": "bf16", "shape": (4, 8), "stages": 2}, "first extent"),
    ],
)
def test_bad_shapes_are_refused_naming_the_allocation(kwargs, words):
    with pytest.raises((DeclarationError, TypeError), match=words) as info:
        SmemAllocation("tile", **kwargs)
    assert "'tile'" in str(info.value)


def test_a_tampered_shape_is_refused_when_read_back():
    doc = _plan().to_dict()
    doc["regions"][0]["stages"] = 3
    with pytest.raises(ValueError, match="first extent"):
        plan_from_dict(doc)


def test_the_map_draws_a_boundary_per_stage_and_hover_names_the_stage():
    pytest.importorskip("plotly")
    from smemviz import smem_figure

    plan = _plan()
    fig = smem_figure(plan)
    marks = next(t for t in fig.data if t.meta == "stages")
    a, b = plan.region("a_stages"), plan.region("b_stages")
    per_a, per_b = a.size // 4, b.size // 3
    expected = [a.offset + k * per_a for k in (1, 2, 3)] + [b.offset + k * per_b for k in (1, 2)]
    # two short ticks a boundary, above and below the label in the middle of the bar
    assert sorted(marks.x) == sorted(expected * 2)
    assert any("stage 2 of 4 starts at" in h for h in marks.hovertext)
    assert any("stage 3 of 3" in h for h in marks.hovertext)
    data = next(t for t in fig.data if t.meta == "data")
    hover_a = next(h for h in data.hovertext if h.startswith("<b>a_stages</b>"))
    assert "as 4 × 128 × 64" in hover_a and "4 stages of 16,384 B" in hover_a


def test_the_live_map_updates_its_stage_marks():
    pytest.importorskip("ipywidgets")
    import smemviz

    def build(stages=2):
        s = SmemAllocator()
        s.add(SmemAllocation("a", dtype="f16", shape=(stages, 64, 64), alignment=1024))
        return s

    ex = smemviz.explore(build, stages=(2, 6))
    marks = next(t for t in ex.smem_widget.data if t.meta == "stages")
    assert len(set(marks.x)) == 1  # one boundary, ticked above and below the label
    ex.controls["stages"].value = 5
    marks = next(t for t in ex.smem_widget.data if t.meta == "stages")
    assert len(set(marks.x)) == 4
