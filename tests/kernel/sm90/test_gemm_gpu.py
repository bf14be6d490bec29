"""smemviz's Hopper GEMM against torch on the GPU: small, odd, tall/skinny, batched
and 8192^3 shapes, every supported config on a small odd shape.

Skips, with the reason, where no sm_90 GPU is visible. The last run's results
are in results/gemm_h200.md.
"""

from __future__ import annotations

import pytest

pytest.importorskip("cutlass")

from smemviz.kernel import current_gpu  # noqa: E402
from smemviz.kernel.gemm import GemmConfig, supported_configs  # noqa: E402
from smemviz.kernel.gemm._host import gemm, prepare_gemm  # noqa: E402

GPU = current_gpu()
needs_hopper = pytest.mark.skipif(
    GPU is None or GPU.major != 9, reason=f"needs an sm_90 GPU visible to PyTorch (here: {GPU})"
)
pytestmark = [pytest.mark.gpu, pytest.mark.cutlass, needs_hopper]

# relative Frobenius error against an fp32 product of the same (rounded) inputs
TOLERANCE = {"f16": 2e-3, "bf16": 1.2e-2, "f8e4m3": 1e-2}


def _check(m, n, k, l, config, seed=0):  # noqa: E741
    import torch

    dt = {"f16": torch.float16, "bf16": torch.bfloat16, "f8e4m3": torch.float8_e4m3fn}[config.dtype]
    g = torch.Generator(device="cuda").manual_seed(seed)
    shape_a = (m, k) if l == 1 else (l, m, k)
    shape_b = (n, k) if l == 1 else (l, n, k)
    a = torch.randn(shape_a, generator=g, device="cuda").to(dt)
    b = torch.randn(shape_b, generator=g, device="cuda").to(dt)
    run = prepare_gemm(a, b, config)
    run.out.fill_(float("nan"))  # poison: every element must be written
    out = run()
    torch.cuda.synchronize()
    ref = a.float() @ b.float().transpose(-1, -2)
    # torch.matmul has no fp8 path: 8-bit inputs are checked against the fp32 product only
    theirs = None if config.dtype == "f8e4m3" else torch.matmul(a, b.transpose(-1, -2)).float()
    assert out.shape == ref.shape
    assert not torch.isnan(out).any(), f"{config.label()} {m}x{n}x{k}x{l}: unwritten (NaN) outputs"
    err = float((out.float() - ref).norm() / ref.norm())
    assert err < TOLERANCE[config.dtype], f"{config.label()} {m}x{n}x{k}x{l}: rel err {err:.2e}"
    if theirs is not None:
        torch_err = float((theirs - ref).norm() / ref.norm())
        assert err < 2 * torch_err + 1e-4, f"{config.label()}: rel err {err:.2e} vs torch.matmul's {torch_err:.2e}"
    return err


@pytest.mark.parametrize("config", supported_configs(), ids=lambda c: c.label().replace(" ", "-"))
def test_every_config_on_an_odd_shape(config):
    _check(333, 264, 200, 1, config)


SHAPES = [
    (128, 128, 64, 1),  # one tile, one k-tile
    (64, 8, 8, 1),  # smaller than a tile everywhere
    (1000, 1000, 1000, 1),  # tails in M, N and K
    (8192, 64, 1024, 1),  # tall
    (64, 8192, 4096, 1),  # wide, long K
    (300, 200, 136, 3),  # batched
    (77, 51, 45, 1),  # N and K not 16-byte rows: padded by the host
]


@pytest.mark.parametrize("dtype", ["f16", "bf16", "f8e4m3"])
@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: "x".join(map(str, s)))
def test_shapes(shape, dtype):
    _check(*shape, GemmConfig(dtype=dtype, tile_n=256, cluster_m=2))
    _check(*shape, GemmConfig(dtype=dtype, tile_n=128, cluster_m=1, alias_epilogue=False))


@pytest.mark.parametrize("dtype", ["f16", "bf16", "f8e4m3"])
def test_8192_cubed(dtype):
    _check(8192, 8192, 8192, 1, GemmConfig(dtype=dtype, tile_n=256, cluster_m=2))


def test_gemm_function_matches_torch():
    import torch

    a = torch.randn(256, 512, device="cuda", dtype=torch.float16)
    b = torch.randn(384, 512, device="cuda", dtype=torch.float16)
    out = gemm(a, b)
    ref = a.float() @ b.float().T
    assert float((out.float() - ref).norm() / ref.norm()) < TOLERANCE["f16"]


def test_the_launch_reuses_the_kernel_compiled_without_a_gpu():
    # compile_gemm() (fake tensors, what the sweep and the explorer compile first) and
    # prepare_gemm() (real tensors) share one compiled kernel: one compile per config
    import torch

    from smemviz.kernel.gemm._host import compile_gemm

    config = GemmConfig(dtype="bf16", tile_n=128, stages=3)
    compiled = compile_gemm(config)
    a = torch.randn(300, 136, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(200, 136, device="cuda", dtype=torch.bfloat16)
    run = prepare_gemm(a, b, config)
    assert run.compiled is compiled
    _check(300, 200, 136, 1, config)


SWIZZLE_VARIANTS = [
    GemmConfig(dtype=d, tile_n=tn, cluster_m=cm, ab_swizzle=ab, c_swizzle=c)
    for d in ("f16", "f8e4m3")
    for tn, cm in ((128, 1), (256, 2))
    for ab, c in (("interleaved", "none"), ("32B", "32B"), ("64B", "interleaved"))
]


@pytest.mark.parametrize("config", SWIZZLE_VARIANTS, ids=lambda c: c.label().replace(" ", "-"))
def test_swizzle_variants_stay_correct(config):
    # the swizzle experiments change every SMEM address TMA, WGMMA and stmatrix use: still exact
    _check(333, 264, 200, 1, config)
    _check(1000, 1000, 1000, 1, config)
