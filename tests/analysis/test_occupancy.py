"""Occupancy from shared memory (and threads, registers), and the architecture
smemviz assumes when none is given."""

from __future__ import annotations

import os
import stat

import pytest
from hypothesis import given
from hypothesis import strategies as st

from smemviz import (
    LayoutPlan,
    SmemAllocation,
    SmemAllocator,
    TmemAllocation,
    TmemAllocator,
    device,
    hardware,
    occupancy,
)
from smemviz.analysis import text_report
from smemviz.analysis._occupancy import smem_footprint
from smemviz.cli import main


@pytest.fixture(autouse=True)
def no_detected_arch(monkeypatch):
    monkeypatch.delenv("CUTE_DSL_ARCH", raising=False)
    monkeypatch.setattr(device, "_gpu_arch", lambda: None)


# -- occupancy -------------------------------------------------------------------------------


def test_hopper_gemm_struct_size_is_one_cta_and_two_need_half():
    occ = occupancy(230_400, "sm_90a")
    assert (occ.ctas, occ.limiter, occ.footprint) == (1, "shared memory", 231_424)
    # 228 KiB per SM shared by two CTAs, minus each CTA's 1 KiB reservation
    assert occ.next_smem_per_cta == 228 * 1024 // 2 - 1024 == 115_712
    assert occ.smem_to_save == 230_400 - 115_712
    assert occupancy(115_712, "sm_90").ctas == 2
    assert occupancy(115_713, "sm_90").ctas == 1
    assert occ.carveout_kib == 228
    assert "1 CTA/SM (limited by shared memory); 2 CTAs/SM need <= 115,712 B per CTA" in occ.message()


def test_over_the_per_block_limit_no_cta_fits():
    occ = occupancy(232_449, "sm_90")
    assert occ.ctas == 0 and occ.by_smem == 0
    assert occ.next_smem_per_cta == hardware.ARCHS["sm_90"].smem_per_block
    assert "no CTA fits" in occ.message()


def test_smaller_archs_and_carveouts():
    ada = occupancy(48 * 1024, "sm_89")  # 100 KiB per SM: 2 x (48 + 1) KiB
    assert (ada.ctas, ada.carveout_kib) == (2, 100)
    assert occupancy(99 * 1024, "sm_86").ctas == 1
    assert occupancy(0, "sm_86").ctas == 16  # the resident-CTA limit of 8.6
    assert occupancy(0, "sm_86").limiter == "CTA slots"
    tiny = occupancy(7 * 1024, "sm_90")
    assert tiny.ctas == 28 and tiny.carveout_kib == 228  # 28 x 8 KiB = 224 KiB
    assert occupancy(3 * 1024, "sm_90").carveout_kib == 132  # 32 x 4 KiB = 128 KiB


def test_threads_and_registers_limit_too():
    # 384 threads = 12 warps: 5 CTAs by warps (64 / 12); 168 registers x 32 = 5376 per warp: 12 warps, 1 CTA
    occ = occupancy(16 * 1024, "sm_90", threads=384, registers=168)
    assert (occ.by_smem, occ.by_threads, occ.by_registers, occ.ctas) == (13, 5, 1, 1)
    assert occ.limiter == "registers" and occ.next_smem_per_cta is None
    assert occupancy(16 * 1024, "sm_90", threads=384).ctas == 5
    assert occupancy(16 * 1024, "sm_90", threads=384).limiter == "threads"
    assert occupancy(100 * 1024, "sm_90", threads=128, registers=64).limiter == "shared memory"


def test_bad_numbers_are_refused():
    with pytest.raises(ValueError, match="threads per CTA must be 1..1024, got 2048"):
        occupancy(0, "sm_90", threads=2048)
    with pytest.raises(ValueError, match="need threads"):
        occupancy(0, "sm_90", registers=32)
    with pytest.raises(ValueError, match="registers per thread must be 1..255, got 300"):
        occupancy(0, "sm_90", threads=128, registers=300)
    with pytest.raises(ValueError, match=">= 0"):
        occupancy(-1, "sm_90")


