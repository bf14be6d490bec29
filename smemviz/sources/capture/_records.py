"""What capture records: one value per allocation a kernel makes through the DSL's allocators.

A record is made at trace time (name, type, layout, alignment, where) and
completed after the compiler's layout pass (the offset). Both are frozen.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

__all__ = ["AllocKind", "CapturedAllocation", "CapturedTmem"]

# how the kernel asked: a struct, a tensor with a layout, an array, raw bytes or one scalar
AllocKind = Literal["struct", "tensor", "array", "bytes", "scalar"]


@dataclass(frozen=True)
class CapturedAllocation:
    """One SMEM allocation: what the kernel asked for and where the compiler put it."""

    name: str
    how: AllocKind
    size: int  # bytes
    alignment: int  # bytes, as the allocator passed it on (the element's own width at least)
    partition: int  # cutlass.memory.SmemPartition value: 0 reserved, 1 user
    source: str | None  # "file.py:line" of the kernel's call
    kernel: str  # the kernel function's symbol
    offset: int  # the compiler's, from its layout pass
    dtype: str | None = None
    count: int | None = None  # elements
    layout: str | None = None  # CuTe "shape:stride", a swizzle as "S<B,M,S> o ..."
    swizzle: str | None = None  # "32B" / "64B" / "128B" when the layout says so
    struct: Any = None  # the @cute.struct class, for how == "struct"
    via: str | None = None  # the DSL module that allocated it for the kernel (e.g. "cutlass.memory.tmem")

    @property
    def end(self) -> int:
        return self.offset + self.size


@dataclass(frozen=True)
class CapturedTmem:
    """Tensor-memory columns a kernel allocates: a ``TmemAllocator.allocate`` block or a pool's share of one."""

    name: str
    columns: int
    offset: int  # columns from the allocated base (the allocator's own running count)
    source: str | None
    kernel: str
    dtype: str | None = None
    layout: str | None = None
    pool: int | None = None  # index of the TmemAllocator block a pool allocation lies in
