"""Compile-only mode on the CPU, for Hopper and Blackwell: PTX, cubin and the
dynamic SMEM the launch requests, which must equal the plan's unified bytes."""

from __future__ import annotations

import re

import pytest

pytest.importorskip("cutlass")

from smemviz import CapacityError, SmemAllocation, SmemAllocator  # noqa: E402
from smemviz.hardware import compile_target  # noqa: E402
from smemviz.kernel import (  # noqa: E402
    NoGpuError,
    WrongGpuError,
    cache_info,
    compile_pipeline,
    compile_probe,
    compile_tmem,
    current_gpu,
    pipeline_layout,
    run_tmem,
    tcgen05_alloc_columns_in_ptx,
)
from smemviz.kernel._compile import dynamic_smem_from_ir  # noqa: E402
from tools import kernel_layouts as examples  # noqa: E402

pytestmark = pytest.mark.cutlass
ARCHS = ["sm_90a", "sm_100a"]


@pytest.mark.parametrize("arch", ARCHS)
@pytest.mark.parametrize("name", list(examples.SMEM_LAYOUTS))
def test_probe_requests_exactly_the_unified_bytes(name, arch):
    allocator = examples.smem_layout(name)
    compiled = compile_probe(allocator, arch)
    plan = allocator.plan
    assert compiled.dynamic_smem_bytes == plan.unified_bytes
    assert compiled.smem_alignment() >= plan.base_alignment
    assert f".target {arch}" in compiled.ptx
    assert compiled.cubin[:4] == b"\x7fELF"
    assert len(compiled.kernel_names) == 1
    assert "%dynamic_smem_size" in compiled.ptx  # the kernel reports what it got


def test_probe_compiles_are_cached_by_layout_not_by_object():
    first = compile_probe(examples.smem_layout("odd_alignments"), "sm_90a")
    hits = cache_info()["hits"]
    again = compile_probe(examples.smem_layout("odd_alignments"), "sm_90a")  # a new, equal allocator
    assert again is first and cache_info()["hits"] == hits + 1  # no compile: the benchmark times it
    other = SmemAllocator()
    other.add(SmemAllocation("odd0_3B_align1", size_bytes=4, alignment=1))
    other.compute_layout()
    assert compile_probe(other, "sm_90a") is not first


def test_small_regions_are_stored_at_their_offsets_with_their_tags():
    allocator = SmemAllocator()
    allocator.add(SmemAllocation("head", size_bytes=1024, alignment=1024))
    allocator.add(SmemAllocation("f32x2", dtype="f32", count=2, alignment=8))
    allocator.add(SmemAllocation("i16x1", dtype="i16", count=1, alignment=2))
    allocator.add(SmemAllocation("b3", size_bytes=3, alignment=1))
    allocator.compute_layout()
    compiled = compile_probe(allocator, "sm_90a", threads=32)
    stores = set(re.findall(r"st\.shared\.b(\d+)\s+\[%r\d+\+(\d+)\]", compiled.ptx))
    plan = allocator.plan
    assert ("32", str(plan.region("f32x2").offset)) in stores
    assert ("16", str(plan.region("i16x1").offset)) in stores
    assert ("8", str(plan.region("b3").offset)) in stores


def test_probe_refuses_a_layout_over_the_architecture_limit():
    allocator = SmemAllocator()
    allocator.add(SmemAllocation("too_big", size_bytes=232448 + 8, alignment=1024))
    allocator.compute_layout()
    with pytest.raises(CapacityError, match="232,448"):
        compile_probe(allocator, "sm_90a")


def test_probe_needs_an_smem_layout():
    with pytest.raises(ValueError, match="SMEM layout"):
        compile_probe(examples.tmem_layout("acc_128"), "sm_90a")


@pytest.mark.parametrize("arch", ARCHS)
@pytest.mark.parametrize("stages,tile", [(2, 32), (4, 256), (7, 96)])
def test_pipeline_barriers_live_in_the_allocator_barrier_region(stages, tile, arch):
    allocator, resource = pipeline_layout(stages, tile, extra=(SmemAllocation("before", size_bytes=1000, alignment=8),))
    compiled = compile_pipeline(allocator, resource, n_tiles=8, arch=arch)
    plan = allocator.plan
    barrier = plan.barrier_regions[0]
    assert barrier.size == 16 * stages
    assert compiled.dynamic_smem_bytes == plan.unified_bytes
    inits = re.findall(r"mbarrier\.init\.shared(?:::cta)?\.b64\s+\[(%r\d+)(?:\+(\d+))?\]", compiled.ptx)
    assert len(inits) == 2 * stages  # full and empty barrier per stage
    offsets = [int(off) for _, off in inits if off]
    assert offsets and all(barrier.offset <= o < barrier.end for o in offsets)


