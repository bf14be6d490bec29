"""The GEMM's operands on the GPU: what a measurement or a profiled launch multiplies."""

from __future__ import annotations

from typing import Any

from ._config import GemmProblem

__all__ = ["random_operands"]


def random_operands(dtype: str, problem: GemmProblem, seed: int = 0) -> tuple[Any, Any]:
    """Random normal A (m x k) and B (n x k) on the GPU (batched when ``l > 1``)."""
    import torch

    dt = {"f16": torch.float16, "bf16": torch.bfloat16, "f8e4m3": torch.float8_e4m3fn}[dtype]
    g = torch.Generator(device="cuda").manual_seed(seed)
    batch = (problem.l,) if problem.l > 1 else ()
    a = torch.randn((*batch, problem.m, problem.k), generator=g, device="cuda").to(dt)
    b = torch.randn((*batch, problem.n, problem.k), generator=g, device="cuda").to(dt)
    return a, b
