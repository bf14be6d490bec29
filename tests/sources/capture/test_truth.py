"""Captured plans against the compiled kernel itself: the launch's dynamic SMEM, the PTX's
addresses, and the PTX byte for byte with and without capture."""

from __future__ import annotations

import pytest

pytest.importorskip("cutlass")
pytestmark = pytest.mark.cutlass

from smemviz.kernel._compile import compile_host  # noqa: E402
from smemviz.layout import plan_from_json  # noqa: E402
from smemviz.sources.capture import capture  # noqa: E402

from . import kernels  # noqa: E402
from .ptx_stores import constant_stores  # noqa: E402


@pytest.fixture(scope="module")
def mixed():
    with capture() as cap:
        compiled = compile_host("capture_mixed", kernels.mixed_host, (kernels.fake_out(),), "sm_90a")
    return cap, compiled


def test_total_is_the_launch_dynamic_smem(mixed):
    cap, compiled = mixed
    assert compiled.dynamic_smem_bytes is not None
    assert cap.plan.total == compiled.dynamic_smem_bytes
    (kernel,) = cap.kernels.values()
    assert kernel.total == compiled.dynamic_smem_bytes
    assert kernel.kernel in compiled.kernel_names


def test_every_offset_is_the_ptx_address(mixed):
    cap, compiled = mixed
    stores = constant_stores(compiled.ptx)
    plan = cap.plan
    for name, mark in kernels.MARKS.items():
        mark = mark % 100 if name == "flag" else mark
        assert stores.get(mark) == {plan.region(name).offset}, (name, stores.get(mark))


def test_what_each_allocation_is(mixed):
    cap, _ = mixed
    plan = cap.plan
    assert plan.region("bars").kind == "barrier" and plan.region("bars").count == 4
    sa = plan.region("sA")
    assert (sa.dtype, sa.count, sa.size, sa.alignment) == ("i16", 1024, 2048, 1024)
    assert sa.layout == "(32,32):(32,1)"  # the view the kernel takes of the struct field
    sb = plan.region("sB")
    assert (sb.dtype, sb.count, sb.size, sb.alignment, sb.layout) == ("i32", 128, 512, 128, "(16,8):(1,16)")
    sd = plan.region("sD")
    assert sd.layout == "S<3,4,3> o 0 o (8,64):(64,1)" and sd.swizzle == "128B" and sd.offset % 1024 == 0
    assert plan.region("sC").count == 10
    # the union inside the struct is an alias group whose phases are its members
    assert len(plan.groups) == 1
    assert {r.name for r in plan.regions if r.group == 0} == {"scratch.reduce", "scratch.epi.acc", "scratch.epi.count"}
    for r in plan.regions:
        assert r.source is not None and r.source.startswith("kernels.py:")
    assert plan.region("sB").source == f"kernels.py:{_line_of('sB = smem.allocate_tensor')}"


def _line_of(text: str) -> int:
    from pathlib import Path

    lines = Path(kernels.__file__).read_text().splitlines()
    return next(i for i, line in enumerate(lines, 1) if text in line)


def test_plan_round_trips_through_json(mixed):
    cap, _ = mixed
    plan = cap.plan
    again = plan_from_json(plan.to_json())
    assert again == plan


def test_ptx_is_identical_with_and_without_capture(monkeypatch):
    from cutlass.cutlass_dsl import CuTeDSL

    dsl = CuTeDSL._get_dsl()
    monkeypatch.setattr(dsl.envar, "no_cache", True)  # each compile traces and compiles anew
    plain = compile_host("capture_plain", kernels.mixed_host, (kernels.fake_out(),), "sm_90a")
    with capture() as cap:
        captured = compile_host("capture_plain", kernels.mixed_host, (kernels.fake_out(),), "sm_90a")
    assert cap.plan.total == plain.dynamic_smem_bytes
    assert captured.ptx == plain.ptx
    assert captured.cubin == plain.cubin


def test_struct_fields_are_prefixed_when_two_structs_share_names():
    with capture() as cap:
        compiled = compile_host("capture_two", kernels.two_structs_host, (kernels.fake_out(32),), "sm_90a")
    plan = cap.plan
    assert plan.total == compiled.dynamic_smem_bytes
    first, second = plan.region("first.bars"), plan.region("second.bars")
    stores = constant_stores(compiled.ptx)
    assert stores[1] == {first.offset} and stores[2] == {second.offset}
    assert second.offset >= plan.region("first.flag").end


