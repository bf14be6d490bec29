"""Which C element each consumer thread's stmatrix row address points at, read from the
Hopper GEMM's own register-to-SMEM TiledCopy, traced on the CPU (a file of its own, so the
CuTe DSL can compile the jit function in it)."""

from __future__ import annotations

import cutlass
import cutlass.cute as cute
from cutlass.tensor_utils import LayoutEnum

from smemviz import hardware
from smemviz.kernel.gemm._layout import CONSUMER_WARPGROUPS
from smemviz.layout._emit import resolve_dtype

_SEEN: dict[tuple[int, int, int], tuple[int, int]] = {}
_KERNEL: list = []
CONSUMER_THREADS = CONSUMER_WARPGROUPS * hardware.WARPGROUP_THREADS


@cute.jit
def _trace():
    kernel = _KERNEL[0]
    cfg = kernel.layout.config
    tiled_mma = kernel.make_tiled_mma(resolve_dtype(cfg.dtype), LayoutEnum.ROW_MAJOR, LayoutEnum.ROW_MAJOR)
    r2s = kernel.make_epilogue_copy(tiled_mma, LayoutEnum.ROW_MAJOR, resolve_dtype(cfg.out_dtype))
    tile = cute.make_identity_tensor(cfg.epi_tile)
    for thread in cutlass.range_constexpr(CONSUMER_THREADS):
        mine = r2s.get_slice(thread).partition_D(tile)  # (values, copies down, copies across)
        for i in cutlass.range_constexpr(cute.size(mine, mode=[1])):
            for j in cutlass.range_constexpr(cute.size(mine, mode=[2])):
                row, col = mine[(0, i, j)]  # the first element of the 16-byte row this lane addresses
                _SEEN[(thread, i, j)] = (int(row), int(col))


def epilogue_lane_rows(config) -> dict[tuple[int, int, int], tuple[int, int]]:
    """{(consumer thread, copy i, copy j): (row, col)} of the C sub-tile, per stmatrix.x4 issued."""
    from smemviz.kernel.gemm._layout import gemm_layout
    from smemviz.kernel.gemm._sm90 import Sm90Gemm

    _KERNEL[:] = [Sm90Gemm(gemm_layout(config))]
    _SEEN.clear()
    # compiled for Hopper explicitly: WGMMA refuses to trace for another arch, whatever ran before
    cute.compile(_trace, options="--gpu-arch=sm_90a")
    return dict(_SEEN)


assert cutlass  # the DSL is imported for the jit decorator's sake
