"""The probe's host side, with no DSL and no GPU: the write schedule, the
byte-exact tag values, the snapshot check and the result's display."""

from __future__ import annotations

import struct
import subprocess
import sys

import pytest

from smemviz import SmemAllocation, SmemAllocator
from smemviz.kernel import NoGpuError, current_gpu
from smemviz.kernel.probes._schedule import TAG_COUNT, TAG_FIRST, schedule_for
from smemviz.kernel.probes._smem import ProbeResult, check_snapshots
from tools import kernel_layouts as examples

_PACK = {
    "u8": "<B",
    "i8": "<b",
    "u16": "<H",
    "i16": "<h",
    "u32": "<I",
    "i32": "<i",
    "u64": "<Q",
    "i64": "<q",
    "f16": "<e",
    "f32": "<f",
    "f64": "<d",
}


def _element_bytes(dtype: str, value) -> bytes:
    if dtype == "bf16":
        return struct.pack("<f", value)[2:]
    return struct.pack(_PACK[dtype], value)


@pytest.mark.parametrize("name", list(examples.SMEM_LAYOUTS))
def test_every_written_element_is_its_tag_repeated(name):
    schedule = schedule_for(examples.smem_layout(name).plan)
    for w in schedule.writes:
        raw = _element_bytes(w.dtype, w.value)
        assert raw == bytes([w.tag]) * len(raw), (w.name, w.dtype, w.value, raw)
        assert TAG_FIRST <= w.tag < TAG_FIRST + TAG_COUNT
        assert w.count * len(raw) + w.tail_count == w.size, w


def test_typed_regions_are_written_through_their_own_type_when_exact():
    writes = {w.name: w for w in schedule_for(examples.smem_layout("typed_mix").plan).writes}
    for name, dtype in [
        ("a_bf16", "bf16"),
        ("b_f16", "f16"),
        ("scale_f32", "f32"),
        ("acc_f64", "f64"),
        ("idx_i32", "i32"),
    ]:
        assert writes[name].dtype == dtype and writes[name].through_own_type
    assert not writes["q_fp8"].through_own_type and writes["q_fp8"].dtype == "u32"
    assert writes["w_fp4"].size == 39  # 77 x 4 bits, rounded up
    assert writes["raw"].dtype == "u32"


def test_schedule_steps_follow_alias_phases():
    allocator = examples.smem_layout("alias_groups")
    plan = allocator.plan
    schedule = schedule_for(plan)
    assert len(schedule.steps) == 3  # the 3-phase group sets the count
    for step, writes in enumerate(schedule.steps):
        for w in writes:
            region = plan.regions[w.region_index]
            assert (region.phase if region.group is not None else 0) == step
    # phase 2 of group 1 overwrites phase 1 where they overlap
    after0, after1 = schedule.expected(0), schedule.expected(1)
    epi = plan.region("epilogue_c")
    main_a = plan.region("mainloop_a")
    tags = {w.name: w.tag for w in schedule.writes}
    assert after0[main_a.offset] == tags["mainloop_a"]
    assert after1[epi.offset] == tags["epilogue_c"]
    assert after1[plan.region("persistent").offset] == tags["persistent"]


def _perfect(schedule):
    return [schedule.expected(s) for s in range(len(schedule.steps))]


def test_check_passes_a_perfect_readback_and_names_a_corrupted_region():
    plan = examples.smem_layout("odd_alignments").plan
    schedule = schedule_for(plan)
    checks, stray = check_snapshots(plan, schedule, _perfect(schedule))
    assert stray == 0 and all(c.ok for c in checks)

    target = plan.region("odd3_9B_align8")
    snaps = _perfect(schedule)
    bad = bytearray(snaps[0])
    bad[target.offset + 4] ^= 0xFF
    checks, stray = check_snapshots(plan, schedule, [bytes(bad)])
    failed = [c for c in checks if not c.ok]
    assert [c.name for c in failed] == ["odd3_9B_align8"] and stray == 0
    assert failed[0].first_bad_offset == target.offset + 4 and failed[0].bad_bytes == 1
    assert failed[0].found == snaps[0][target.offset + 4] ^ 0xFF


