"""Two allocators may lay out the same allocation objects (groups_to_lifetimes, compare_layouts):
each keeps its own placement, and neither moves the other's."""

from __future__ import annotations

from smemviz import SmemAllocation, SmemAllocator, TmemAllocation, TmemAllocator
from smemviz.layout._allocator import compare_layouts, groups_to_lifetimes


def _declared():
    s = SmemAllocator()
    a = SmemAllocation("a", 4096, 1024)
    b = SmemAllocation("b", 8192, 1024)
    e = SmemAllocation("e", 1024, 1024)
    s.add(a)
    s.add_alias_group([[b], [e]])
    return s, (a, b, e)


def test_a_solved_copy_keeps_its_offsets_after_the_original_is_laid_out():
    s, allocs = _declared()
    solved = groups_to_lifetimes(s)
    solved.compute_layout()
    before = {r.name: r.offset for r in solved.plan.regions}
    s.compute_layout()  # the same objects, placed again by the original
    assert any(alloc.offset != before[alloc.name] for alloc in allocs)  # their offset fields moved
    for alloc in allocs:
        assert solved._offset_of(alloc) == before[alloc.name]  # what its kernel views use
        assert s._offset_of(alloc) == s.plan.region(alloc.name).offset


def test_compare_layouts_does_not_enforce_capacity():
    t = TmemAllocator()
    t.add(TmemAllocation("acc0", 400))
    t.add(TmemAllocation("acc1", 400))
    plans = compare_layouts(t)  # 800 columns: over a CTA's 512, shown rather than refused
    assert plans["no aliasing"].data_total == 800
    assert not t.layout_computed
