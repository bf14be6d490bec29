"""Trace-time emission inside a user's @cute.kernel: the unified array, typed
views, reinterpretation, the TMEM-pointer slot, and clear errors in the wrong order."""

from __future__ import annotations

import re

import pytest

cutlass = pytest.importorskip("cutlass")
cute = pytest.importorskip("cutlass.cute")
from cutlass.cute.runtime import make_fake_tensor  # noqa: E402

from smemviz import LayoutStateError, SmemAllocation, SmemAllocator  # noqa: E402
from smemviz.kernel._compile import compile_host  # noqa: E402

pytestmark = pytest.mark.cutlass


class UserKernel:
    """What a kernel author writes: allocate once, then views by allocation."""

    def __init__(self, allocator, a, b, get_before_allocate=False, deprecated=False):
        self.allocator = allocator
        self.a = a
        self.b = b
        self.get_before_allocate = get_before_allocate
        self.deprecated = deprecated

    @cute.jit
    def __call__(self, out: cute.Tensor):
        self.kernel(out).launch(grid=[1, 1, 1], block=[32, 1, 1])

    @cute.kernel
    def kernel(self, out: cute.Tensor):
        tidx, _, _ = cute.arch.thread_idx()
        if cutlass.const_expr(self.get_before_allocate):
            self.allocator.get(self.a)
        base = self.allocator.allocate()
        va = self.allocator.get(self.a)
        if cutlass.const_expr(self.deprecated):
            vb = self.allocator.get_typed_ptr(self.b, cutlass.Int16, 4)
        else:
            vb = self.allocator.get_as_type(self.b, cutlass.Int16, 4)
        ctx = self.allocator.resource_context()
        if tidx == 0:
            va[3] = cutlass.Float32(1.5)
            vb[2] = cutlass.Int16(7)
            ctx.tmem_ptr_i32[0] = cutlass.Int32(99)
            out[0] = base[5]


def _layout():
    allocator = SmemAllocator()
    allocator.add(SmemAllocation("head", size_bytes=100, alignment=1024))
    a = allocator.add(SmemAllocation("a", dtype="f32", count=8, alignment=16))
    b = allocator.add(SmemAllocation("b", size_bytes=8, alignment=8))
    allocator.add_tmem_ptr(SmemAllocation("slot", size_bytes=4, alignment=4))
    allocator.compute_layout()
    return allocator, a, b


def _compile(kernel, arch="sm_90a"):
    out = make_fake_tensor(cutlass.Uint8, (1,), stride=(1,))
    return compile_host("user_kernel", kernel, (out,), arch)


@pytest.mark.parametrize("arch", ["sm_90a", "sm_100a"])
def test_views_land_at_the_planned_offsets(arch):
    allocator, a, b = _layout()
    compiled = _compile(UserKernel(allocator, a, b), arch)
    plan = allocator.plan
    assert compiled.dynamic_smem_bytes == plan.unified_bytes
    assert compiled.smem_alignment() == 1024
    stores = set(re.findall(r"st\.shared\.b(\d+)\s+\[%r\d+\+(\d+)\], (\S+);", compiled.ptx))
    assert ("32", str(a.offset + 12), str(0x3FC00000)) in stores  # a[3] = 1.5
    assert ("16", str(b.offset + 4), "7") in stores  # b reinterpreted as Int16, element 2
    assert ("32", str(plan.region("slot").offset), "99") in stores
    assert re.search(r"ld\.shared\.(?:b|u)8\s+%rs\d+, \[%r\d+\+5\]", compiled.ptx)  # base[5]
    assert allocator.smem_base is not None  # allocate() keeps the array for later views


def test_get_typed_ptr_warns_and_forwards():
    allocator, a, b = _layout()
    with pytest.warns(DeprecationWarning, match="get_as_type"):
        compiled = _compile(UserKernel(allocator, a, b, deprecated=True))
    assert re.search(rf"st\.shared\.b16\s+\[%r\d+\+{b.offset + 4}\], 7;", compiled.ptx)


def test_get_before_allocate_is_a_clear_error():
    allocator, a, b = _layout()
    with pytest.raises(Exception) as info:
        _compile(UserKernel(allocator, a, b, get_before_allocate=True))
    chain = []
    exc = info.value
    while exc is not None:
        chain.append(exc)
        exc = exc.__cause__ or exc.__context__
    assert any(isinstance(e, LayoutStateError) for e in chain) or "allocate()" in str(info.value)
    assert "allocate()" in "".join(str(e) for e in chain)


def test_trace_time_calls_outside_a_layout_are_refused():
    allocator = SmemAllocator()
    allocator.add(SmemAllocation("x", size_bytes=16))
    with pytest.raises(LayoutStateError, match="compute_layout"):
        allocator.allocate()
    allocator.compute_layout()
    with pytest.raises(LayoutStateError, match="allocate()"):
        allocator.resource_context()
    with pytest.raises(LayoutStateError, match="allocate()"):
        allocator.assign_barrier_ptrs()


