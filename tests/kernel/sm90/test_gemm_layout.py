"""The GEMM's SMEM layout (pure Python, no CuTe DSL): stages that fit, alignment,
what aliasing the epilogue buys, refusals that name the numbers."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from smemviz import CapacityError, hardware
from smemviz.kernel.gemm import (
    GEMM_CLUSTERS,
    GEMM_DTYPES,
    GEMM_TILES,
    SWIZZLE_128B_ALIGNMENT,
    GemmConfig,
    GemmProblem,
    gemm_layout,
    max_stages,
    supported_configs,
)

from . import ARCH

LIMIT = hardware.get_arch(ARCH).smem_per_block


def test_default_stages_are_the_most_that_fit():
    for config in supported_configs():
        layout = gemm_layout(config)
        assert layout.unified_bytes <= LIMIT
        with pytest.raises(CapacityError):
            gemm_layout(config, stages=layout.stages + 1)


def test_aliasing_the_epilogue_buys_a_stage_at_128x128_but_not_at_128x256():
    assert gemm_layout(GemmConfig(tile_n=128, alias_epilogue=True)).stages == 7
    assert gemm_layout(GemmConfig(tile_n=128, alias_epilogue=False)).stages == 6
    assert gemm_layout(GemmConfig(tile_n=256, alias_epilogue=True)).stages == 4
    assert gemm_layout(GemmConfig(tile_n=256, alias_epilogue=False)).stages == 4


def test_fp8_inputs_take_twice_the_k_per_stage_and_write_f16():
    layout = gemm_layout(GemmConfig(dtype="f8e4m3", tile_n=128))
    assert layout.config.tile_k == 128 and layout.config.out_dtype == "f16"
    assert layout.a.size_bytes == layout.stages * 128 * 128
    assert layout.c.size_bytes == 128 * 32 * 2 * 2
    assert layout.stages == gemm_layout(GemmConfig(dtype="f16", tile_n=128)).stages


def test_regions_sizes_offsets_and_barriers():
    layout = gemm_layout(GemmConfig(tile_n=256, stages=3, alias_epilogue=False))
    offsets = layout.offsets()
    assert layout.a.size_bytes == 3 * 128 * 64 * 2 and layout.b.size_bytes == 3 * 256 * 64 * 2
    assert layout.c.size_bytes == 128 * 32 * 2 * 2
    for name in ("a", "b", "c"):
        assert offsets[name] % SWIZZLE_128B_ALIGNMENT == 0
    barriers = layout.plan.barrier_regions
    assert len(barriers) == 1 and barriers[0].size == 3 * 16
    assert layout.unified_bytes == offsets["barriers"] + 3 * 16


def test_aliased_c_staging_shares_the_operand_bytes():
    layout = gemm_layout(GemmConfig(tile_n=128, alias_epilogue=True))
    a, c = layout.plan.region("gemm.a_stages"), layout.plan.region("gemm.c_staging")
    assert a.group == c.group is not None and a.phase != c.phase
    assert c.offset == a.offset
    assert layout.plan.alias_savings == layout.c.size_bytes


def test_an_explicit_stage_count_over_the_limit_is_refused_with_numbers():
    with pytest.raises(CapacityError, match=r"232,448.*by [\d,]+ B"):
        gemm_layout(GemmConfig(tile_n=256, stages=5))


def test_bad_configs_are_refused_by_name():
    with pytest.raises(ValueError, match="tile 64x64"):
        GemmConfig(tile_m=64, tile_n=64)
    with pytest.raises(ValueError, match="dtype 'f32'"):
        GemmConfig(dtype="f32")
    with pytest.raises(ValueError, match="cluster 4x1"):
        GemmConfig(cluster_m=4)
    with pytest.raises(ValueError, match="stages"):
        GemmConfig(stages=1)
    with pytest.raises(ValueError, match="GemmProblem.k"):
        GemmProblem(8, 8, 0)


def test_padding_keeps_tma_rows_16_byte_multiples():
    assert GemmProblem(77, 51, 45).padded("f16") == GemmProblem(77, 56, 48)
    assert GemmProblem(64, 64, 64).padded("bf16") == GemmProblem(64, 64, 64)
    # 8-bit inputs: K rows of 16 elements; C is f16, so N rows of 8
    assert GemmProblem(77, 51, 45).padded("f8e4m3") == GemmProblem(77, 56, 48)
    assert GemmProblem(8192, 8192, 8192).flops == 2 * 8192**3


@settings(max_examples=60, deadline=None)
@given(
    dtype=st.sampled_from(GEMM_DTYPES),
    tile=st.sampled_from(GEMM_TILES),
    cluster=st.sampled_from(GEMM_CLUSTERS),
    alias=st.booleans(),
    epi_stages=st.integers(1, 4),
    data=st.data(),
)
def test_every_layout_up_to_the_maximum_fits_and_keeps_regions_apart(dtype, tile, cluster, alias, epi_stages, data):
    base = GemmConfig(
        dtype=dtype,
        tile_m=tile[0],
        tile_n=tile[1],
        cluster_m=cluster[0],
        cluster_n=cluster[1],
        alias_epilogue=alias,
        epi_stages=epi_stages,
    )
    stages = data.draw(st.integers(2, max_stages(base)))
    layout = gemm_layout(base, stages=stages)
    plan = layout.plan
    assert plan.unified_bytes <= LIMIT
    a, b, c = (plan.region(n) for n in ("gemm.a_stages", "gemm.b_stages", "gemm.c_staging"))
    assert a.end <= b.offset or b.end <= a.offset  # operands never overlap
    overlaps_c = [r for r in (a, b) if not (r.end <= c.offset or c.end <= r.offset)]
    if not alias:
        assert overlaps_c == []
    for r in (a, b, c):
        assert r.offset % SWIZZLE_128B_ALIGNMENT == 0
    assert plan.barrier_regions[0].offset >= max(a.end, b.end, c.end)
