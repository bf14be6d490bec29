"""The TMEM check: compile anywhere for sm_100a; launch only on an sm_100-class GPU."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

from ... import hardware
from ...layout._allocation import SmemAllocation
from ...layout._allocator import SmemAllocator
from ...layout._emit import require_cutlass
from ...sources._inputs import as_plan
from .._compile import CompiledKernel, compile_host, plan_key
from .._device import WrongGpuError, require_gpu

__all__ = ["compile_tmem", "run_tmem", "TmemResult", "tcgen05_alloc_columns_in_ptx", "slot_allocator"]


def slot_allocator(name: str = "tmem_ptr") -> SmemAllocator:
    """An SMEM allocator holding only the 4-byte TMEM-pointer slot."""
    allocator = SmemAllocator()
    allocator.add_tmem_ptr(SmemAllocation(name, size_bytes=4, alignment=4))
    allocator.compute_layout()
    return allocator


def _tmem_plan(obj: Any) -> Any:
    plan = as_plan(obj)
    if plan.memory != "tmem":
        raise ValueError(f"the TMEM kernel needs a TMEM layout; {obj!r} is a {plan.memory} layout")
    if plan.data_total == 0:
        raise ValueError("the TMEM layout uses no columns; there is nothing to allocate")
    return plan


def _check_arch(arch: str) -> str:
    arch = hardware.compile_target(arch)
    try:
        known = hardware.get_arch(arch)
    except ValueError:
        known = None
    if known is None or known.mma != "tcgen05" or arch == known.name:  # tcgen05 needs the a/f suffix
        raise ValueError(
            f"the TMEM kernel uses tcgen05 instructions and needs an sm_100-class target "
            f"({', '.join(hardware.tmem_targets())}); got {arch!r}"
        )
    return arch


def compile_tmem(tmem: Any, smem: SmemAllocator | None = None, arch: str = "sm_100a") -> CompiledKernel:
    """Compile the TMEM kernel for ``tmem`` (a TmemAllocator or TMEM plan) with no GPU.

    ``smem`` is an SMEM allocator with a TMEM-pointer slot (``add_tmem_ptr``);
    by default one holding only the slot.
    """
    require_cutlass()
    import cutlass
    from cutlass.cute.runtime import make_fake_tensor

    from ._tmem_kernel import THREADS, TmemTouchKernel

    arch = _check_arch(arch)
    plan = _tmem_plan(tmem)
    smem = smem if smem is not None else slot_allocator()
    if smem.tmem_ptr_alloc is None:
        raise ValueError(f"{smem!r} has no TMEM-pointer slot; register one with add_tmem_ptr()")
    out = make_fake_tensor(cutlass.Int32, (THREADS, plan.data_total), stride=(plan.data_total, 1))
    key = (plan_key(plan), plan_key(smem.plan))
    return compile_host("tmem_touch", TmemTouchKernel(smem, plan), (out,), arch, key=key)


def tcgen05_alloc_columns_in_ptx(ptx: str) -> list[int]:
    """Column counts passed to ``tcgen05.alloc`` in ``ptx`` (immediates or registers set from them;
    -1 for a count that is not a constant)."""
    from .._ptx import read_addresses

    return list(read_addresses(ptx).tcgen05_alloc_columns)


@dataclass(frozen=True)
class TmemResult:
    gpu: str
    arch: str
    alloc_columns: int
    wrong_cells: int
    timings: dict[str, float] = field(default_factory=dict)

    @property
    def passed(self) -> bool:
        return self.wrong_cells == 0


def run_tmem(tmem: Any, smem: SmemAllocator | None = None) -> TmemResult:
    """Launch the TMEM kernel on this GPU and check every touched cell.

    Raises :class:`~smemviz.kernel.WrongGpuError` on a GPU without tensor memory
    (anything but the sm_100 family) and :class:`~smemviz.kernel.NoGpuError` with none.
    """
    gpu, torch = require_gpu("run_tmem()")
    if not gpu.has_tmem:
        raise WrongGpuError(
            f"the TMEM kernel needs a Blackwell datacenter GPU (sm_100 family, tcgen05); "
            f"this is {gpu.name} (sm_{gpu.major}{gpu.minor}), which has no tensor memory. "
            "compile_tmem() still compiles it for sm_100a."
        )
    plan = _tmem_plan(tmem)
    t0 = time.perf_counter()
    compiled = compile_tmem(plan, smem, gpu.arch)
    t1 = time.perf_counter()
    from .._compile import launch
    from ._tmem_kernel import THREADS

    out = torch.full((THREADS, plan.data_total), -1, dtype=torch.int32, device="cuda")
    launch(compiled, out)
    torch.cuda.synchronize()
    got = out.cpu().tolist()
    wrong = 0
    for k, region in enumerate(plan.regions):
        for column in range(region.offset, region.end):
            for row in range(THREADS):
                if got[row][column] != ((k + 1) << 24) + column * 256 + row:
                    wrong += 1
    t2 = time.perf_counter()
    return TmemResult(
        gpu.name, compiled.arch, plan.tmem_alloc_columns, wrong, {"compile_s": t1 - t0, "launch_roundtrip_s": t2 - t1}
    )
