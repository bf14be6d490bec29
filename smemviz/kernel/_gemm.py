"""Compile and run smemviz's GEMM: host-side checks, fake tensors for CPU compiles,
torch tensors and a correctness check for GPU runs."""

from __future__ import annotations

from typing import Any

from ._compile import CompiledKernel, compile_host, normalise_arch, plan_key
from ._emit import require_cutlass, resolve_dtype
from ._gemm_common import GemmConfig, GemmLayout, gemm_layout

__all__ = ["compile_gemm", "gemm_kernel"]


def _kernel_for(layout: GemmLayout, arch: str) -> Any:
    family = normalise_arch(arch)
    if not family.startswith("sm_90"):
        raise ValueError(f"smemviz's GEMM is written for Hopper (sm_90a); {family} has no kernel here yet")
    from ._gemm_sm90 import Sm90Gemm

    return Sm90Gemm(layout)


def gemm_kernel(config: GemmConfig) -> tuple[GemmLayout, Any]:
    """The layout of ``config`` and the kernel object built on it."""
    layout = gemm_layout(config)
    return layout, _kernel_for(layout, config.arch)


def _fake_operands(dtype: str) -> tuple[Any, Any, Any]:
    """A (m, k, l), B (n, k, l), C (m, n, l) with symbolic sizes, rows 16-byte aligned."""
    require_cutlass()
    from cutlass import cute
    from cutlass.cute.runtime import make_fake_tensor

    el = resolve_dtype(dtype)
    per_row = 128 // el.width
    m, n, k, l = (cute.sym_int32(symbol=s) for s in "mnkl")  # noqa: E741
    k_row = cute.sym_int32(divisibility=per_row, symbol="lda")
    n_row = cute.sym_int32(divisibility=per_row, symbol="ldc")
    a = make_fake_tensor(el, (m, k, l), stride=(k_row, 1, cute.sym_int64(divisibility=per_row)), assumed_align=16)
    b = make_fake_tensor(el, (n, k, l), stride=(k_row, 1, cute.sym_int64(divisibility=per_row)), assumed_align=16)
    c = make_fake_tensor(el, (m, n, l), stride=(n_row, 1, cute.sym_int64(divisibility=per_row)), assumed_align=16)
    return a, b, c


def compile_gemm(config: GemmConfig | None = None, arch: str | None = None) -> CompiledKernel:
    """Trace and compile the GEMM for ``config`` (no GPU needed), cached by config and layout.

    The compiled kernel takes any M, N, K, L (symbolic sizes); rows must be 16-byte multiples.
    """
    config = config or GemmConfig()
    if arch is not None:
        from dataclasses import replace

        config = replace(config, arch=arch)
    layout, kernel = gemm_kernel(config)
    key = ("gemm", layout.config, plan_key(layout.plan))
    return compile_host(f"gemm_{config.dtype}", kernel, _fake_operands(config.dtype), config.arch, key=key)
