"""Pipeline groups from CUTLASS releases before 4.8 (no ``num_barriers_per_stage``)
are counted as members + 1 barrier pairs per stage, by the allocator and by
``plan_from_cutlass``."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pytest

from smemviz import SmemAllocation, SmemAllocator, plan_from_cutlass

from ..strategies import PipelineConfig, PipelineGroup


@dataclass
class OldPipelineGroup:
    """A group as older releases shaped it: members and a config, no per-stage count."""

    name: str
    members: list = field(default_factory=list)
    pipeline_config: Any = None


def layout_with(group) -> SmemAllocator:
    s = SmemAllocator()
    s.add(SmemAllocation("sA", 4096, 1024))
    s.add_pipeline_group(group)
    s.compute_layout()
    return s


def test_an_old_group_counts_members_plus_one_per_stage():
    old = layout_with(OldPipelineGroup("mma", ["load_a", "load_b"], PipelineConfig(4)))
    assert old.barrier_smem_bytes == (2 + 1) * 4 * 16
    new = layout_with(PipelineGroup("mma", 3, PipelineConfig(4)))
    assert old.plan == new.plan
    assert old.plan.region("mma.barriers").size == 192


def test_an_old_group_with_nothing_to_count_is_refused_and_changes_nothing():
    s = SmemAllocator()
    s.add(SmemAllocation("sA", 4096, 1024))
    with pytest.raises(ValueError, match=r"'mma' has neither num_barriers_per_stage nor members"):
        s.add_pipeline_group(OldPipelineGroup("mma", [], PipelineConfig(4)))
    assert s.barrier_smem_bytes == 0
    s.compute_layout()
    assert s.plan.barrier_regions == ()


@pytest.mark.cutlass
def test_plan_from_cutlass_counts_an_old_group_the_same_way():
    memory = pytest.importorskip("cutlass.experimental.task_scheduling.memory")
    theirs = memory.SmemAllocator()
    theirs.add(memory.SmemAllocation("sA", 4096, 1024))
    theirs.add_pipeline_group(PipelineGroup("mma", 3, PipelineConfig(2)))
    theirs.compute_layout()
    new = plan_from_cutlass(theirs)
    # the same allocator as an older release would have left it: a group without the count
    theirs._barrier_groups[0] = OldPipelineGroup("mma", ["a", "b"], PipelineConfig(2))
    old = plan_from_cutlass(theirs)
    assert old.region("mma.barriers").size == new.region("mma.barriers").size == 3 * 2 * 16
    assert old == new
