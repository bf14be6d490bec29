"""Bad input is refused with a message naming the allocation and the value,
and a refused call leaves the allocator exactly as it was."""

from __future__ import annotations

import copy
import numbers

import pytest

from smemviz import (
    CapacityError,
    LayoutStateError,
    SmemAllocation,
    SmemAllocator,
    TmemAllocation,
    TmemAllocator,
)

from ..strategies import PipelineConfig, PipelineGroup, Resource


@pytest.mark.parametrize(
    "kwargs, exc, pattern",
    [
        ({"size_bytes": -4}, ValueError, r"'buf'.*size_bytes must be >= 0, got -4"),
        ({"size_bytes": 0}, ValueError, r"'buf'.*size_bytes is 0 and no dtype"),
        ({"size_bytes": 12.5}, TypeError, r"'buf'.*size_bytes must be an int, got 12.5"),
        ({"size_bytes": True}, TypeError, r"'buf'.*size_bytes must be an int"),
        ({"size_bytes": 64, "alignment": 96}, ValueError, r"'buf'.*power of two, got 96"),
        ({"size_bytes": 64, "alignment": 0}, ValueError, r"'buf'.*power of two, got 0"),
        ({"size_bytes": 64, "alignment": -128}, ValueError, r"'buf'.*power of two, got -128"),
        ({"size_bytes": 64, "alignment": "128"}, TypeError, r"'buf'.*alignment must be an int"),
        ({"dtype": "bf16", "count": 0}, ValueError, r"'buf'.*count must be >= 1, got 0"),
        ({"dtype": "bf16", "count": 2.0}, TypeError, r"'buf'.*count must be an int"),
        ({"dtype": "float13"}, ValueError, r"'buf'.*unknown dtype name 'float13'"),
        ({"dtype": object()}, TypeError, r"'buf'.*dtype must be"),
        ({"dtype": "f32", "count": 16, "size_bytes": 32}, ValueError, r"'buf'.*smaller than 16 x f32 = 64 B"),
    ],
)
def test_bad_smem_allocation_fields(kwargs, exc, pattern):
    with pytest.raises(exc, match=pattern):
        SmemAllocation("buf", **kwargs)


@pytest.mark.parametrize("name, exc", [(None, TypeError), (3, TypeError), ("", ValueError)])
def test_bad_names(name, exc):
    with pytest.raises(exc, match="name"):
        SmemAllocation(name, 16)
    with pytest.raises(exc, match="name"):
        TmemAllocation(name, 16)


@pytest.mark.parametrize("cols, exc", [(0, ValueError), (-32, ValueError), (1.5, TypeError), (None, TypeError)])
def test_bad_tmem_columns(cols, exc):
    with pytest.raises(exc, match=r"'acc'.*num_columns"):
        TmemAllocation("acc", cols)


def snapshot(alloc):
    """Everything an allocator holds, as comparable data."""
    state = {k: v for k, v in vars(alloc).items()}
    return repr(state), [(a.name, a.offset) for a in alloc.allocations]


@pytest.fixture
def smem():
    s = SmemAllocator()
    s.add(SmemAllocation("a", 1024, 1024))
    s.add_alias_group([[SmemAllocation("b", 512)], [SmemAllocation("c", 256)]])
    return s


def refused(alloc, call, exc, pattern):
    before = snapshot(alloc)
    with pytest.raises(exc, match=pattern):
        call()
    assert snapshot(alloc) == before


def test_alias_group_errors_leave_allocator_unchanged(smem):
    x, y = SmemAllocation("x", 64), SmemAllocation("y", 64)
    member = smem.alias_groups[0][0][0]
    refused(smem, lambda: smem.add_alias_group([[x, y]]), ValueError, r"at least 2 phases, got 1.*'x'")
    refused(smem, lambda: smem.add_alias_group([]), ValueError, r"at least 2 phases, got 0")
    refused(smem, lambda: smem.add_alias_group([[x], []]), ValueError, r"phase 2 is empty")
    refused(smem, lambda: smem.add_alias_group([[x, y], [x]]), ValueError, r"'x' appears twice")
    refused(smem, lambda: smem.add_alias_group([[x], [member]]), ValueError, r"'b' is already in another alias group")
    refused(
        smem, lambda: smem.add_alias_group([[x], [TmemAllocation("t", 32)]]), TypeError, r"'t' is a TMEM allocation"
    )
    refused(smem, lambda: smem.add_alias_group([[x], "y"]), TypeError, r"phase 2 must be a list")
    refused(smem, lambda: smem.add_alias_group("xy"), TypeError, r"list of phases")
    # and x, y are still free to be used afterwards
    smem.add_alias_group([[x], [y]])
    smem.compute_layout()
    assert x.offset == y.offset


