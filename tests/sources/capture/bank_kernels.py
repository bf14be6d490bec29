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


def make_ampere() -> Any:
    """cp.async (128 bits a thread) of a 64x64 f16 tile from global memory into row-major SMEM
    rows of 128 B, then ``ldmatrix.x4`` of it into an MMA's A fragments: four warps."""
    from cutlass.cute.nvgpu import cpasync, warp

    @cute.kernel
    def ampere_kernel(a: cute.Tensor, out: cute.Tensor):
        smem = SmemAllocator()
        sA = smem.allocate_tensor(cutlass.Float16, cute.make_layout((64, 64), stride=(64, 1)), 128)
        tidx, _, _ = cute.arch.thread_idx()
        g2s_atom = cute.make_copy_atom(cpasync.CopyG2SOp(), cutlass.Float16, num_bits_per_copy=128)
        g2s = cute.make_tiled_copy_tv(g2s_atom, cute.make_layout((16, 8), stride=(8, 1)), cute.make_layout((1, 8)))
        thr_g2s = g2s.get_slice(tidx)
        cute.copy(g2s, thr_g2s.partition_S(a), thr_g2s.partition_D(sA))
        cute.arch.cp_async_commit_group()
        cute.arch.cp_async_wait_group(0)
        cute.arch.sync_threads()
        mma = cute.make_tiled_mma(warp.MmaF16BF16Op(cutlass.Float16, cutlass.Float32, (16, 8, 16)), (4, 1, 1))
        thr_mma = mma.get_slice(tidx)
        frag = thr_mma.make_fragment_A(thr_mma.partition_A(sA))
        s2r = cute.make_tiled_copy_A(cute.make_copy_atom(warp.LdMatrix8x8x16bOp(False, 4), cutlass.Float16), mma)
        thr_s2r = s2r.get_slice(tidx)
        cute.copy(s2r, thr_s2r.partition_S(sA), thr_s2r.retile(frag))
        out[tidx] = cutlass.Float32(frag[0])

    @cute.jit
    def ampere_host(a: cute.Tensor, out: cute.Tensor):
        ampere_kernel(a, out).launch(grid=(1, 1, 1), block=(128, 1, 1))

    return ampere_host