@given(st.sampled_from(sorted(hardware.ARCHS)), st.integers(0, 240 * 1024))
def test_the_count_is_the_most_footprints_the_sm_holds(arch_name, smem_bytes):
    arch = hardware.ARCHS[arch_name]
    occ = occupancy(smem_bytes, arch)
    if smem_bytes > arch.smem_per_block:
        assert occ.ctas == 0
        return
    n = occ.by_smem
    assert n * smem_footprint(smem_bytes) <= arch.smem_per_sm < (n + 1) * smem_footprint(smem_bytes)
    if occ.next_smem_per_cta is not None:
        # the largest SMEM per CTA that fits one more CTA (allocation granularity may give even more)
        assert occupancy(occ.next_smem_per_cta, arch).ctas > occ.ctas
        assert occupancy(occ.next_smem_per_cta + 1, arch).ctas <= occ.ctas
        assert (
            occupancy(occ.next_smem_per_cta + 1, arch).ctas <= occ.ctas
            or occ.next_smem_per_cta + 1 > arch.smem_per_block
        )


def test_plan_occupancy_report_and_cli(tmp_path, capsys):
    s = SmemAllocator("sm_90")
    s.add(SmemAllocation("sA", 7 * 16384, 1024))
    s.add(SmemAllocation("sB", 7 * 16384, 1024))
    s.compute_layout()
    plan = s.plan
    assert occupancy(plan).ctas == 1
    assert occupancy(plan, threads=128, registers=255).by_registers == 2
    assert "Occupancy sm_90: 1 CTA/SM" in text_report(plan)
    t = TmemAllocator()
    t.add(TmemAllocation("acc", 256))
    t.compute_layout()
    assert occupancy(t.plan) is None
    path = tmp_path / "p.json"
    path.write_text(plan.to_json())
    assert main(["check", str(path), "--threads", "384", "--registers", "168"]) == 0
    assert "occupancy sm_90: 1 CTA/SM (limited by shared memory)" in capsys.readouterr().out


# -- the arch assumed when none is given -------------------------------------------------------


def unjudged_plan() -> LayoutPlan:
    s = SmemAllocator()
    s.add(SmemAllocation("sA", 300 * 1024))
    s.compute_layout()
    return s.plan


def test_with_no_arch_anywhere_nothing_is_judged_against_sm90():
    plan = unjudged_plan()
    cap = plan.capacity()
    assert cap.arch is None and cap.fits and not cap.judged
    assert "no arch given" in cap.message()
    assert "no arch given" in text_report(plan) and "fits the sm_90" not in text_report(plan)
    assert occupancy(plan) is None
    with pytest.raises(ValueError, match="no arch to check"):
        plan.check()
    # an explicit arch still judges
    assert not plan.fits("sm_90")


def test_cute_dsl_arch_is_the_default(monkeypatch):
    monkeypatch.setenv("CUTE_DSL_ARCH", "sm_80a")
    plan = unjudged_plan()
    assert plan.capacity().arch == "sm_80"
    assert not plan.capacity().fits
    assert device.detect_arch() == (hardware.ARCHS["sm_80"], "$CUTE_DSL_ARCH=sm_80a")
    monkeypatch.setenv("CUTE_DSL_ARCH", "sm_75")  # not one smemviz knows: ignored
    assert device.detect_arch() is None


def test_the_gpu_present_is_the_default(monkeypatch, tmp_path):
    monkeypatch.undo()  # the real detector, fed by a stand-in nvidia-smi
    monkeypatch.delenv("CUTE_DSL_ARCH", raising=False)
    fake = tmp_path / "nvidia-smi"
    fake.write_text("#!/bin/sh\necho '9.0, NVIDIA H200'\n")
    fake.chmod(fake.stat().st_mode | stat.S_IEXEC)
    monkeypatch.setenv("PATH", f"{tmp_path}{os.pathsep}{os.environ['PATH']}")
    device._gpu_arch.cache_clear()
    try:
        assert device.detect_arch() == (hardware.ARCHS["sm_90"], "GPU NVIDIA H200")
        assert unjudged_plan().capacity().arch == "sm_90"
        fake.write_text("#!/bin/sh\nexit 9\n")
        device._gpu_arch.cache_clear()
        assert device.detect_arch() is None
    finally:
        device._gpu_arch.cache_clear()


