"""Lint findings are marked on the maps, on the regions they name."""

from __future__ import annotations

import pytest

from smemviz import SmemAllocation, SmemAllocator, TmemAllocation, TmemAllocator

pytest.importorskip("plotly")

from smemviz import smem_figure, tmem_figure  # noqa: E402
from smemviz.analysis import lint


def _marks(fig):
    return next(t for t in fig.data if t.meta == "findings")


def test_a_broken_rule_is_marked_on_its_region_and_hover_gives_the_fix():
    s = SmemAllocator()
    s.add(SmemAllocation("b_tma", 4096, alignment=1024, tma=True))
    s.add(SmemAllocation("a_swizzled", 3000, alignment=128, swizzle="128B", stages=2))
    s.compute_layout()
    plan = s.plan
    found = lint(plan, "sm_90a")
    assert any(f.rule == "swizzle-stage" for f in found)
    marks = _marks(smem_figure(plan, "sm_90a"))
    a = plan.region("a_swizzled")
    assert list(marks.x) == [a.offset + a.size / 2]
    assert "swizzle-stage" in marks.hovertext[0] and "fix:" in marks.hovertext[0]
    assert marks.marker.color[0] == "#c62828"  # an error


def test_a_clean_layout_has_no_marks_and_capacity_is_left_to_the_capacity_line():
    s = SmemAllocator()
    s.add(SmemAllocation("a", 300 * 1024, alignment=1024))
    s.compute_layout()
    assert any(f.rule == "capacity" for f in lint(s.plan, "sm_90a"))
    assert len(_marks(smem_figure(s.plan, "sm_90a")).x) == 0


def test_layout_wide_findings_mark_no_region():
    t = TmemAllocator()
    t.add(TmemAllocation("acc", 160))
    t.compute_layout()
    rounding = [f for f in lint(t.plan) if f.rule == "tmem-rounding"]
    assert rounding and rounding[0].regions == ()  # the whole allocation, not one region
    assert len(_marks(tmem_figure(t.plan)).x) == 0
