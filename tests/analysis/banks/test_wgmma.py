"""wgmma_reads: one warpgroup instruction's SMEM operand reads, and its refusals."""

from __future__ import annotations

import pytest

from smemviz.analysis.banks import WGMMA_LAYOUTS, wgmma_reads


def test_bytes_and_wavefronts():
    r = wgmma_reads(256, "bf16")
    assert r.shape == (64, 256, 16) and r.instruction == "wgmma.m64n256k16.bf16"
    assert (r.a_bytes, r.b_bytes, r.wavefronts, r.ideal, r.conflicts) == (2048, 8192, 80, 80, 0)
    assert r.wavefronts_per_warp == 20  # what ncu's per-instruction row shows
    fp8 = wgmma_reads(128, "f8e4m3")
    assert fp8.shape == (64, 128, 32) and fp8.wavefronts == (2048 + 4096) // 128
    assert wgmma_reads(64, "f16", a_in_smem=False).wavefronts == 64 * 32 // 128  # A from registers


@pytest.mark.parametrize("layout", WGMMA_LAYOUTS)
def test_every_canonical_layout_reads_conflict_free(layout):
    assert wgmma_reads(128, "f16", layout=layout).conflicts == 0


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"n": 256, "dtype": "bf16", "layout": "none"}, "canonical layouts"),
        ({"n": 12, "dtype": "bf16"}, "multiple of 8"),
        ({"n": 264, "dtype": "bf16"}, "8..256"),
        ({"n": 64, "dtype": "f32"}, "inputs must be one of"),
    ],
)
def test_refusals_name_the_problem(kwargs, match):
    with pytest.raises(ValueError, match=match):
        wgmma_reads(**kwargs)