def test_a_kernel_traces_again_with_the_same_allocator():
    allocator, a, b = _layout()
    kernel = UserKernel(allocator, a, b)
    first = _compile(kernel, "sm_90a")
    second = _compile(kernel, "sm_100a")  # a new trace: the first array is dead
    for compiled in (first, second):
        assert re.search(rf"st\.shared\.b16\s+\[%r\d+\+{b.offset + 4}\], 7;", compiled.ptx)


def test_views_from_an_earlier_trace_are_refused():
    allocator, a, b = _layout()
    _compile(UserKernel(allocator, a, b), "sm_90a")
    with pytest.raises(Exception) as info:
        _compile(UserKernel(allocator, a, b, get_before_allocate=True), "sm_90a")
    chain, exc = [], info.value
    while exc is not None:
        chain.append(exc)
        exc = exc.__cause__ or exc.__context__
    assert "earlier trace" in "".join(str(e) for e in chain)


class AllocateOnly:
    """A kernel that only emits an allocator's unified array and touches its last byte."""

    def __init__(self, allocator, n_bytes):
        self.allocator = allocator
        self.last = n_bytes - 1

    @cute.jit
    def __call__(self, out: cute.Tensor):
        self.kernel(out).launch(grid=[1, 1, 1], block=[32, 1, 1])

    @cute.kernel
    def kernel(self, out: cute.Tensor):
        base = self.allocator.allocate()
        out[0] = base[self.last]


def _declare(module):
    allocator = module.SmemAllocator()
    allocator.add(module.SmemAllocation("a", dtype=cutlass.BFloat16, count=1000, alignment=1024))
    allocator.add(module.SmemAllocation("b", size_bytes=37, alignment=4))
    x = module.SmemAllocation("x", size_bytes=300, alignment=16)
    y = module.SmemAllocation("y", dtype=cutlass.Float32, count=90, alignment=128)
    allocator.add_alias_group([[x], [y]])
    allocator.compute_layout()
    return allocator


def test_unified_array_matches_cutlass_reference_allocator():
    """CUTLASS's own allocator (the reference) and smemviz's, traced in the same
    kernel with the same declarations, request the same SMEM with the same alignment."""
    reference_module = pytest.importorskip("cutlass.experimental.task_scheduling.memory")
    import smemviz

    ours = _declare(smemviz)
    theirs = _declare(reference_module)
    n = ours.plan.unified_bytes
    a = _compile(AllocateOnly(ours, n), "sm_90a")
    b = _compile(AllocateOnly(theirs, n), "sm_90a")
    assert a.dynamic_smem_bytes == b.dynamic_smem_bytes == n
    assert a.smem_alignment() == b.smem_alignment()


def _config(num_stages):
    from dataclasses import make_dataclass

    cls = make_dataclass("Cfg", [("num_stages", int), ("barrier_ptr", object, None)], frozen=True)
    return cls(num_stages)


class _Resource:
    def __init__(self, name, stages):
        self.name = name
        self.pipeline_config = _config(stages)
        self.pipeline_group = None

    def get_smem_requirements(self):
        return [SmemAllocation(f"{self.name}.data", size_bytes=100, alignment=16)]


class _Group:
    def __init__(self, name, stages, members):
        self.name = name
        self.pipeline_config = _config(stages)
        self.num_barriers_per_stage = members + 1


class InitBarriers:
    def __init__(self, allocator, owners):
        self.allocator = allocator
        self.owners = owners

    @cute.jit
    def __call__(self, out: cute.Tensor):
        self.kernel(out).launch(grid=[1, 1, 1], block=[32, 1, 1])

    @cute.kernel
    def kernel(self, out: cute.Tensor):
        self.allocator.allocate()
        self.allocator.assign_barrier_ptrs()
        for i in cutlass.range_constexpr(len(self.owners)):
            cute.arch.mbarrier_init(self.owners[i].pipeline_config.barrier_ptr, i + 1)


def test_barrier_pointers_of_resources_and_groups_point_into_their_regions():
    allocator = SmemAllocator()
    first = _Resource("load", 3)
    second = _Resource("store", 2)
    group = _Group("mma", 4, members=2)
    allocator.add_resource(first)
    allocator.add_resource(second)
    allocator.add_pipeline_group(group)
    allocator.compute_layout()
    owners = [first, second, group]
    compiled = _compile(InitBarriers(allocator, owners))
    regions = allocator.plan.barrier_regions
    assert [r.size for r in regions] == [48, 32, 4 * 3 * 16]
    inits = [int(off) for off in re.findall(r"mbarrier\.init\.shared(?:::cta)?\.b64\s+\[%r\d+\+(\d+)\]", compiled.ptx)]
    assert inits == [r.offset for r in regions]