def test_a_name_given_in_a_comment():
    with capture() as cap:
        compile_host("capture_commented", kernels.commented_host, (kernels.fake_out(32),), "sm_90a")
    assert [r.name for r in cap.plan.regions] == ["scratch", "staging", "staging#2"]
    # and the kernel compiles without capture: a comment changes nothing
    compile_host("capture_commented_plain", kernels.commented_host, (kernels.fake_out(32),), "sm_90a")


def test_given_names_and_repeated_lines():
    with capture() as cap:
        compiled = compile_host("capture_named", kernels.named_host, (kernels.fake_out(16),), "sm_90a")
    plan = cap.plan
    assert [r.name for r in plan.regions] == ["stage0", "stage1", "stage2"]
    assert [r.count for r in plan.regions] == [16, 32, 48]
    assert plan.total == compiled.dynamic_smem_bytes


def test_tmem_through_the_memory_allocator():
    host = kernels.tmem_host_and_kernel()
    with capture() as cap:
        compiled = compile_host("capture_tmem", host, (kernels.fake_out(),), "sm_100a")
    plan, tmem = cap.plan, cap.tmem_plan
    assert plan.total == compiled.dynamic_smem_bytes
    slot = [r for r in plan.regions if r.kind == "tmem_ptr"]
    assert [r.name for r in slot] == ["tmem_holding_buf"]
    from smemviz.kernel._ptx import read_addresses

    facts = read_addresses(compiled.ptx)
    assert set(facts.tmem_slot) == {slot[0].offset}
    assert tmem is not None and tmem.memory == "tmem"
    assert [(r.name, r.offset, r.size) for r in tmem.regions] == [("tmem", 0, 128)]
    assert set(facts.tcgen05_alloc_columns) == {tmem.tmem_alloc_columns} == {128}
    stores = constant_stores(compiled.ptx)
    assert kernels.MARKS["sA"] not in stores or stores[kernels.MARKS["sA"]] <= {plan.region("sA").offset}


def test_tmem_pool_allocations_inside_the_reserved_block():
    host = kernels.tmem_pool_host_and_kernel()
    with capture() as cap:
        compiled = compile_host("capture_tmem_pool", host, (kernels.fake_out(),), "sm_100a")
    tmem = cap.tmem_plan
    assert tmem is not None
    assert [(r.name, r.offset, r.size, r.dtype) for r in tmem.regions] == [
        ("acc", 0, 128, "f32"),
        ("scales", 128, 64, "f32"),
        ("pool (unassigned)", 192, 64, None),
    ]
    assert tmem.data_total == 256
    from smemviz.kernel._ptx import read_addresses

    facts = read_addresses(compiled.ptx)
    assert set(facts.tcgen05_alloc_columns) == {256}
    assert cap.plan.total == compiled.dynamic_smem_bytes
    assert [r.kind for r in cap.plan.regions] == ["tmem_ptr"]


def test_a_compile_the_dsl_has_cached_is_still_captured():
    """The DSL traces before it looks in its cache, so a second compile of the same kernel is captured too."""
    first = compile_host("capture_cached", kernels.two_structs_host, (kernels.fake_out(32),), "sm_90a")
    with capture() as cap:
        again = compile_host("capture_cached", kernels.two_structs_host, (kernels.fake_out(32),), "sm_90a")
    assert again.ptx == first.ptx
    assert cap.plan.total == first.dynamic_smem_bytes


def test_the_deprecated_cutlass_utils_allocator_and_a_call_over_several_lines():
    with capture() as cap:
        compiled = compile_host("capture_shim", kernels.shim_host, (kernels.fake_out(32),), "sm_90a")
    (tile,) = cap.plan.regions
    assert (tile.name, tile.layout, tile.alignment, tile.size) == ("tile", "(8,4):(4,1)", 256, 128)
    assert tile.source == f"kernels.py:{_line_of('tile = smem.allocate_tensor(')}"
    assert cap.plan.total == compiled.dynamic_smem_bytes
    assert constant_stores(compiled.ptx)[kernels.MARKS["sB"]] == {tile.offset}