def test_tmem_plans_fall_back_to_a_tmem_arch(monkeypatch):
    monkeypatch.setenv("CUTE_DSL_ARCH", "sm_90a")  # Hopper has no TMEM: TMEM is judged on sm_100
    t = TmemAllocator()
    t.add(TmemAllocation("acc", 256))
    t.compute_layout()
    assert t.plan.capacity().arch == "sm_100"


def test_cli_check_takes_cute_dsl_arch(monkeypatch, tmp_path, capsys):
    path = tmp_path / "p.json"
    path.write_text(unjudged_plan().to_json())
    assert main(["check", str(path)]) == 2
    assert "no architecture to check against" in capsys.readouterr().err
    monkeypatch.setenv("CUTE_DSL_ARCH", "sm_100a")
    assert main(["check", str(path)]) == 1
    assert "exceeds the sm_100 per-block limit" in capsys.readouterr().err


def test_figure_without_an_arch_draws_no_limit():
    pytest.importorskip("plotly")
    from smemviz.figures import smem_figure

    fig = smem_figure(unjudged_plan())
    assert "no arch given" in fig.layout.title.text
    assert not fig.layout.shapes
    assert len(smem_figure(unjudged_plan(), arch="sm_90").layout.shapes) == 2


def test_the_smem_map_marks_what_one_more_cta_per_sm_would_take():
    pytest.importorskip("plotly")
    from smemviz.figures import smem_figure

    s = SmemAllocator()
    s.add(SmemAllocation("sA", 7 * 16384, 1024))
    s.add(SmemAllocation("sB", 7 * 16384, 1024))
    s.compute_layout()
    fig = smem_figure(s, arch="sm_90")
    marks = [sh for sh in fig.layout.shapes if sh.line.dash == "dot"]
    assert [m.x0 for m in marks] == [115_712]
    assert any(a.text == "2 CTAs/SM: <= 115,712 B (113 KiB)" for a in fig.layout.annotations), [
        a.text for a in fig.layout.annotations
    ]
    over = SmemAllocator()
    over.add(SmemAllocation("big", 240 * 1024))
    over.compute_layout()
    assert not [sh for sh in smem_figure(over, arch="sm_90").layout.shapes if sh.line.dash == "dot"]


def test_the_model_matches_the_h200_driver_as_recorded():
    """results/occupancy_h200.json holds what the CUDA driver said on the lent H200
    (tests/analysis/test_occupancy_gpu.py asks it again where a GPU is present)."""
    import json

    from ..helpers import ROOT

    recorded = json.loads((ROOT / "results" / "occupancy_h200.json").read_text())
    facts = recorded["attrs"]
    h200 = hardware.arch_of_capability(facts["major"], facts["minor"])
    assert (facts["smem_sm"], facts["optin"], facts["blocks_sm"], facts["threads_sm"]) == (
        h200.smem_per_sm,
        h200.smem_per_block,
        h200.max_ctas_per_sm,
        h200.max_warps_per_sm * hardware.WARP_THREADS,
    )
    assert (facts["reserved"], facts["regs_sm"]) == (hardware.SMEM_RESERVED_PER_CTA, hardware.REGISTERS_PER_SM)
    rows = recorded["rows"]
    assert len(rows) == 56
    ours = [occupancy(smem, h200, threads=threads, registers=facts["regs"]).ctas for threads, smem, _ in rows]
    assert ours == [ctas for _, _, ctas in rows]


def test_the_report_says_where_an_assumed_arch_came_from(monkeypatch):
    monkeypatch.setenv("CUTE_DSL_ARCH", "sm_100a")
    report = text_report(unjudged_plan())
    assert "exceeds the sm_100 per-block limit" in report
    assert "(arch sm_100 assumed from $CUTE_DSL_ARCH=sm_100a)" in report
    s = SmemAllocator("sm_90")
    s.add(SmemAllocation("sA", 1024))
    s.compute_layout()
    assert "assumed" not in text_report(s.plan)  # an arch the allocator was given is not assumed
