"""smemviz against CUTLASS's own task_scheduling.memory allocators (the oracle):
same declarations, same offsets, totals and barrier bytes."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

import smemviz

from ..strategies import cutlass_alloc, replay, smem_programs, smemviz_alloc, tmem_programs

memory = pytest.importorskip("cutlass.experimental.task_scheduling.memory")
pytestmark = pytest.mark.cutlass


@given(ops=smem_programs(), use_names=st.booleans())
def test_smem_layout_matches_cutlass(ops, use_names):
    ours, theirs = smemviz.SmemAllocator(), memory.SmemAllocator()
    pool_ours = replay(ops, ours, lambda s: smemviz_alloc(s, use_names))
    pool_theirs = replay(ops, theirs, cutlass_alloc)
    ours.compute_layout()
    theirs.compute_layout()

    assert [a.size_bytes for a in pool_ours] == [a.size_bytes for a in pool_theirs]
    assert [a.offset for a in pool_ours] == [a.offset for a in pool_theirs]
    assert ours.total == theirs.total
    assert ours.total_smem_bytes == theirs.total_smem_bytes
    assert ours.barrier_smem_bytes == theirs.barrier_smem_bytes
    assert (ours.tmem_ptr_alloc is None) == (theirs.tmem_ptr_alloc is None)

    # reading CUTLASS's computed allocator gives the very same plan
    from_theirs = smemviz.plan_from_cutlass(theirs)
    assert from_theirs.source == "cutlass"
    assert from_theirs.regions == ours.plan.regions
    assert from_theirs.groups == ours.plan.groups
    assert from_theirs.unified_bytes == ours.plan.unified_bytes


@given(prog=tmem_programs())
def test_tmem_layout_matches_cutlass(prog):
    standalone, groups = prog
    ours, theirs = smemviz.TmemAllocator(), memory.TmemAllocator()
    mine, refs = [], []
    for k, cols in enumerate(standalone):
        mine.append(ours.add(smemviz.TmemAllocation(f"t{k}", cols)))
        refs.append(theirs.add(memory.TmemAllocation(f"t{k}", cols)))
    for g, group in enumerate(groups):
        p_ours, p_theirs = [], []
        for p, phase in enumerate(group):
            p_ours.append([smemviz.TmemAllocation(f"g{g}p{p}m{m}", c) for m, c in enumerate(phase)])
            p_theirs.append([memory.TmemAllocation(f"g{g}p{p}m{m}", c) for m, c in enumerate(phase)])
            mine += p_ours[-1]
            refs += p_theirs[-1]
        ours.add_alias_group(p_ours)
        theirs.add_alias_group(p_theirs)
    theirs.compute_layout()
    if theirs.total_tmem_columns > smemviz.hardware.TMEM_COLUMNS:
        with pytest.raises(smemviz.CapacityError, match="exceeds the 512 columns"):
            ours.compute_layout()
        assert all(a.offset == 0 for a in mine)  # refused: nothing assigned
        return
    ours.compute_layout()
    assert [a.offset for a in mine] == [a.offset for a in refs]
    assert ours.total_tmem_columns == theirs.total_tmem_columns
    assert smemviz.plan_from_cutlass(theirs).regions == ours.plan.regions


def test_fp4_is_sized_exactly_where_cutlass_gives_zero():
    import cutlass

    theirs = memory.SmemAllocation("sf", dtype=cutlass.Float4E2M1FN, count=4096)
    ours = smemviz.SmemAllocation("sf", dtype=cutlass.Float4E2M1FN, count=4096)
    assert theirs.size_bytes == 0  # the reference's integer division of the 4-bit width
    assert ours.size_bytes == 2048
    assert smemviz.SmemAllocation("odd", dtype="f4e2m1", count=3).size_bytes == 2
    assert smemviz.SmemAllocation("f6", dtype=cutlass.Float6E2M3FN, count=5).size_bytes == 4


def test_cutlass_allocator_errors_are_caught_the_same_way():
    """Code that catches CUTLASS's RuntimeError for ordering mistakes keeps working."""
    ours, theirs = smemviz.SmemAllocator(), memory.SmemAllocator()
    for alloc, make in ((ours, smemviz.SmemAllocation), (theirs, memory.SmemAllocation)):
        with pytest.raises(RuntimeError):
            alloc.total
        alloc.add(make("x", 16))
        alloc.compute_layout()
        with pytest.raises(RuntimeError):
            alloc.compute_layout()
    with pytest.raises(ValueError):
        ours.add_alias_group([[smemviz.SmemAllocation("only", 8)]])
    with pytest.raises(ValueError):
        theirs.add_alias_group([[memory.SmemAllocation("only", 8)]])


def test_pipeline_group_without_config_is_a_value_error_in_both():
    from ..strategies import PipelineGroup

    for alloc in (smemviz.SmemAllocator(), memory.SmemAllocator()):
        with pytest.raises(ValueError):
            alloc.add_pipeline_group(PipelineGroup("pg", 3, None))


def test_plan_from_cutlass_reads_barriers_and_tmem_ptr():
    from ..strategies import PipelineConfig, PipelineGroup, Resource

    theirs = memory.SmemAllocator()
    a = memory.SmemAllocation("a", 1000, 1024)
    slot = memory.SmemAllocation("slot", 4, 4)
    theirs.add_resource(Resource("load", [a], PipelineConfig(3)))
    theirs.add_pipeline_group(PipelineGroup("grp", 3, PipelineConfig(2)))
    theirs.add_tmem_ptr(slot)
    theirs.compute_layout()
    plan = smemviz.plan_from_cutlass(theirs, arch="sm_100a")
    kinds = {r.name: r.kind for r in plan.regions}
    assert kinds == {"a": "data", "slot": "tmem_ptr", "load.barriers": "barrier", "grp.barriers": "barrier"}
    assert plan.barrier_bytes == theirs.barrier_smem_bytes == 3 * 16 + 3 * 2 * 16
    assert plan.region("load.barriers").offset == 1008  # data total 1004 rounded up to 8
    assert plan.region("grp.barriers").offset == 1008 + 48
    assert plan.arch == "sm_100"
    assert smemviz.as_plan(theirs) == smemviz.plan_from_cutlass(theirs)


def test_plan_from_cutlass_refuses_uncomputed_and_foreign_objects():
    with pytest.raises(RuntimeError, match="compute_layout"):
        smemviz.plan_from_cutlass(memory.SmemAllocator())
    with pytest.raises(TypeError, match="CUTLASS"):
        smemviz.plan_from_cutlass(object())
