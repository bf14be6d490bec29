"""Device-side helpers both GEMM kernels use to reach the plan's regions: a region
as the DSL's staged, swizzled tensor, and the check that the DSL's staged layout
needs exactly the bytes the plan gives that region."""

from __future__ import annotations

from typing import Any

import cutlass
import cutlass.cute as cute

from ._gemm_common import SWIZZLE_128B_ALIGNMENT

__all__ = ["LayoutMismatchError", "check_region", "staged_tensor"]


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
