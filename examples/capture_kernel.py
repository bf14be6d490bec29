"""A small Hopper-style kernel that takes its shared memory from the CuTe DSL's own allocator,
for ``smemviz capture`` and notebook 07: nothing in it knows about smemviz.

``build()`` compiles it for sm_90a on the CPU (fake tensors, no GPU):

    smemviz capture examples/capture_kernel.py:build --out kernel.html
"""

import cutlass
import cutlass.cute as cute
from cutlass.memory import SmemAllocator

STAGES, TILE_M, TILE_N, TILE_K = 4, 128, 128, 64
MemRange, Align = cute.struct.MemRange, cute.struct.Align


@cute.struct
class SharedStorage:
    load_full_mbar: MemRange[cutlass.Int64, STAGES]
    load_empty_mbar: MemRange[cutlass.Int64, STAGES]
    sA: Align[MemRange[cutlass.Float16, TILE_M * TILE_K * STAGES], 1024]
    sB: Align[MemRange[cutlass.Float16, TILE_N * TILE_K * STAGES], 1024]


def _staged(rows: int, swizzle_bits: int, cols: int) -> cute.ComposedLayout:
    """K-major stages of ``rows x cols`` f16, swizzled the way TMA/WGMMA want them."""
    return cute.make_composed_layout(
        cute.make_swizzle(swizzle_bits, 4, 3),
        0,
        cute.make_layout((rows, cols, STAGES), stride=(cols, 1, rows * cols)),
    )


@cute.kernel
def tile_kernel(out: cute.Tensor):
    smem = SmemAllocator()
    storage = smem.allocate(SharedStorage)
    sA = storage.sA.get_tensor(_staged(TILE_M, 3, TILE_K))
    sB = storage.sB.get_tensor(_staged(TILE_N, 3, TILE_K))
    sC = smem.allocate_tensor(cutlass.Float16, _staged(TILE_M, 2, 32), 1024)
    tidx, _, _ = cute.arch.thread_idx()
    if tidx == 0:
        for s in cutlass.range_constexpr(STAGES):
            cute.arch.mbarrier_init(storage.load_full_mbar.data_ptr() + s, 1)
            cute.arch.mbarrier_init(storage.load_empty_mbar.data_ptr() + s, 128)
    cute.arch.sync_threads()
    sA[tidx, 0, 0] = cutlass.Float16(1.0)
    sB[tidx, 0, 0] = cutlass.Float16(2.0)
    cute.arch.sync_threads()
    sC[tidx, 0, 0] = sA[tidx, 1, 0] + sB[tidx, 1, 0]
    out[tidx] = cutlass.Float32(sC[tidx, 0, 0])


@cute.jit
def tile_host(out: cute.Tensor):
    tile_kernel(out).launch(grid=(1, 1, 1), block=(128, 1, 1))


def build(arch: str = "sm_90a"):
    """Compile the kernel for ``arch`` (no GPU needed) and return the compiled function."""
    out = cute.runtime.make_fake_tensor(cutlass.Float32, (128,), stride=(1,))
    return cute.compile(tile_host, out, options=f"--gpu-arch={arch}")
