"""Data + barriers + padding = total, for every plan whatever made it.

Hand-written plans (smemviz's allocator), layout files, ``@cute.struct``
storage and kernels captured as compiled all split their total the same way:
the bytes data regions hold, the bytes mbarrier regions hold
(``plan.barrier_bytes``), and the bytes no region covers (``plan.padding``).
"""

from __future__ import annotations

import json

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

import smemviz
from smemviz import CapacityError, LayoutPlan
from smemviz.layout import plan_from_dict, plan_from_json
from smemviz.layout._build import byte_split, covered_bytes
from smemviz.sources.layout_file import parse_layout_text

from ..hostile import to_toml, valid_documents
from ..strategies import replay, smem_programs, smemviz_alloc


def assert_adds_up(plan: LayoutPlan) -> None:
    data, barriers, padding = byte_split(plan)
    assert data + barriers + padding == plan.total, (data, barriers, padding, plan.total)
    assert min(data, barriers, padding) >= 0, (data, barriers, padding)
    # the plan's own barrier count is the bytes its mbarrier regions take
    assert plan.barrier_bytes == barriers == covered_bytes(plan.barrier_regions)
    # data is what the data regions cover, less any byte a barrier shares with them
    data_cover = covered_bytes(r for r in plan.regions if r.kind != "barrier")
    assert data == data_cover - (data_cover + barriers - covered_bytes(plan.regions))
    if plan.source in ("cute.struct", "cute.capture"):
        assert plan.total == plan.data_total  # a struct's size, a kernel's launch: barriers included
    elif plan.memory == "smem":
        # the CUTLASS-compatible split: data total, rounded to 8, then the barriers
        assert plan.total == -(-plan.data_total // 8) * 8 + plan.barrier_bytes
    # and the plan reads back from its JSON unchanged
    assert plan_from_json(plan.to_json()) == plan


# -- hand-written --------------------------------------------------------------------------------


@given(smem_programs())
def test_hand_written_plans_add_up(ops):
    s = smemviz.SmemAllocator()
    replay(ops, s, smemviz_alloc)
    s.compute_layout()
    assert_adds_up(s.plan)


def test_a_hand_written_plan_with_padding_between_data_adds_up():
    smem = smemviz.SmemAllocator(arch="sm_90a")
    smem.add(smemviz.SmemAllocation("y", size_bytes=1000, alignment=1024))
    smem.add(smemviz.SmemAllocation("x", size_bytes=100, alignment=16))
    smem.add_pipeline("mainloop", 3)
    smem.compute_layout()
    plan = smem.plan
    assert byte_split(plan) == (1100, 48, 12)
    assert plan.total == 1160 and plan.data_total == 1108  # CUTLASS's allocator total, unchanged
    assert_adds_up(plan)


# -- layout files ----------------------------------------------------------------------------------


@settings(max_examples=60)
@given(valid_documents())
def test_layout_file_plans_add_up(doc):
    spec = parse_layout_text(to_toml(doc), format="toml", source="f.toml")
    try:
        plans = spec.plans()
    except CapacityError:
        assume(False)
        return
    for plan in plans:
        if plan is not None:
            assert_adds_up(plan)


# -- @cute.struct ---------------------------------------------------------------------------------

cutlass = pytest.importorskip("cutlass")
cute = pytest.importorskip("cutlass.cute")

from ..sources.test_struct import blackwell_gemm_storage, build_struct, hopper_gemm_storage, nested_storage  # noqa: E402
from ..strategies import struct_specs  # noqa: E402


def test_gemm_structs_count_their_mbarriers():
    hopper = smemviz.plan_from_struct(hopper_gemm_storage(stages=7))
    assert hopper.barrier_bytes == 7 * 2 * 8 and hopper.total == hopper.data_total
    assert_adds_up(hopper)
    blackwell = smemviz.plan_from_struct(blackwell_gemm_storage())
    assert blackwell.barrier_bytes == (4 + 4 + 2 + 2 + 1) * 8
    assert_adds_up(blackwell)
    assert_adds_up(smemviz.plan_from_struct(nested_storage()))


@settings(max_examples=40, deadline=None)
@given(spec=struct_specs(), data=st.data())
def test_struct_plans_add_up(spec, data):
    storage = build_struct(spec, "Random")
    names = [r.name for r in smemviz.plan_from_struct(storage).regions]
    barriers = data.draw(st.sets(st.sampled_from(names)) if names else st.just(set()), label="barriers")
    assert_adds_up(smemviz.plan_from_struct(storage, barriers=barriers))


def test_struct_plans_written_before_barriers_were_counted_still_read():
    plan = smemviz.plan_from_struct(hopper_gemm_storage(stages=4))
    old = json.loads(plan.to_json())
    old["barrier_bytes"] = 0
    assert plan_from_dict(old) == plan
    old["barrier_bytes"] = 8  # neither the old way nor the regions' bytes
    with pytest.raises(ValueError, match="barrier_bytes"):
        plan_from_dict(old)


# -- captured --------------------------------------------------------------------------------------

from smemviz.sources.capture._build import smem_plan  # noqa: E402
from smemviz.sources.capture._records import CapturedAllocation  # noqa: E402


@st.composite
def captured_allocations(draw):
    """Allocations as a kernel makes them through the DSL's allocator, one after another."""
    out, cursor = [], 0
    for i in range(draw(st.integers(0, 6))):
        how = draw(st.sampled_from(["array", "bytes", "struct"]))
        align = draw(st.sampled_from([1, 8, 16, 128, 1024]))
        offset = -(-cursor // align) * align
        if how == "struct":
            storage = build_struct(draw(struct_specs(max_depth=1)), f"Captured{i}")
            size, struct, dtype, count = storage.__sizeof__(), storage, None, None
            align = max(align, storage.__alignof__())
            offset = -(-cursor // align) * align
        else:
            dtype = draw(st.sampled_from(["i64", "i32", "f16"]))
            count = draw(st.integers(1, 300))
            size, struct = count * {"i64": 8, "i32": 4, "f16": 2}[dtype], None
        name = draw(st.sampled_from(["sA", "bars", "mbar", "tmem_holding_buf", "epi", "pipeline"])) + f"_{i}"
        out.append(
            CapturedAllocation(
                name=name, how=how, size=size, alignment=align, partition=1, source=None, kernel="k",
                offset=offset, dtype=dtype, count=count, struct=struct,
            )
        )  # fmt: skip
        cursor = offset + size
    return out, cursor


@settings(max_examples=40, deadline=None)
@given(captured_allocations(), st.integers(0, 2048))
def test_captured_plans_add_up(allocs, extra):
    allocations, end = allocs
    plan = smem_plan(allocations, {}, end + extra, "sm_90a", {})
    assert_adds_up(plan)


@pytest.fixture(scope="module")
def compiled_captures():
    from smemviz.kernel._compile import compile_host
    from smemviz.sources.capture import capture

    from ..sources.capture import kernels

    plans = []
    for name, host in (("totals_mixed", kernels.mixed_host), ("totals_two", kernels.two_structs_host)):
        with capture() as cap:
            compile_host(name, host, (kernels.fake_out(),), "sm_90a")
        plans.append(cap.plan)
    return plans


@pytest.mark.cutlass
def test_compiled_kernels_count_their_mbarriers(compiled_captures):
    mixed, two = compiled_captures
    assert mixed.barrier_bytes == 4 * 8  # Storage.bars, MemRange[Int64, 4]
    assert two.barrier_bytes == 2 * 4 * 8
    for plan in compiled_captures:
        assert_adds_up(plan)
