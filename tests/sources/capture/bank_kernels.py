"""A one-warp kernel for the captured bank tests: each lane stores down column 0 of a row-major
32x32 Int32 tile (every lane on bank 0, 32-way), then loads along row 0 (conflict-free)."""

from __future__ import annotations

from typing import Any

import cutlass
import cutlass.cute as cute
from cutlass.memory import SmemAllocator

ROWS = 32


def make() -> Any:
    @cute.kernel
    def column_kernel(out: cute.Tensor):
        smem = SmemAllocator()
        grid = smem.allocate_tensor(cutlass.Int32, cute.make_layout((ROWS, 32), stride=(32, 1)), 16)
        tidx, _, _ = cute.arch.thread_idx()
        grid[(tidx, 0)] = tidx  # down column 0: every lane on bank 0
        cute.arch.sync_threads()
        out[tidx] = grid[(0, tidx)]  # along row 0: one word per bank

    @cute.jit
    def column_host(out: cute.Tensor):
        column_kernel(out).launch(grid=(1, 1, 1), block=(32, 1, 1))

    return column_host
