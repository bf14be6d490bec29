"""Exclusive arms of one ``if``: under ``smem_merge_branch_allocs=True`` the compiler overlays
their SMEM, and each arm's TMEM is taken only when it runs; the plan says so with an alias
group whose phases are the arms, instead of showing overlaps nobody declared."""

from __future__ import annotations

import pytest

pytest.importorskip("cutlass")
pytestmark = pytest.mark.cutlass

from smemviz.kernel._compile import compile_host  # noqa: E402
from smemviz.layout import plan_from_json  # noqa: E402
from smemviz.sources.capture import capture  # noqa: E402

from . import kernels  # noqa: E402
from .overlaps import undeclared_overlaps  # noqa: E402
from .ptx_stores import constant_stores  # noqa: E402


def _capture(host, name, arch="sm_90a"):
    with capture(arch=arch) as cap:
        compiled = compile_host(name, host, (kernels.fake_out(128),), arch)
    (one,) = cap.kernels.values()
    return one, compiled


def test_merged_arms_are_one_alias_group_whose_phases_are_the_arms():
    one, compiled = _capture(kernels.arms_merged_host, "capture_arms_merged")
    plan = one.plan
    stores = constant_stores(compiled.ptx)
    for name, mark in kernels.ARM_MARKS.items():  # the offsets are the compiler's own
        assert stores.get(mark) == {plan.region(name).offset}, name
    assert plan.region("tile").offset == plan.region("tile#2").offset  # the compiler overlaid the arms
    assert plan.total == compiled.dynamic_smem_bytes
    (group,) = plan.groups
    assert {r.name: r.phase for r in plan.regions if r.group == 0} == {"tile": 0, "bars": 0, "tile#2": 1, "bars#2": 1}
    assert plan.region("common").group is None
    assert plan.region("bars").kind == plan.region("bars#2").kind == "barrier"  # the same name in either arm
    assert group.offset == plan.region("tile").offset and group.end == plan.region("bars#2").end
    assert group.phase_sizes == (plan.region("bars").end - group.offset, plan.region("bars#2").end - group.offset)
    assert undeclared_overlaps(plan) == []
    assert plan_from_json(plan.to_json()) == plan  # the reader refuses regions that overlap undeclared
    (why,) = one.branches
    assert why.startswith("SMEM alias group 1: exclusive arms of one if")
    assert "smem_merge_branch_allocs=True" in why and "safe by construction" in why


def test_arms_the_compiler_keeps_apart_stay_standalone():
    one, compiled = _capture(kernels.arms_apart_host, "capture_arms_apart")
    plan = one.plan
    assert plan.groups == () and one.branches == ()
    assert plan.region("tile").offset != plan.region("tile#2").offset
    assert undeclared_overlaps(plan) == []
    assert plan.total == compiled.dynamic_smem_bytes


def test_an_if_inside_an_arm_is_a_group_inside_that_arms_phase():
    one, compiled = _capture(kernels.nested_arms_host, "capture_arms_nested")
    plan = one.plan
    assert len(plan.groups) == 2
    outer, inner = plan.groups
    assert outer.offset <= inner.offset and inner.end <= outer.end
    inner_names = {r.name for r in plan.regions if r.group == 1}
    assert len(inner_names) == 4  # tile and bars of each inner arm
    assert undeclared_overlaps(plan) == []
    assert plan_from_json(plan.to_json()) == plan
    assert plan.total == compiled.dynamic_smem_bytes
    assert len(one.branches) == 2


def test_tmem_taken_in_exclusive_arms_is_an_alias_group():
    one, _ = _capture(kernels.tmem_arms_host(), "capture_arms_tmem", "sm_100a")
    tmem = one.tmem_plan
    assert tmem is not None
    assert [(r.name, r.offset, r.size, r.group, r.phase) for r in tmem.regions] == [
        ("tmem", 0, 256, 0, 0),
        ("tmem#2", 0, 128, 0, 1),
    ]
    assert tmem.groups[0].phase_sizes == (256, 128)
    assert undeclared_overlaps(tmem) == []
    assert any(line.startswith("TMEM alias group 1:") for line in one.branches)
