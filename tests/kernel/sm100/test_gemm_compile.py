"""The Blackwell GEMM traced and compiled for sm_100a on the CPU, every supported config:
the launch requests the plan's dynamic SMEM, ``tcgen05.alloc`` asks for the TMEM plan's
columns into the plan's slot, the MMA and the epilogue use the plan's accumulator columns,
and the UMMA descriptors, TMA loads and TMA stores address the plan's SMEM offsets."""

from __future__ import annotations

import pytest

pytest.importorskip("cutlass")

from smemviz.kernel._ptx import gemm_plan_facts  # noqa: E402
from smemviz.kernel.gemm import GemmConfig, gemm_layout, supported_configs  # noqa: E402
from smemviz.kernel.gemm._host import compile_gemm  # noqa: E402
from smemviz.kernel.probes._tmem import tcgen05_alloc_columns_in_ptx  # noqa: E402

from . import ARCH  # noqa: E402

pytestmark = pytest.mark.cutlass


@pytest.mark.parametrize("config", supported_configs(ARCH), ids=lambda c: c.label().replace(" ", "-"))
def test_sm100_gemm_compiles_on_the_plans(config):
    layout = gemm_layout(config)
    compiled = compile_gemm(config)
    ptx = compiled.ptx
    assert compiled.arch == ARCH and ".target sm_100a" in ptx and compiled.cubin[:4] == b"\x7fELF"
    assert compiled.dynamic_smem_bytes == layout.unified_bytes
    assert compiled.smem_alignment() >= 1024
    # the Blackwell machinery: tcgen05 MMA into TMEM, TMEM loads, TMA in and out, no WGMMA
    kind = "f8f6f4" if config.dtype == "f8e4m3" else "f16"
    assert f"tcgen05.mma.cta_group::1.kind::{kind}" in ptx and "wgmma" not in ptx
    assert "tcgen05.ld.sync.aligned.32x32b" in ptx and "tcgen05.wait::ld" in ptx
    assert "tcgen05.relinquish_alloc_permit.cta_group::1" in ptx
    assert "cp.async.bulk.tensor.3d.shared::cta.global" in ptx
    assert "cp.async.bulk.tensor.3d.global.shared::cta" in ptx
    assert tcgen05_alloc_columns_in_ptx(ptx) == [layout.tmem_plan.tmem_alloc_columns]
    disagreements = [f for f in gemm_plan_facts(layout, ptx) if not f.agrees]
    assert not disagreements, disagreements


def test_the_checks_can_fail_another_plan_disagrees():
    """Reading one config's PTX against a neighbour's plan shows the differences."""
    aliased = GemmConfig(tile_n=128, alias_epilogue=True, arch=ARCH)
    double = GemmConfig(tile_n=128, alias_epilogue=False, acc_stages=2, arch=ARCH)
    ptx = compile_gemm(aliased).ptx
    wrong = {f.fact for f in gemm_plan_facts(gemm_layout(double), ptx) if not f.agrees}
    assert "tcgen05.alloc columns" in wrong  # 128 compiled, 256 planned
    assert "tcgen05.mma accumulators (TMEM columns)" in wrong  # {0} compiled, {0, 128} planned
    assert "TMA stores from (C staging byte)" in wrong  # C staging over the stages vs apart
    assert "mbarrier.init (SMEM bytes)" in wrong


def test_explicit_stages_change_the_requested_smem_and_barriers():
    config = GemmConfig(tile_n=256, stages=2, alias_epilogue=False, acc_stages=2, arch=ARCH)
    compiled = compile_gemm(config)
    layout = gemm_layout(config)
    assert compiled.dynamic_smem_bytes == layout.unified_bytes
    assert (
        compiled.dynamic_smem_bytes
        < compile_gemm(GemmConfig(tile_n=256, alias_epilogue=False, acc_stages=2, arch=ARCH)).dynamic_smem_bytes
    )
    assert all(f.agrees for f in gemm_plan_facts(layout, compiled.ptx))