def test_the_same_allocator_and_resource_trace_again_for_another_target():
    """A second trace must emit a fresh array and re-point the barriers smemviz
    placed in the first one (re-running a notebook cell does exactly this)."""
    allocator, resource = pipeline_layout(3, 64)
    first = compile_pipeline(allocator, resource, n_tiles=4, arch="sm_90a")
    placed = resource.pipeline_config.barrier_ptr
    second = compile_pipeline(allocator, resource, n_tiles=4, arch="sm_100a")
    assert resource.pipeline_config.barrier_ptr is not placed
    for compiled in (first, second):
        assert compiled.dynamic_smem_bytes == allocator.plan.unified_bytes
        assert len(re.findall(r"mbarrier\.init\.shared(?:::cta)?\.b64", compiled.ptx)) == 6


def test_a_pointer_the_user_placed_is_kept():
    from dataclasses import replace

    from smemviz.layout import _emit

    allocator, resource = pipeline_layout(2, 32)

    sentinel = object()
    resource.pipeline_config = replace(resource.pipeline_config, barrier_ptr=sentinel)
    assert _emit.assign_barrier_ptr(None, resource, 0, ours=None) is None
    assert resource.pipeline_config.barrier_ptr is sentinel


@pytest.mark.parametrize("name", list(examples.TMEM_LAYOUTS))
def test_tmem_kernel_allocates_the_planned_columns(name):
    tmem = examples.tmem_layout(name)
    compiled = compile_tmem(tmem, arch="sm_100a")
    assert tcgen05_alloc_columns_in_ptx(compiled.ptx) == [tmem.tcgen05_alloc_columns]
    for instr in (
        "tcgen05.relinquish_alloc_permit",
        "tcgen05.dealloc",
        "tcgen05.st.sync.aligned.32x32b",
        "tcgen05.ld.sync.aligned.32x32b",
        "tcgen05.wait::st",
        "tcgen05.wait::ld",
    ):
        assert instr in compiled.ptx, instr
    assert ".target sm_100a" in compiled.ptx


def test_tmem_kernel_writes_the_base_address_into_the_planned_slot():
    smem = examples.smem_layout("barriers_and_tmem_slot")
    compiled = compile_tmem(examples.tmem_layout("acc_128"), smem, arch="sm_100a")
    slot = smem.plan.region("tmem_ptr")
    assert slot.kind == "tmem_ptr"
    m = re.search(r"tcgen05\.alloc\.[\w:.]+\s+\[(%r\d+)\]", compiled.ptx)
    assert m, "no tcgen05.alloc"
    assert compiled.dynamic_smem_bytes == smem.plan.unified_bytes
    assert slot.offset > 0
    assert re.search(rf"add\.s32\s+{m.group(1)}, %r\d+, {slot.offset};", compiled.ptx)


def test_tmem_kernel_needs_a_blackwell_target():
    with pytest.raises(ValueError, match="sm_100-class"):
        compile_tmem(examples.tmem_layout("acc_128"), arch="sm_90a")


def test_tmem_launch_explains_what_is_missing():
    gpu = current_gpu()
    if gpu is not None and gpu.has_tmem:
        pytest.skip("a Blackwell GPU is here")
    expected = NoGpuError if gpu is None else WrongGpuError
    with pytest.raises(expected):
        run_tmem(examples.tmem_layout("acc_128"))


def test_arch_names_are_normalised():
    assert compile_target("sm90") == "sm_90a"
    assert compile_target("100a") == "sm_100a"
    assert compile_target("sm_80") == "sm_80"
    with pytest.raises(ValueError, match="'hopper9'"):
        compile_target("hopper9")


def test_dynamic_smem_parser_reads_the_launch_config_only():
    ir = """
    %1 = llvm.mlir.constant(1 : i32) : i32
    %9 = llvm.mlir.constant(4360 : i64) : i64
    %8 = llvm.mlir.constant(77 : i64) : i64
    %11 = llvm.alloca %1 x !llvm.struct<(array<3 x i32>, array<3 x i32>, i64, ptr, ptr, i32)> : (i32) -> !llvm.ptr
    %17 = llvm.getelementptr %11[0, 2] : (!llvm.ptr) -> !llvm.ptr, !llvm.struct<(array<3 x i32>, array<3 x i32>, i64, ptr, ptr, i32)>
    llvm.store %9, %17 : i64, !llvm.ptr
    %18 = llvm.getelementptr %11[0, 3] : (!llvm.ptr) -> !llvm.ptr, !llvm.struct<(array<3 x i32>, array<3 x i32>, i64, ptr, ptr, i32)>
    llvm.store %8, %18 : i64, !llvm.ptr
    """
    assert dynamic_smem_from_ir(ir) == 4360
    assert dynamic_smem_from_ir("llvm.func @f()") is None
