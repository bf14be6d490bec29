"""Small CuTe DSL kernels whose shared memory capture must read exactly as compiled.

Each kernel stores a distinctive constant at element 0 of every allocation, so
the PTX names the byte each allocation starts at (``st.shared.* [base+N], K``).
"""

import cutlass
import cutlass.cute as cute
from cutlass.memory import SmemAllocator

MemRange = cute.struct.MemRange
Align = cute.struct.Align

# the constant each kernel stores into each allocation's first element
MARKS = {"bars": 1001, "sA": 1002, "sB": 1003, "sC": 1004, "sD": 1005, "flag": 1006, "scratch.epi.acc": 1007}


@cute.struct
class Epi:
    acc: Align[MemRange[cutlass.Int32, 256], 128]
    count: cutlass.Int16


@cute.union
class Scratch:
    reduce: MemRange[cutlass.Int32, 64]
    epi: Epi


@cute.struct
class Storage:
    bars: MemRange[cutlass.Int64, 4]
    sA: Align[MemRange[cutlass.Int16, 1024], 1024]
    scratch: Scratch
    flag: cutlass.Int8


@cute.kernel
def mixed_kernel(out: cute.Tensor):
    smem = SmemAllocator()
    st = smem.allocate(Storage)
    sB = smem.allocate_tensor(cutlass.Int32, cute.make_layout((16, 8)), 128)
    sC = smem.allocate_array(cutlass.Int32, 10)
    swizzled = cute.make_composed_layout(cute.make_swizzle(3, 4, 3), 0, cute.make_layout((8, 64), stride=(64, 1)))
    sD = smem.allocate_tensor(cutlass.Int16, swizzled, 1024)
    st.bars[0] = cutlass.Int64(MARKS["bars"])
    st.sA.get_tensor(cute.make_layout((32, 32), stride=(32, 1)))[0, 0] = cutlass.Int16(MARKS["sA"])
    sB[0, 0] = cutlass.Int32(MARKS["sB"])
    sC[0] = cutlass.Int32(MARKS["sC"])
    sD[0, 0] = cutlass.Int16(MARKS["sD"])
    st.flag = cutlass.Int8(MARKS["flag"] % 100)
    st.scratch.epi.acc[0] = cutlass.Int32(MARKS["scratch.epi.acc"])
    tidx, _, _ = cute.arch.thread_idx()
    out[tidx] = cutlass.Int32(sB[tidx % 16, 1]) + sC[tidx % 10] + cutlass.Int32(sD[tidx % 8, 5])


@cute.jit
def mixed_host(out: cute.Tensor):
    mixed_kernel(out).launch(grid=(1, 1, 1), block=(128, 1, 1))


@cute.kernel
def two_structs_kernel(out: cute.Tensor):
    smem = SmemAllocator()
    first = smem.allocate(Storage)
    second = smem.allocate(Storage)
    first.bars[0] = cutlass.Int64(1)
    second.bars[0] = cutlass.Int64(2)
    tidx, _, _ = cute.arch.thread_idx()
    out[tidx] = cutlass.Int32(first.bars[1]) + cutlass.Int32(second.bars[1])


@cute.jit
def two_structs_host(out: cute.Tensor):
    two_structs_kernel(out).launch(grid=(1, 1, 1), block=(32, 1, 1))


@cute.kernel
def raw_smem_kernel(out: cute.Tensor):
    smem = SmemAllocator()
    sA = smem.allocate_array(cutlass.Int32, 32)
    raw = cute.arch.get_dyn_smem(cutlass.Int32, alignment=16)
    tidx, _, _ = cute.arch.thread_idx()
    sA[tidx] = cutlass.Int32(3)
    out[tidx] = sA[tidx] + raw.load()


@cute.jit
def raw_smem_host(out: cute.Tensor):
    raw_smem_kernel(out).launch(grid=(1, 1, 1), block=(32, 1, 1))


@cute.kernel
def failing_kernel(out: cute.Tensor):
    smem = SmemAllocator()
    sA = smem.allocate_array(cutlass.Int32, 32)
    raise ValueError("the kernel author's own error, raised while tracing")
    out[0] = sA[0]  # never reached: the raise above is the point


@cute.jit
def failing_host(out: cute.Tensor):
    failing_kernel(out).launch(grid=(1, 1, 1), block=(32, 1, 1))


@cute.kernel
def named_kernel(out: cute.Tensor):
    smem = SmemAllocator()
    bufs = [smem.allocate_array(cutlass.Int32, 16 * (i + 1), name=f"stage{i}") for i in range(3)]
    tidx, _, _ = cute.arch.thread_idx()
    for i in cutlass.range_constexpr(3):
        bufs[i][tidx] = cutlass.Int32(i)
    out[tidx] = bufs[0][tidx] + bufs[2][tidx]


