"""The plan's analysis methods of the previous release still work for one release, warn,
and give what the functions that replace them give."""

from __future__ import annotations

import pytest

from smemviz import SmemAllocation, SmemAllocator
from smemviz.analysis import diff, lint, occupancy, text_report
from smemviz.layout import plan_from_dict, plan_from_json


def _plan(epi: int = 4096):
    a = SmemAllocator(arch="sm_90a")
    a.add(SmemAllocation("a_stages", 64 * 1024, alignment=1024))
    a.add(SmemAllocation("epi", epi))
    a.compute_layout()
    return a.plan


@pytest.mark.parametrize(
    ("call", "replacement"),
    [
        (lambda p: p.lint(), lambda p: lint(p)),
        (lambda p: p.lint("sm_100a", ignore=("capacity",)), lambda p: lint(p, "sm_100a", ignore=("capacity",))),
        (lambda p: p.occupancy(threads=384), lambda p: occupancy(p, threads=384)),
        (lambda p: p.diff(_plan(8192)), lambda p: diff(p, _plan(8192))),
        (lambda p: p.report(), lambda p: text_report(p)),
        (lambda p: type(p).from_dict(p.to_dict()), lambda p: plan_from_dict(p.to_dict())),
        (lambda p: type(p).from_json(p.to_json()), lambda p: plan_from_json(p.to_json())),
    ],
    ids=["lint", "lint-options", "occupancy", "diff", "report", "from_dict", "from_json"],
)
def test_a_deprecated_plan_method_warns_and_agrees(call, replacement):
    plan = _plan()
    with pytest.warns(DeprecationWarning, match=r"LayoutPlan\.\w+.* is deprecated .* use smemviz\."):
        old = call(plan)
    assert old == replacement(plan)


def test_the_warning_points_at_the_caller():
    with pytest.warns(DeprecationWarning) as record:
        _plan().lint()
    assert record[0].filename == __file__


def test_blocks_and_group_label_warn():
    plan = _plan()
    with pytest.warns(DeprecationWarning, match="blocks"):
        assert plan.blocks() == [("a_stages", 0, 64 * 1024), ("epi", 64 * 1024, 4096)]
    with pytest.raises(IndexError), pytest.warns(DeprecationWarning, match="group_label"):
        plan.group_label(0)


def test_the_plan_face_is_small():
    """About 25 public members beside the data fields (33 before); the deprecated ones aside."""
    from dataclasses import fields

    from smemviz import LayoutPlan

    deprecated = {"lint", "occupancy", "diff", "report", "from_dict", "from_json", "blocks", "group_label"}
    data = {f.name for f in fields(LayoutPlan)}
    members = {n for n in dir(LayoutPlan) if not n.startswith("_")} - data - deprecated
    assert len(members) <= 25, sorted(members)