def test_wrong_memory_kind_is_refused(smem):
    refused(smem, lambda: smem.add(TmemAllocation("acc", 128)), TypeError, r"'acc' is a TMEM allocation.*TmemAllocator")
    tmem = TmemAllocator()
    refused(tmem, lambda: tmem.add(SmemAllocation("buf", 64)), TypeError, r"'buf' is an SMEM allocation.*SmemAllocator")
    refused(smem, lambda: smem.add("buf"), TypeError, r"expected an SmemAllocation")


def test_resource_errors_are_atomic(smem):
    good, bad = SmemAllocation("good", 64), SmemAllocation("bad", 64)
    bad.size_bytes = -1  # allocations are mutable; the allocator re-checks them
    res = Resource("loader", [good, bad], PipelineConfig(2))
    refused(smem, lambda: smem.add_resource(res), ValueError, r"'bad'.*size_bytes must be >= 0, got -1")
    res = Resource("loader", [good], PipelineConfig(0))
    refused(smem, lambda: smem.add_resource(res), ValueError, r"'loader'.*num_stages must be a positive int, got 0")
    refused(smem, lambda: smem.add_resource(object()), TypeError, r"'object' has neither get_smem_requirements")
    refused(
        smem,
        lambda: smem.add_pipeline_group(PipelineGroup("grp", 3, None)),
        ValueError,
        r"'grp' has no pipeline_config",
    )
    refused(
        smem,
        lambda: smem.add_pipeline_group(PipelineGroup("grp", 0, PipelineConfig(2))),
        ValueError,
        r"num_barriers_per_stage",
    )


def test_tmem_ptr_slot_checks(smem):
    refused(smem, lambda: smem.add_tmem_ptr(SmemAllocation("slot", 2, 4)), ValueError, r"'slot' has 2 B.*32-bit")
    refused(smem, lambda: smem.add_tmem_ptr(SmemAllocation("slot", 4, 2)), ValueError, r"'slot' has alignment 2")
    first = smem.add_tmem_ptr(SmemAllocation("slot", 4, 4))
    assert smem.add_tmem_ptr(first) is first
    refused(
        smem, lambda: smem.add_tmem_ptr(SmemAllocation("slot2", 4, 4)), ValueError, r"already registered \('slot'\)"
    )


def test_nothing_can_be_added_after_compute_layout(smem):
    smem.compute_layout()
    for call in (
        lambda: smem.add(SmemAllocation("late", 64)),
        lambda: smem.add_alias_group([[SmemAllocation("p", 8)], [SmemAllocation("q", 8)]]),
        lambda: smem.add_resource(Resource("late_res", [])),
        lambda: smem.add_pipeline_group(PipelineGroup("g", 2, PipelineConfig(2))),
        lambda: smem.add_tmem_ptr(SmemAllocation("slot", 4, 4)),
    ):
        refused(smem, call, LayoutStateError, r"compute_layout\(\) was already called")
    with pytest.raises(ValueError):  # LayoutStateError is a ValueError too
        smem.add(SmemAllocation("late", 64))


