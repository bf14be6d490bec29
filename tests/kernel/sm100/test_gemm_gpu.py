"""smemviz's Blackwell GEMM against torch on an sm_100 GPU: every supported config on an
odd shape, the shape grid of the Hopper tests, a persistent grid with more tiles than
SMs, 8192^3.

No Blackwell GPU has been available to this project: these tests have never run.
They skip, with the reason, where no sm_100-class GPU is visible.
"""

from __future__ import annotations

import pytest

pytest.importorskip("cutlass")

from smemviz.kernel import current_gpu  # noqa: E402
from smemviz.kernel.gemm import GemmConfig, supported_configs  # noqa: E402
from smemviz.kernel.gemm._host import gemm  # noqa: E402

from ..sm90.test_gemm_gpu import SHAPES, TOLERANCE, _check  # noqa: E402
from . import ARCH  # noqa: E402

GPU = current_gpu()
needs_blackwell = pytest.mark.skipif(
    GPU is None or GPU.arch != ARCH, reason=f"needs an sm_100 GPU visible to PyTorch (here: {GPU})"
)
pytestmark = [pytest.mark.gpu, pytest.mark.blackwell, pytest.mark.cutlass, needs_blackwell]


@pytest.mark.parametrize("config", supported_configs(ARCH), ids=lambda c: c.label().replace(" ", "-"))
def test_every_config_on_an_odd_shape(config):
    _check(333, 264, 200, 1, config)


@pytest.mark.parametrize("dtype", ["f16", "bf16"])
@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: "x".join(map(str, s)))
def test_shapes(shape, dtype):
    _check(*shape, GemmConfig(dtype=dtype, tile_n=256, alias_epilogue=True, arch=ARCH))
    _check(*shape, GemmConfig(dtype=dtype, tile_n=128, alias_epilogue=False, acc_stages=2, arch=ARCH))


def test_persistent_grid_with_several_tiles_per_cta():
    # 40 x 16 = 640 tiles of 128x256 over at most 148 CTAs: each CTA reuses both accumulators
    _check(5120, 4096, 512, 1, GemmConfig(tile_n=256, alias_epilogue=False, acc_stages=2, arch=ARCH))


@pytest.mark.parametrize("dtype", ["f16", "bf16"])
def test_8192_cubed(dtype):
    _check(8192, 8192, 8192, 1, GemmConfig(dtype=dtype, tile_n=256, alias_epilogue=False, acc_stages=2, arch=ARCH))


def test_gemm_function_matches_torch():
    import torch

    a = torch.randn(256, 512, device="cuda", dtype=torch.float16)
    b = torch.randn(384, 512, device="cuda", dtype=torch.float16)
    out = gemm(a, b, GemmConfig(arch=ARCH))
    ref = a.float() @ b.float().T
    assert float((out.float() - ref).norm() / ref.norm()) < TOLERANCE["f16"]
