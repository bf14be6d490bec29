"""Invariants of every computed layout, over random programs of allocator calls."""

from __future__ import annotations

from hypothesis import given

import smemviz
from smemviz import LayoutPlan, hardware
from smemviz.layout import plan_from_json

from ..strategies import replay, smem_programs, smemviz_alloc


def computed_plan(ops) -> tuple[smemviz.SmemAllocator, LayoutPlan]:
    s = smemviz.SmemAllocator()
    replay(ops, s, smemviz_alloc)
    s.compute_layout()
    return s, s.plan


def coexist(a, b) -> bool:
    """Two regions live at the same time unless they are different phases of one group."""
    return not (a.group is not None and a.group == b.group and a.phase != b.phase)


@given(smem_programs())
def test_coexisting_regions_never_overlap(ops):
    _, plan = computed_plan(ops)
    regions = plan.regions
    for i, a in enumerate(regions):
        for b in regions[i + 1 :]:
            if coexist(a, b):
                assert a.end <= b.offset or b.end <= a.offset, (a, b)


@given(smem_programs())
def test_offsets_honour_alignment_and_regions_fit(ops):
    s, plan = computed_plan(ops)
    for r in plan.regions:
        assert r.offset % r.alignment == 0, r
        assert r.padding_before >= 0, r
        if r.kind == "barrier":
            assert r.offset >= plan.data_total
            assert r.end <= plan.unified_bytes
        else:
            assert r.end <= plan.data_total
    assert plan.base_alignment >= max((r.alignment for r in plan.data_regions), default=1)
    assert plan.unified_bytes == -(-plan.data_total // 8) * 8 + plan.barrier_bytes
    assert plan.barrier_bytes == s.barrier_smem_bytes


@given(smem_programs())
def test_phases_start_at_their_group_base(ops):
    _, plan = computed_plan(ops)
    for g in plan.groups:
        assert g.offset % g.alignment == 0
        for p in range(len(g.phase_sizes)):
            members = plan.phase_regions(g.index, p)
            assert members, (g, p)
            first = min(members, key=lambda r: r.index)
            assert first.offset == g.offset
            assert max(r.end for r in members) == g.offset + g.phase_sizes[p]
            assert all(g.offset <= r.offset and r.end <= g.end for r in members)
        assert g.size == max(g.phase_sizes)


@given(smem_programs())
def test_total_is_at_least_the_peak_live_bound(ops):
    _, plan = computed_plan(ops)
    assert plan.data_total >= plan.peak_live
    assert plan.alias_savings >= 0
    assert 0 <= plan.padding <= plan.unified_bytes


@given(smem_programs())
def test_plan_json_round_trip(ops):
    _, plan = computed_plan(ops)
    again = plan_from_json(plan.to_json())
    assert again == plan
    assert again.to_dict() == plan.to_dict()


@given(smem_programs())
def test_plan_is_what_the_allocations_say(ops):
    s, plan = computed_plan(ops)
    declared = s.allocations
    assert len(plan.data_regions) == len(declared)
    offsets = sorted((a.name, a.offset, a.size_bytes) for a in declared)
    assert offsets == sorted((r.name, r.offset, r.size) for r in plan.data_regions)
    capacity = plan.capacity("sm_90a")
    assert capacity.fits == (plan.unified_bytes <= hardware.ARCHS["sm_90"].smem_per_block)