@cute.jit
def named_host(out: cute.Tensor):
    named_kernel(out).launch(grid=(1, 1, 1), block=(16, 1, 1))


@cute.kernel
def commented_kernel(out: cute.Tensor):
    smem = SmemAllocator()
    a = smem.allocate_array(cutlass.Int32, 32)  # smemviz: scratch
    more = [smem.allocate_array(cutlass.Int32, 8) for _ in range(2)]  # smemviz: staging
    tidx, _, _ = cute.arch.thread_idx()
    a[tidx] = cutlass.Int32(1)
    out[tidx] = a[tidx] + more[0][tidx % 8] + more[1][tidx % 8]


@cute.jit
def commented_host(out: cute.Tensor):
    commented_kernel(out).launch(grid=(1, 1, 1), block=(32, 1, 1))


def tmem_host_and_kernel():
    """A Blackwell kernel that takes 128 TMEM columns through cutlass.memory.TmemAllocator."""
    from cutlass.memory import TmemAllocator
    from cutlass.pipeline import NamedBarrier

    @cute.kernel
    def tmem_kernel(out: cute.Tensor):
        smem = SmemAllocator()
        sA = smem.allocate_array(cutlass.Int32, 64, byte_alignment=128)
        tmem = TmemAllocator(barrier_for_retrieve=NamedBarrier(barrier_id=1, num_threads=128), arch="sm_100")
        tmem.allocate(128)
        tmem.wait_for_alloc()
        acc = tmem.retrieve_ptr(cutlass.Float32)
        tidx, _, _ = cute.arch.thread_idx()
        sA[tidx % 64] = cutlass.Int32(MARKS["sA"])
        tmem.relinquish_alloc_permit()
        tmem.free(acc)
        out[tidx] = sA[tidx % 64]

    @cute.jit
    def tmem_host(out: cute.Tensor):
        tmem_kernel(out).launch(grid=(1, 1, 1), block=(128, 1, 1))

    return tmem_host


def fake_out(n: int = 128):
    return cute.runtime.make_fake_tensor(cutlass.Int32, (n,), stride=(1,))


def tmem_pool_host_and_kernel():
    """A Blackwell kernel that reserves 256 TMEM columns and shares them out through a TmemBufferPool."""
    from cutlass.memory import TmemAllocator
    from cutlass.pipeline import NamedBarrier

    @cute.kernel
    def tmem_pool_kernel(out: cute.Tensor):
        tmem = TmemAllocator(barrier_for_retrieve=NamedBarrier(barrier_id=1, num_threads=128), arch="sm_100")
        pool = tmem.reserve(256)
        acc = pool.allocate(128, cutlass.Float32)
        scales = pool.allocate(64, cutlass.Float32)
        tidx, _, _ = cute.arch.thread_idx()
        tmem.relinquish_alloc_permit()
        tmem.free(acc)
        out[tidx] = cutlass.Int32(scales.dtype.width)

    @cute.jit
    def tmem_pool_host(out: cute.Tensor):
        tmem_pool_kernel(out).launch(grid=(1, 1, 1), block=(128, 1, 1))

    return tmem_pool_host


@cute.kernel
def shim_kernel(out: cute.Tensor):
    import warnings

    from cutlass.utils import SmemAllocator as DeprecatedAllocator

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        smem = DeprecatedAllocator()
    tile = smem.allocate_tensor(
        cutlass.Int32,
        cute.make_layout((8, 4), stride=(4, 1)),
        byte_alignment=256,
    )
    tidx, _, _ = cute.arch.thread_idx()
    tile[tidx % 8, 0] = cutlass.Int32(MARKS["sB"])
    out[tidx] = tile[tidx % 8, 1]


@cute.jit
def shim_host(out: cute.Tensor):
    shim_kernel(out).launch(grid=(1, 1, 1), block=(32, 1, 1))


@cute.kernel
def small_kernel(out: cute.Tensor):
    smem = SmemAllocator()
    s = smem.allocate_array(cutlass.Int32, 32)
    tidx, _, _ = cute.arch.thread_idx()
    s[tidx] = cutlass.Int32(MARKS["sA"])
    out[tidx] = s[tidx]


@cute.jit
def launch_4096_host(out: cute.Tensor):
    small_kernel(out).launch(grid=(1, 1, 1), block=(32, 1, 1), smem=4096)


