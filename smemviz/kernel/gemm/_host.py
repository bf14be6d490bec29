"""Compile and run smemviz's GEMM: host-side checks, fake tensors for CPU compiles,
torch tensors and a correctness check for GPU runs."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ... import hardware
from ..._dtypes import dtype_width
from ...layout._emit import require_cutlass, resolve_dtype
from .._compile import CompiledKernel, compile_host, plan_key
from .._device import GpuInfo, WrongGpuError, require_gpu
from ._config import GemmConfig
from ._layout import GemmLayout, gemm_layout

__all__ = ["compile_gemm", "gemm_kernel", "gpu_mismatch", "require_gpu_for"]


def _kernel_for(layout: GemmLayout, arch: str, max_ctas: int | None = None) -> Any:
    target = hardware.compile_target(arch)
    mma = hardware.get_arch(target).mma
    if mma == "wgmma":
        from ._sm90 import Sm90Gemm

        return Sm90Gemm(layout)
    if mma == "tcgen05" and hardware.get_arch(target).sm_count is not None:
        from ._sm100 import Sm100Gemm

        return Sm100Gemm(layout, max_ctas=max_ctas or hardware.sm_count(target))
    raise ValueError(
        f"smemviz's GEMM is written for Hopper (sm_90a) and Blackwell (sm_100a); {target} has no kernel here yet"
    )


def gemm_kernel(config: GemmConfig, max_ctas: int | None = None) -> tuple[GemmLayout, Any]:
    """The layout of ``config`` and the kernel object built on it (``max_ctas``: the SMs a
    persistent Blackwell grid spreads over; by default the arch's datacenter part)."""
    layout = gemm_layout(config)
    return layout, _kernel_for(layout, config.arch, max_ctas)


def gpu_mismatch(config: GemmConfig, gpu: GpuInfo) -> str | None:
    """Why ``gpu`` cannot run the kernel compiled for ``config.arch``, or ``None``.

    Arch-specific code (``sm_90a`` WGMMA, ``sm_100a`` tcgen05/TMEM) runs only on its own arch.
    """
    want = hardware.get_arch(config.arch)
    try:
        have = hardware.arch_of_capability(gpu.major, gpu.minor).name
    except ValueError:  # newer than smemviz's table
        have = f"sm_{gpu.major}{gpu.minor}"
    if have == want.name:
        return None
    needs = "tcgen05 and tensor memory" if want.has_tmem else "WGMMA"
    return (
        f"GEMM {config.label()} is compiled for {hardware.compile_target(config.arch)} ({want.family}, {needs}); "
        f"the GPU here is {gpu.name} ({have}), which cannot run it. compile_gemm() still compiles it."
    )


def require_gpu_for(config: GemmConfig, what: str) -> tuple[GpuInfo, Any]:
    """The GPU and ``torch`` when this GPU can run ``config``'s kernel; otherwise
    :class:`NoGpuError` (no GPU) or :class:`WrongGpuError` naming the GPU found."""
    gpu, torch = require_gpu(what)
    why = gpu_mismatch(config, gpu)
    if why is not None:
        raise WrongGpuError(f"{what}: {why}")
    return gpu, torch


def _fake_operands(dtype: str) -> tuple[Any, Any, Any]:
    """A (m, k, l), B (n, k, l), C (m, n, l) with symbolic sizes, rows 16-byte aligned."""
    require_cutlass()
    from cutlass import cute
    from cutlass.cute.runtime import make_fake_tensor

    from ._config import GEMM_OUT_DTYPES

    el = resolve_dtype(dtype)
    out = resolve_dtype(GEMM_OUT_DTYPES[dtype])
    per_k, per_n = 128 // el.width, 128 // out.width
    m, n, k, l = (cute.sym_int32(symbol=s) for s in "mnkl")  # noqa: E741
    lda = cute.sym_int32(divisibility=per_k, symbol="lda")
    ldc = cute.sym_int32(divisibility=per_n, symbol="ldc")
    a = make_fake_tensor(el, (m, k, l), stride=(lda, 1, cute.sym_int64(divisibility=per_k)), assumed_align=16)
    b = make_fake_tensor(el, (n, k, l), stride=(lda, 1, cute.sym_int64(divisibility=per_k)), assumed_align=16)
    c = make_fake_tensor(out, (m, n, l), stride=(ldc, 1, cute.sym_int64(divisibility=per_n)), assumed_align=16)
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
    return {"f16": torch.float16, "bf16": torch.bfloat16, "f8e4m3": torch.float8_e4m3fn}[dtype]


def _batched(t: Any) -> Any:
    return t.unsqueeze(0) if t.dim() == 2 else t


def _pad_last(torch: Any, t: Any, size: int) -> Any:
    """``t`` with its last dimension zero-padded to ``size`` (a copy only when needed)."""
    if t.shape[-1] == size:
        return t.contiguous()
    out = torch.zeros((*t.shape[:-1], size), dtype=t.dtype, device=t.device)
    out[..., : t.shape[-1]] = t
    return out


def _cute_view(t: Any, dsl_dtype: Any = None) -> Any:
    """A torch (l, rows, cols) tensor as the kernel's (rows, cols, l) cute tensor.

    8-bit float tensors travel as bytes (DLPack has no fp8) and get ``dsl_dtype`` back."""
    from cutlass.cute.runtime import from_dlpack

    if dsl_dtype is not None:
        view = from_dlpack(t.view(_byte_dtype()).permute(1, 2, 0), assumed_align=16)
        view.element_type = dsl_dtype
        return view.mark_layout_dynamic(leading_dim=1)
    return from_dlpack(t.permute(1, 2, 0), assumed_align=16).mark_layout_dynamic(leading_dim=1)


def _byte_dtype() -> Any:
    import torch

    return torch.uint8


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
    result is sliced back. The kernel is compiled once per config (cached), and
    it is the same compiled kernel :func:`compile_gemm` returns (Hopper; a
    persistent Blackwell grid is compiled for this GPU's SM count).
    """
    from ._config import GemmProblem

    config = config or GemmConfig()
    _, torch = require_gpu_for(config, "prepare_gemm()")
    a3, b3 = _batched(a), _batched(b)
    if a3.dtype != b3.dtype or a3.dtype != _torch_dtype(torch, config.dtype):
        raise TypeError(f"GEMM {config.label()}: a is {a3.dtype} and b is {b3.dtype}; both must be {config.dtype}")
    if a3.shape[0] != b3.shape[0] or a3.shape[2] != b3.shape[2]:
        raise ValueError(f"GEMM shapes do not match: a {tuple(a.shape)}, b {tuple(b.shape)} (b is n x k)")
    l, m, k = a3.shape  # noqa: E741
    n = b3.shape[1]
    padded = GemmProblem(m, n, k, l).padded(config.dtype)
    bytes_only = a3.element_size() == 1  # pad 8-bit floats as bytes: zero bits are 0.0
    if bytes_only:
        a3, b3 = a3.view(torch.uint8), b3.view(torch.uint8)
    a3 = _pad_last(torch, a3, padded.k)
    b3 = _pad_last(torch, b3, padded.k)
    if padded.n != n:
        b3 = torch.cat([b3, torch.zeros((l, padded.n - n, padded.k), dtype=b3.dtype, device=b3.device)], dim=1)
    if bytes_only:
        a3, b3 = a3.view(a.dtype), b3.view(a.dtype)
    c3 = torch.empty((l, m, padded.n), dtype=_torch_dtype(torch, config.out_dtype), device=a3.device)
    in_dsl = resolve_dtype(config.dtype) if dtype_width(config.dtype) == 8 else None
    args = (_cute_view(a3, in_dsl), _cute_view(b3, in_dsl), _cute_view(c3))
    # a persistent Blackwell grid spreads over this GPU's SMs
    sms = torch.cuda.get_device_properties(a3.device).multi_processor_count if config.uses_tmem else None
    layout, kernel = gemm_kernel(config, max_ctas=sms)
    if sms is None:
        # the kernel compiled on fake tensors takes these: one compile serves compile_gemm() and the launch
        compiled = compile_gemm(config)
    else:  # the grid size is compiled in
        key = ("gemm-dlpack", layout.config, plan_key(layout.plan), sms)
        compiled = compile_host(f"gemm_{config.dtype}", kernel, args, config.arch, key=key)
    result = c3[:, :, :n]
    if a.dim() == 2:
        result = result[0]
    return PreparedGemm(config=layout.config, compiled=compiled, out=c3, _args=args, _result=result, _keep=(a3, b3))


def gemm(a: Any, b: Any, config: GemmConfig | None = None) -> Any:
    """``a @ b.T`` on this GPU with smemviz's GEMM (see :func:`prepare_gemm`)."""
    require_gpu_for(config or GemmConfig(), "gemm()")
    return prepare_gemm(a, b, config)()
