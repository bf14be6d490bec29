"""Compile and run smemviz's GEMM: host-side checks, fake tensors for CPU compiles,
torch tensors and a correctness check for GPU runs."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .._emit import require_cutlass, resolve_dtype
from ._compile import CompiledKernel, compile_host, normalise_arch, plan_key
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


# -- running on a GPU (PyTorch tensors) ---------------------------------------------------


def _torch_dtype(torch: Any, dtype: str) -> Any:
    return {"f16": torch.float16, "bf16": torch.bfloat16}[dtype]


def _batched(t: Any) -> Any:
    return t.unsqueeze(0) if t.dim() == 2 else t


def _pad_last(torch: Any, t: Any, size: int) -> Any:
    """``t`` with its last dimension zero-padded to ``size`` (a copy only when needed)."""
    if t.shape[-1] == size:
        return t.contiguous()
    out = torch.zeros((*t.shape[:-1], size), dtype=t.dtype, device=t.device)
    out[..., : t.shape[-1]] = t
    return out


def _cute_view(t: Any) -> Any:
    """A torch (l, rows, cols) tensor as the kernel's (rows, cols, l) cute tensor."""
    from cutlass.cute.runtime import from_dlpack

    return from_dlpack(t.permute(1, 2, 0), assumed_align=16).mark_layout_dynamic(leading_dim=1)


@dataclass(frozen=True)
class PreparedGemm:
    """A GEMM ready to launch again and again on fixed tensors (for timing)."""

    config: GemmConfig
    compiled: CompiledKernel
    out: Any = field(repr=False)
    _args: tuple = field(repr=False, default=())
    _result: Any = field(repr=False, default=None)
    _keep: tuple = field(repr=False, default=())  # padded inputs the launch reads

    def __call__(self) -> Any:
        self.compiled(*self._args)
        return self._result


def prepare_gemm(a: Any, b: Any, config: GemmConfig | None = None) -> PreparedGemm:
    """Set up ``a @ b.T`` for CUDA tensors ``a`` (m, k) or (l, m, k) and ``b`` (n, k) or (l, n, k).

    N and K are zero-padded to 16-byte rows when they are not (TMA's rule); the
    result is sliced back. The kernel is compiled once per config (cached).
    """
    import torch

    from ._gemm_common import GemmProblem

    config = config or GemmConfig()
    a3, b3 = _batched(a), _batched(b)
    if a3.dtype != b3.dtype or a3.dtype != _torch_dtype(torch, config.dtype):
        raise TypeError(f"GEMM {config.label()}: a is {a3.dtype} and b is {b3.dtype}; both must be {config.dtype}")
    if a3.shape[0] != b3.shape[0] or a3.shape[2] != b3.shape[2]:
        raise ValueError(f"GEMM shapes do not match: a {tuple(a.shape)}, b {tuple(b.shape)} (b is n x k)")
    l, m, k = a3.shape  # noqa: E741
    n = b3.shape[1]
    padded = GemmProblem(m, n, k, l).padded(config.dtype)
    a3 = _pad_last(torch, a3, padded.k)
    b3 = _pad_last(torch, b3, padded.k)
    if padded.n != n:
        b3 = torch.cat([b3, torch.zeros((l, padded.n - n, padded.k), dtype=b3.dtype, device=b3.device)], dim=1)
    c3 = torch.empty((l, m, padded.n), dtype=a3.dtype, device=a3.device)
    args = (_cute_view(a3), _cute_view(b3), _cute_view(c3))
    layout, kernel = gemm_kernel(config)
    key = ("gemm-dlpack", layout.config, plan_key(layout.plan))
    compiled = compile_host(f"gemm_{config.dtype}", kernel, args, config.arch, key=key)
    result = c3[:, :, :n]
    if a.dim() == 2:
        result = result[0]
    return PreparedGemm(
        config=layout.config, compiled=compiled, out=c3, _args=args, _result=result, _keep=(a3, b3)
    )


def gemm(a: Any, b: Any, config: GemmConfig | None = None) -> Any:
    """``a @ b.T`` on this GPU with smemviz's GEMM (see :func:`prepare_gemm`)."""
    from ._device import require_gpu

    require_gpu("gemm()")
    return prepare_gemm(a, b, config)()
