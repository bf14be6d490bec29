"""The plan's numbers, capacity checks, reports and the hardware/dtype facts."""

from __future__ import annotations

import json

import pytest

import smemviz
from smemviz import SmemAllocation, SmemAllocator, TmemAllocation, TmemAllocator, hardware
from smemviz._dtypes import dtype_name, dtype_width
from smemviz.analysis import text_report
from smemviz.layout import plan_from_dict

from ..strategies import PipelineConfig, PipelineGroup, Resource


@pytest.fixture
def gemm():
    """The README's example: A and B stages aliased with the epilogue tile, a load pipeline."""
    s = SmemAllocator()
    a = SmemAllocation("smem_a", dtype="bf16", count=4 * 128 * 64, alignment=1024)
    b = SmemAllocation("smem_b", dtype="bf16", count=4 * 128 * 64, alignment=1024)
    c = SmemAllocation("epi_c", size_bytes=128 * 128 * 2)
    sfa = SmemAllocation("sfa", 100, 16)
    s.add(a)
    s.add(b)
    s.add_resource(Resource("load", [sfa], PipelineConfig(4)))
    s.add_tmem_ptr(SmemAllocation("tmem_slot", 4, 4))
    s.add_alias_group([[a, b], [c]])
    s.compute_layout()
    return s


def test_offsets_totals_and_regions(gemm):
    plan = gemm.plan
    r = {x.name: x for x in plan.regions}
    assert (r["smem_a"].offset, r["smem_b"].offset, r["epi_c"].offset) == (0, 65536, 0)
    assert (r["sfa"].offset, r["tmem_slot"].offset) == (131072, 131172)
    assert r["smem_a"].group == r["epi_c"].group == 0
    assert (r["smem_a"].phase, r["smem_b"].phase, r["epi_c"].phase) == (0, 0, 1)
    assert r["tmem_slot"].kind == "tmem_ptr" and r["load.barriers"].kind == "barrier"
    assert r["smem_a"].dtype == "bf16" and r["smem_a"].count == 32768
    assert gemm.total == 131176
    assert plan.barrier_bytes == gemm.barrier_smem_bytes == 64
    assert r["load.barriers"].offset == 131176 and r["load.barriers"].count == 8
    assert plan.unified_bytes == gemm.unified_smem_bytes == 131240
    assert plan.alias_savings == 32768
    assert plan.peak_live == 131072 + 100 + 4
    assert plan.padding == 0
    assert plan.base_alignment == 1024
    assert r["sfa"].padding_before == 0 and r["tmem_slot"].padding_before == 0


def test_padding_is_counted_where_no_region_lives():
    s = SmemAllocator()
    s.add(SmemAllocation("small", 10, 16))
    s.add(SmemAllocation("big", 100, 128))
    s.compute_layout()
    plan = s.plan
    assert plan.region("big").offset == 0
    assert plan.region("small").offset == 112
    assert plan.region("small").padding_before == 12
    assert plan.data_total == 122
    assert plan.padding == 12 + 6  # the alignment gap, and rounding the data up to 8 bytes
    assert plan.region("small").end == 122


def test_capacity_per_architecture(gemm):
    plan = gemm.plan
    assert plan.fits("sm_90a") and plan.fits("sm_100a")
    assert not plan.fits("sm_86")
    cap = plan.capacity("sm_120")
    assert (cap.limit, cap.used, cap.overshoot) == (99 * 1024, 131240, 131240 - 99 * 1024)
    with pytest.raises(smemviz.CapacityError) as info:
        plan.check("sm_120a")
    msg = str(info.value)
    assert f"exceeds the sm_120 per-block limit of {99 * 1024:,} B by {131240 - 99 * 1024:,} B" in msg
    assert "alias group 1 [smem_a + smem_b | epi_c] (131,072 B, align 1024)" in msg
    assert gemm.check_capacity("sm_90").percent == pytest.approx(100 * 131240 / 232448)


def test_tmem_plan_and_alloc_columns():
    t = TmemAllocator(arch="sm_100a")
    acc = [TmemAllocation(f"acc{i}", 128) for i in range(2)]
    sf = TmemAllocation("sf", 16)
    t.add_alias_group([[acc[0]], [sf]])
    t.add(acc[1])
    t.compute_layout()
    assert t.total_tmem_columns == 256
    assert t.tcgen05_alloc_columns == 256
    plan = t.plan
    assert plan.memory == "tmem" and plan.unit == "cols"
    assert plan.tmem_alloc_columns == 256
    assert plan.capacity().limit == 512
    assert not plan.fits("sm_90")  # Hopper has no TMEM


@pytest.mark.parametrize("cols, expected", [(0, 0), (1, 32), (32, 32), (33, 64), (200, 256), (257, 512), (512, 512)])
def test_tcgen05_column_rounding(cols, expected):
    assert hardware.tmem_alloc_columns(cols) == expected


def test_tcgen05_rounding_refuses_more_than_a_cta_has():
    with pytest.raises(ValueError, match="exceed the 512 columns"):
        hardware.tmem_alloc_columns(513)


@pytest.mark.parametrize(
    "name, canonical",
    [
        ("sm_90a", "sm_90"),
        ("sm100a", "sm_100"),
        (90, "sm_90"),
        ("SM_120", "sm_120"),
        ("hopper", "sm_90"),
        ("sm_100f", "sm_100"),
    ],
)
def test_arch_names(name, canonical):
    assert hardware.get_arch(name).name == canonical