@cute.jit
def launch_16_host(out: cute.Tensor):
    small_kernel(out).launch(grid=(1, 1, 1), block=(32, 1, 1), smem=16)


def experimental_host():
    """A kernel of the DSL's experimental front end (``cute_ext``), one SMEM buffer from ``cute_ext.allocate``."""
    from cutlass.cute import experimental as cute_ext

    @cute_ext.kernel
    def experimental_kernel(out: cute.Tensor):
        buf = cute_ext.allocate(cutlass.Int32, cute.AddressSpace.smem, cute.make_layout(32), alignment=128)
        tidx, _, _ = cute.arch.thread_idx()
        buf[tidx] = cutlass.Int32(MARKS["sA"])
        out[tidx] = buf[tidx]

    @cute_ext.jit
    def experimental_launch(out: cute.Tensor):
        experimental_kernel(out).launch(grid=(1, 1, 1), block=(32, 1, 1))

    return experimental_launch


# -- exclusive arms of one if: the compiler overlays their SMEM under smem_merge_branch_allocs=True --

# the constant each arm stores into its allocations' first element (arm 1: tile, bars; arm 2: ...)
ARM_MARKS = {"tile": 2001, "bars": 2002, "tile#2": 2003, "bars#2": 2004}


@cute.jit
def arm(elems: cutlass.Constexpr, tile_mark: cutlass.Constexpr, bar_mark: cutlass.Constexpr, out: cute.Tensor):
    smem = SmemAllocator()
    tile = smem.allocate_array(cutlass.Int32, elems)
    bars = smem.allocate_array(cutlass.Int64, 2)
    tidx, _, _ = cute.arch.thread_idx()
    tile[0] = cutlass.Int32(tile_mark)
    bars[0] = cutlass.Int64(bar_mark)
    out[tidx] = tile[tidx] + cutlass.Int32(bars[1])


@cute.kernel
def arms_kernel(out: cute.Tensor):
    smem = SmemAllocator()
    common = smem.allocate_array(cutlass.Int32, 8)
    bidx, _, _ = cute.arch.block_idx()
    common[0] = cutlass.Int32(bidx)
    if common[0] == 0:
        arm(64, ARM_MARKS["tile"], ARM_MARKS["bars"], out)
    else:
        arm(128, ARM_MARKS["tile#2"], ARM_MARKS["bars#2"], out)


@cute.jit
def arms_merged_host(out: cute.Tensor):
    arms_kernel(out).launch(grid=(1, 1, 1), block=(32, 1, 1), smem_merge_branch_allocs=True)


@cute.jit
def arms_apart_host(out: cute.Tensor):
    arms_kernel(out).launch(grid=(1, 1, 1), block=(32, 1, 1))


@cute.jit
def inner_arms(flag: cutlass.Int32, out: cute.Tensor):
    arm(16, 3001, 3002, out)
    if flag == 0:
        arm(32, 3003, 3004, out)
    else:
        arm(48, 3005, 3006, out)


@cute.kernel
def nested_arms_kernel(out: cute.Tensor):
    smem = SmemAllocator()
    common = smem.allocate_array(cutlass.Int32, 8)
    bidx, _, _ = cute.arch.block_idx()
    common[0] = cutlass.Int32(bidx)
    flag = common[0]
    if flag == 0:
        inner_arms(flag, out)
    else:
        arm(256, 3007, 3008, out)


@cute.jit
def nested_arms_host(out: cute.Tensor):
    nested_arms_kernel(out).launch(grid=(1, 1, 1), block=(32, 1, 1), smem_merge_branch_allocs=True)


def tmem_arms_host():
    """A Blackwell kernel whose two exclusive arms each take TMEM columns of their own."""
    from cutlass.memory import TmemAllocator
    from cutlass.pipeline import NamedBarrier

    @cute.jit
    def tmem_arm(columns: cutlass.Constexpr, out: cute.Tensor):
        tmem = TmemAllocator(barrier_for_retrieve=NamedBarrier(barrier_id=1, num_threads=128), arch="sm_100")
        tmem.allocate(columns)
        tmem.wait_for_alloc()
        acc = tmem.retrieve_ptr(cutlass.Float32)
        tmem.relinquish_alloc_permit()
        tmem.free(acc)

    @cute.kernel
    def tmem_arms_kernel(out: cute.Tensor):
        bidx, _, _ = cute.arch.block_idx()
        if bidx == 0:
            tmem_arm(256, out)
        else:
            tmem_arm(128, out)

    @cute.jit
    def host(out: cute.Tensor):
        tmem_arms_kernel(out).launch(grid=(1, 1, 1), block=(128, 1, 1), smem_merge_branch_allocs=True)

    return host