def test_wrong_order_is_a_clear_error():
    s = SmemAllocator()
    s.add(SmemAllocation("a", 64))
    for what in ("total", "total_smem_bytes", "plan"):
        with pytest.raises(RuntimeError, match="compute_layout"):
            getattr(s, what)
    with pytest.raises(RuntimeError, match=r"compute_layout\(\) before print_usage_report"):
        s.print_usage_report()
    with pytest.raises(RuntimeError, match=r"compute_layout\(\) before allocate"):
        s.allocate()
    s.compute_layout()
    with pytest.raises(RuntimeError, match=r"already called"):
        s.compute_layout()
    with pytest.raises(RuntimeError, match=r"allocate\(\) \(inside a kernel\) before get"):
        s.get(s.allocations[0])
    with pytest.warns(DeprecationWarning, match="get_typed_ptr"), pytest.raises(RuntimeError, match="allocate"):
        s.get_typed_ptr(s.allocations[0], "f32", 4)
    with pytest.raises(RuntimeError, match=r"before assign_barrier_ptrs"):
        s.assign_barrier_ptrs()


def test_mutation_after_add_is_caught_at_compute_without_partial_offsets():
    s = SmemAllocator()
    a, b = SmemAllocation("a", 64), SmemAllocation("b", 64)
    s.add(a)
    s.add(b)
    b.alignment = 48
    before = snapshot(s)
    with pytest.raises(ValueError, match=r"'b'.*power of two, got 48"):
        s.compute_layout()
    assert snapshot(s) == before
    b.alignment = 64
    s.compute_layout()
    assert (a.offset, b.offset) == (0, 64)


def test_capacity_refusal_keeps_offsets_untouched():
    s = SmemAllocator(arch="sm_90a")
    big = [SmemAllocation(f"stage{i}", 64 * 1024, 1024) for i in range(4)]
    for a in big:
        s.add(a)
    before = snapshot(s)
    with pytest.raises(CapacityError) as info:
        s.compute_layout()
    msg = str(info.value)
    assert "262,144 B" in msg and "sm_90 per-block limit of 232,448 B by 29,696 B" in msg
    assert "stage0 (65,536 B, align 1024)" in msg
    assert snapshot(s) == before
    assert not s.layout_computed


def test_tmem_over_512_columns_is_refused_with_contributors():
    t = TmemAllocator()
    t.add(TmemAllocation("acc0", 256))
    t.add(TmemAllocation("acc1", 256))
    t.add(TmemAllocation("sfa", 4))
    with pytest.raises(
        CapacityError,
        match=r"516 columns, which exceeds the 512 columns of a CTA on sm_100 by 4 columns; largest: acc0 \(256 columns\)",
    ):
        t.compute_layout()
    assert not t.layout_computed


def test_tmem_allocator_refuses_an_arch_without_tmem():
    with pytest.raises(ValueError, match=r"sm_90 \(Hopper\) has no tensor memory"):
        TmemAllocator(arch="sm_90a")


def test_unknown_arch_lists_known_ones():
    with pytest.raises(ValueError, match=r"unknown architecture 'sm_42'.*sm_90"):
        SmemAllocator(arch="sm_42")


def test_adding_the_same_allocation_twice_lays_it_out_once():
    s = SmemAllocator()
    a = SmemAllocation("a", 100)
    s.add(a)
    s.add(a)
    s.add_resource(Resource("r", [a]))
    s.compute_layout()
    assert s.total == 100
    assert len(s.plan.regions) == 1


def test_deep_copy_of_a_refused_state_still_works(smem):
    clone = copy.deepcopy(smem)
    with pytest.raises(ValueError):
        clone.add_alias_group([[SmemAllocation("z", 8)]])
    clone.compute_layout()
    smem.compute_layout()
    assert clone.total == smem.total


class Int64Scalar:
    """Stands in for a NumPy integer scalar: integral, but not an ``int``."""

    def __init__(self, value: int) -> None:
        self.value = value

    def __int__(self) -> int:
        return self.value


numbers.Integral.register(Int64Scalar)


def test_integral_scalars_such_as_numpy_ints_are_accepted():
    a = SmemAllocation("a", Int64Scalar(96), Int64Scalar(32), dtype="f16", count=Int64Scalar(48))
    assert (a.size_bytes, a.alignment, a.count) == (96, 32, 48)
    assert all(type(v) is int for v in (a.size_bytes, a.alignment, a.count))
    assert TmemAllocation("t", Int64Scalar(64)).num_columns == 64
    with pytest.raises(TypeError, match="size_bytes must be an int"):
        SmemAllocation("f", 64.0)