def test_hardware_facts():
    assert hardware.ARCHS["sm_90"].smem_per_block == 232448
    assert hardware.ARCHS["sm_80"].smem_per_block == 163 * 1024
    assert hardware.ARCHS["sm_89"].smem_per_block == 99 * 1024
    assert hardware.ARCHS["sm_100"].has_tmem and not hardware.ARCHS["sm_120"].has_tmem
    assert [hardware.bank_of(o) for o in (0, 4, 124, 128, 130)] == [0, 1, 31, 0, 0]


@pytest.mark.parametrize(
    "dtype, width",
    [
        ("f16", 16),
        ("bf16", 16),
        ("f32", 32),
        ("tf32", 32),
        ("f8e4m3", 8),
        ("f8e5m2", 8),
        ("f4e2m1", 4),
        ("i8", 8),
        ("u8", 8),
        ("i32", 32),
        ("i64", 64),
        ("bfloat16", 16),
        ("float8_e4m3fn", 8),
    ],
)
def test_dtype_names(dtype, width):
    assert dtype_width(dtype) == width


def test_dtype_objects_with_width_or_itemsize():
    class BFloat16:  # a look-alike of a CuTe DSL numeric type
        width = 16

    class NumpyLike:
        itemsize = 2

    assert dtype_width(BFloat16) == 16 and dtype_name(BFloat16) == "bf16"
    assert dtype_width(NumpyLike()) == 16
    cutlass = pytest.importorskip("cutlass")
    assert dtype_name(cutlass.Float8E4M3FN) == "f8e4m3"
    assert SmemAllocation("x", dtype=cutlass.TFloat32, count=3).size_bytes == 12


def test_text_report_lists_every_region(gemm, capsys):
    gemm.print_usage_report()
    out = capsys.readouterr().out
    assert out.startswith("[smem-layout] SMEM Usage Report")
    for name in ("smem_a *", "smem_b *", "epi_c *", "sfa", "tmem_slot", "load.barriers"):
        assert name in out
    assert "Phase 1: smem_a (65,536 B), smem_b (65,536 B)" in out
    assert "Phase 2: epi_c (32,768 B)" in out
    assert "Total:            131,240 B  (data + barriers)" in out
    assert [line for line in out.splitlines() if line.strip().startswith("Total")] == [
        "  Total:            131,240 B  (data + barriers)"
    ]  # one total, not two
    assert "Alias savings:     32,768 B" in out
    assert " 65,536 " in out  # sizes and offsets with thousands separators
    assert out == text_report(gemm.plan) + "\n"


def test_html_report_escapes_names():
    s = SmemAllocator()
    s.add(SmemAllocation("<img src=x onerror=alert(1)>", 64))
    s.compute_layout()
    html = s._repr_html_()
    assert "<img" not in html and "&lt;img src=x onerror=alert(1)&gt;" in html
    assert "<table" in html
    assert "not computed" in SmemAllocator()._repr_html_()


def test_markdown_report_escapes_pipes(gemm):
    from smemviz.analysis._report import markdown_report

    md = markdown_report(gemm.plan)
    assert "| smem_a |  | 0 | 0x0 | 65,536 | 65,536 | 1024 | 0 | G1·P1 | bf16 × 32,768 |" in md
    s = SmemAllocator()
    s.add(SmemAllocation("a|b", 8))
    s.compute_layout()
    assert "a\\|b" in markdown_report(s.plan)
    s = SmemAllocator()
    s.add(SmemAllocation("<img src=x onerror=alert(1)>", 8))
    s.compute_layout()
    md = markdown_report(s.plan)
    assert "<img" not in md and "&lt;img src=x onerror=alert(1)&gt;" in md


def test_plan_json_is_versioned_and_checked(gemm):
    data = json.loads(gemm.plan.to_json())
    assert data["schema"] == "smemviz.layout-plan" and data["version"] == 1
    assert data["summary"]["unified"] == 131240
    assert plan_from_dict(data) == gemm.plan
    with pytest.raises(ValueError, match="unsupported layout-plan version 99"):
        plan_from_dict({**data, "version": 99})
    with pytest.raises(ValueError, match="not a smemviz layout plan"):
        plan_from_dict({"regions": []})
    broken = {**data, "regions": [{"name": "x"}]}
    with pytest.raises(ValueError, match="malformed layout plan"):
        plan_from_dict(broken)


def test_plan_is_frozen(gemm):
    import dataclasses

    with pytest.raises(dataclasses.FrozenInstanceError):
        gemm.plan.data_total = 0
    with pytest.raises(dataclasses.FrozenInstanceError):
        gemm.plan.regions[0].offset = 7


def test_pipeline_group_barriers_follow_resource_barriers():
    s = SmemAllocator()
    s.add_pipeline_group(PipelineGroup("mma", 3, PipelineConfig(2)))
    s.add_resource(Resource("load", [SmemAllocation("a", 20)], PipelineConfig(3)))
    s.add_resource(Resource("member", [], PipelineConfig(5), pipeline_group=object()))  # counted by its group
    s.add_resource(Resource("preset", [], PipelineConfig(5, barrier_ptr=object())))  # already placed
    s.compute_layout()
    plan = s.plan
    assert [r.name for r in plan.barrier_regions] == ["load.barriers", "mma.barriers"]
    assert plan.region("load.barriers").offset == 24
    assert plan.region("mma.barriers").offset == 24 + 48
    assert s.barrier_smem_bytes == 48 + 3 * 2 * 16


def test_as_plan_accepts_plans_and_allocators(gemm):
    assert smemviz.as_plan(gemm) is gemm.plan
    assert smemviz.as_plan(gemm.plan) is gemm.plan
    with pytest.raises(TypeError, match="expected a LayoutPlan"):
        smemviz.as_plan(42)
