"""What the Hopper and Blackwell GEMM kernels share: the layout they are built on,
the check that the DSL's staged layouts need exactly the bytes the plan gives each
region, and each region as the DSL's staged, swizzled tensor."""

from __future__ import annotations

from typing import Any

import cutlass
import cutlass.cute as cute

from ._config import SWIZZLE_128B_ALIGNMENT
from ._layout import GemmLayout

__all__ = ["GemmKernelBase", "LayoutMismatchError", "check_region", "staged_tensor"]


class LayoutMismatchError(ValueError):
    """The DSL's staged SMEM layout needs a different size than the plan gives a region."""


def check_region(alloc: Any, dtype: Any, staged: Any) -> None:
    """Refuse (at trace time) a staged layout whose bytes differ from the region's."""
    need = cute.cosize(staged) * dtype.width // 8
    if need != alloc.size_bytes:
        raise LayoutMismatchError(
            f"{alloc.name}: the staged SMEM layout needs {need:,} B but the plan gives {alloc.size_bytes:,} B"
        )


def staged_tensor(allocator: Any, alloc: Any, dtype: Any, staged: Any) -> Any:
    """The plan's region ``alloc`` (reached through ``allocator.get_as_type``) as a swizzled,
    staged tensor; call inside the kernel after ``allocator.allocate()``."""
    count = alloc.size_bytes * 8 // dtype.width
    view = allocator.get_as_type(alloc, dtype, count)
    ptr = cute.make_ptr(
        dtype, view.data_ptr().toint(), mem_space=cutlass.AddressSpace.smem, assumed_align=SWIZZLE_128B_ALIGNMENT
    )
    return cute.make_tensor(cute.recast_ptr(ptr, staged.inner, dtype=dtype), staged.outer)


class GemmKernelBase:
    """A GEMM kernel on one :class:`GemmLayout`: every SMEM byte it touches is a region
    of that layout's plan. Subclasses add the generation's ``__call__`` and ``kernel``."""

    def __init__(self, layout: GemmLayout) -> None:
        cfg = layout.config
        self.layout = layout
        self.allocator = layout.allocator
        self.stages = layout.stages
        self.epi_stages = cfg.epi_stages
        self.tile_mnk = (cfg.tile_m, cfg.tile_n, cfg.tile_k)
        self.acc_dtype = cutlass.Float32
        self.aliased = cfg.alias_epilogue

    def _check_regions(self, ab_dtype: Any, c_dtype: Any, a_staged: Any, b_staged: Any, c_staged: Any) -> None:
        """At trace time: the DSL's staged A, B and C layouts fill the plan's regions exactly."""
        check_region(self.layout.a, ab_dtype, a_staged)
        check_region(self.layout.b, ab_dtype, b_staged)
        check_region(self.layout.c, c_dtype, c_staged)

    def _staged_tensor(self, alloc: Any, dtype: Any, staged: Any) -> Any:
        """The plan's region ``alloc`` as a swizzled, staged tensor (inside the kernel)."""
        return staged_tensor(self.allocator, alloc, dtype, staged)
