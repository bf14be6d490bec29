"""The TMEM kernel (Blackwell, sm_100 family): allocate the TmemAllocator's
column count with ``tcgen05.alloc`` (the base address lands in the SMEM
TMEM-pointer slot), store a tag into every column of every TMEM allocation at
its column offset, load it back to global memory, then relinquish and
deallocate.

Four warps cover the 128 lanes: warp ``w`` reaches lanes ``32w .. 32w + 31``.
"""

from __future__ import annotations

from typing import Any

import cutlass
import cutlass.cute as cute
from cutlass.experimental import primitives as prims

__all__ = ["TmemTouchKernel", "THREADS"]

THREADS = 128


class TmemTouchKernel:
    """``out`` is ``Int32[128, used_columns]``: lane x column, as read back from TMEM.

    The value stored at (lane, column) of allocation ``k`` is
    ``(k + 1) << 24 | column << 8 | lane``.
    """

    def __init__(self, smem_allocator: Any, tmem_plan: Any) -> None:
        self.smem = smem_allocator
        self.alloc_columns = tmem_plan.tmem_alloc_columns
        self.used_columns = tmem_plan.data_total
        # (first column, columns) per TMEM region, in plan order
        self.spans = [(r.offset, r.size) for r in tmem_plan.regions]

    @cute.jit
    def __call__(self, out: cute.Tensor):
        self.kernel(out).launch(grid=[1, 1, 1], block=[THREADS, 1, 1])

    @cute.kernel
    def kernel(self, out: cute.Tensor):
        tidx, _, _ = cute.arch.thread_idx()
        warp = tidx // 32
        lane = tidx % 32
        self.smem.allocate()
        ctx = self.smem.resource_context()
        slot = ctx.tmem_ptr_i32
        slot_ptr = cute.make_ptr(cutlass.Int32, slot.data_ptr().toint(), mem_space=cutlass.AddressSpace.smem)
        if warp == 0:
            cute.arch.alloc_tmem(self.alloc_columns, slot_ptr)
        cute.arch.sync_threads()
        tmem_base = slot[0]
        base_column = tmem_base & cutlass.Int32(0xFFFF)
        row = warp * 32 + lane
        for k in cutlass.range_constexpr(len(self.spans)):
            first, columns = self.spans[k]
            for c in cutlass.range(columns):
                column = first + c
                addr = prims.make_tmem_ptr_from_warp_row_col(tmem_base, warp, base_column + column, cutlass.Int32)
                value = cutlass.Int32((k + 1) << 24) + cutlass.Int32(column) * 256 + cutlass.Int32(row)
                prims.tcgen05_st("32x32b", addr, value)
        prims.tcgen05_wait("store")
        for k in cutlass.range_constexpr(len(self.spans)):
            first, columns = self.spans[k]
            for c in cutlass.range(columns):
                column = first + c
                addr = prims.make_tmem_ptr_from_warp_row_col(tmem_base, warp, base_column + column, cutlass.Int32)
                got = prims.tcgen05_ld("32x32b", addr)
                prims.tcgen05_wait("load")
                out[row, column] = got[0]
        cute.arch.sync_threads()
        if warp == 0:
            cute.arch.relinquish_tmem_alloc_permit()
            dealloc_ptr = cute.arch.retrieve_tmem_ptr(cutlass.Float32, 16, slot_ptr)
            cute.arch.dealloc_tmem(dealloc_ptr, self.alloc_columns)