def test_check_counts_writes_outside_every_region_as_stray():
    plan = examples.smem_layout("odd_alignments").plan
    assert plan.padding > 0
    schedule = schedule_for(plan)
    snap = bytearray(_perfect(schedule)[0])
    covered = set()
    for r in plan.regions:
        covered.update(range(r.offset, r.end))
    gap = next(i for i in range(plan.unified_bytes) if i not in covered)
    snap[gap] = 0x42
    checks, stray = check_snapshots(plan, schedule, [bytes(snap)])
    assert stray == 1 and all(c.ok for c in checks)


def test_check_fails_a_standalone_region_clobbered_in_a_later_phase():
    plan = examples.smem_layout("alias_groups").plan
    schedule = schedule_for(plan)
    snaps = _perfect(schedule)
    last = bytearray(snaps[-1])
    persistent = plan.region("persistent")
    last[persistent.end - 1] = 0
    snaps[-1] = bytes(last)
    checks, _ = check_snapshots(plan, schedule, snaps)
    assert [c.name for c in checks if not c.ok] == ["persistent"]


def _result(plan, snaps, kernel_smem=None):
    schedule = schedule_for(plan)
    checks, stray = check_snapshots(plan, schedule, snaps)
    return ProbeResult(
        plan=plan,
        gpu="test",
        arch="sm_90a",
        checks=tuple(checks),
        stray_bytes=stray,
        requested_smem_bytes=plan.unified_bytes,
        kernel_smem_bytes=plan.unified_bytes if kernel_smem is None else kernel_smem,
        base_mod_1024=0,
        snapshots=tuple(snaps),
    )


def test_result_passes_only_when_sizes_and_bytes_agree():
    plan = examples.smem_layout("alias_groups").plan
    snaps = _perfect(schedule_for(plan))
    assert _result(plan, snaps).passed
    assert not _result(plan, snaps, kernel_smem=plan.unified_bytes - 8).passed


def test_result_html_needs_no_plotly_and_flags_failures():
    plan = examples.smem_layout("odd_alignments").plan
    schedule = schedule_for(plan)
    snap = bytearray(_perfect(schedule)[0])
    snap[plan.region("odd0_3B_align1").offset] = 0
    html = _result(plan, [bytes(snap)])._repr_html_()
    assert "FAIL" in html and "odd0_3B_align1" in html and "u16_at_2" in html
    assert "plotly" not in html


def test_result_figure_draws_planned_and_measured_extents():
    pytest.importorskip("plotly")
    plan = examples.smem_layout("alias_groups").plan
    result = _result(plan, _perfect(schedule_for(plan)))
    fig = result.figure()
    planned, measured = fig.data
    assert list(planned.base) == [c.offset for c in result.checks]
    assert list(planned.x) == [c.size for c in result.checks]
    # on a perfect readback every region's tag is found exactly where planned
    spans = sorted(zip(measured.y, measured.base, measured.x))
    expected = sorted((f"{c.name} (#{i})", c.offset, c.size) for i, c in enumerate(result.checks))
    assert [(y, b, x) for y, b, x in spans] == expected


def test_probe_without_a_gpu_says_so():
    if current_gpu() is not None:
        pytest.skip("a GPU is visible here")
    allocator = SmemAllocator()
    allocator.add(SmemAllocation("x", size_bytes=64))
    allocator.compute_layout()
    import smemviz

    with pytest.raises(NoGpuError, match="Compile-only still works"):
        smemviz.probe(allocator)


def test_importing_the_kernel_bridge_does_not_import_the_dsl():
    code = "import sys, smemviz.kernel, smemviz; smemviz.probe; print('cutlass' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "False"
