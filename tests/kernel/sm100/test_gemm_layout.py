"""The Blackwell GEMM's plans (pure Python): the SMEM layout gains the TMEM-pointer slot
and the accumulator pipeline's barriers, the TMEM layout holds one accumulator per
buffer, and the configurations the sm_100a kernel cannot run are refused by name."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from smemviz import CapacityError, hardware
from smemviz.kernel.gemm import GEMM_DTYPES, GEMM_TILES, GemmConfig, gemm_layout, supported_configs

from . import ARCH  # noqa: E402

LIMIT = hardware.get_arch(ARCH).smem_per_block


@st.composite
def sm100_configs(draw) -> GemmConfig:
    tile_m, tile_n = draw(st.sampled_from(GEMM_TILES))
    acc = draw(st.sampled_from((1, 2)))
    alias = draw(st.booleans()) if acc == 1 else False
    stages = draw(st.one_of(st.none(), st.integers(2, 8)))
    return GemmConfig(
        dtype=draw(st.sampled_from(GEMM_DTYPES)),
        tile_m=tile_m,
        tile_n=tile_n,
        stages=stages,
        alias_epilogue=alias,
        acc_stages=acc,
        epi_stages=draw(st.integers(1, 4)),
        arch=ARCH,
    )


@given(sm100_configs())
def test_every_region_of_both_plans_is_where_the_kernel_expects_it(config):
    try:
        layout = gemm_layout(config)
    except CapacityError as exc:
        assert config.stages is not None and f"{LIMIT:,}" in str(exc)
        return
    plan = layout.plan
    assert layout.unified_bytes <= LIMIT
    slot = layout.tmem_ptr
    assert slot is not None and slot.size_bytes == hardware.TMEM_PTR_BYTES and slot.offset % 4 == 0
    # the slot overlaps no operand stage and no C staging buffer
    for region in (layout.a, layout.b, layout.c):
        assert slot.offset + 4 <= region.offset or region.offset + region.size_bytes <= slot.offset
    # two pipelines' barriers: the mainloop's, then the accumulators'
    mainloop, accumulators = plan.barrier_regions
    assert mainloop.size == 16 * layout.stages and accumulators.size == 16 * config.acc_stages
    # accumulators: tile_n fp32 columns each, side by side, inside the tcgen05.alloc request
    tmem = layout.tmem_plan
    assert layout.acc_columns() == tuple(config.tile_n * s for s in range(config.acc_stages))
    assert tmem.data_total == config.tile_n * config.acc_stages <= tmem.tmem_alloc_columns <= hardware.TMEM_COLUMNS
    assert tmem.tmem_alloc_columns & (tmem.tmem_alloc_columns - 1) == 0


def test_the_blackwell_grid_is_dtype_tile_and_three_accumulator_modes():
    configs = supported_configs(ARCH)
    assert len(configs) == len(GEMM_DTYPES) * len(GEMM_TILES) * 3
    assert {(c.alias_epilogue, c.acc_stages) for c in configs} == {(True, 1), (False, 1), (False, 2)}
    assert all(c.label().endswith(f"acc{c.acc_stages}") for c in configs)


def test_two_128x256_accumulators_take_all_512_columns():
    layout = gemm_layout(GemmConfig(tile_n=256, alias_epilogue=False, acc_stages=2, arch=ARCH))
    assert layout.tmem_plan.tmem_alloc_columns == 512
    assert layout.acc_columns() == (0, 256)


def test_hopper_layouts_are_unchanged_by_the_tmem_fields():
    layout = gemm_layout(GemmConfig())
    assert layout.tmem is None and layout.tmem_ptr is None and layout.acc_columns() == ()
    assert set(layout.offsets()) == {"a", "b", "c", "barriers"}
    assert "acc" not in GemmConfig().label()


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"cluster_m": 2}, r"cluster 2x1: the sm_100a kernel runs one CTA per cluster"),
        ({"alias_epilogue": True, "acc_stages": 2}, r"acc_stages=2.*cannot share"),
        ({"acc_stages": 3, "alias_epilogue": False}, r"acc_stages must be 1 or 2, got 3"),
    ],
)
def test_configs_the_blackwell_kernel_cannot_run_are_refused(fields, message):
    with pytest.raises(ValueError, match=message):
        GemmConfig(arch=ARCH, **fields)


def test_hopper_has_no_accumulator_buffers_to_choose():
    with pytest.raises(ValueError, match="acc_stages=2 needs tensor memory"):
        GemmConfig(acc_stages=2, alias_epilogue=False)


def test_sm_counts_come_from_hardware():
    assert hardware.sm_count("sm_100a") == 148 and hardware.sm_count("hopper") == 132
    with pytest.raises(ValueError, match="no SM count is recorded for sm_80"):
        hardware.sm_count("sm_80")
