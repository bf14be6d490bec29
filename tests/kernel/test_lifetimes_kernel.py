"""A layout solved from lifetimes drives a traced kernel like any other: the
unified array has the plan's size and the views land on the solved offsets,
including those that share bytes."""

from __future__ import annotations

import re

import pytest

cutlass = pytest.importorskip("cutlass")
pytest.importorskip("cutlass.cute")

from smemviz import SmemAllocation, SmemAllocator  # noqa: E402

from .test_trace import UserKernel, _compile  # noqa: E402

pytestmark = pytest.mark.cutlass


def test_views_land_on_offsets_solved_from_lifetimes():
    allocator = SmemAllocator(steps=("load", "epilogue"))
    head = allocator.add(SmemAllocation("head", size_bytes=100, alignment=1024), live="load")
    a = allocator.add(SmemAllocation("a", dtype="f32", count=8, alignment=16), live="epilogue")
    b = allocator.add(SmemAllocation("b", size_bytes=8, alignment=8))
    allocator.add_tmem_ptr(SmemAllocation("slot", size_bytes=4, alignment=4))
    allocator.compute_layout()
    plan = allocator.plan
    assert plan.optimal and a.offset < head.offset + head.size_bytes  # a reuses head's bytes
    compiled = _compile(UserKernel(allocator, a, b), "sm_90a")
    assert compiled.dynamic_smem_bytes == plan.unified_bytes
    stores = set(re.findall(r"st\.shared\.b(\d+)\s+\[%r\d+\+(\d+)\], (\S+);", compiled.ptx))
    assert ("32", str(a.offset + 12), str(0x3FC00000)) in stores  # a[3] = 1.5
    assert ("16", str(b.offset + 4), "7") in stores
    assert ("32", str(plan.region("slot").offset), "99") in stores
