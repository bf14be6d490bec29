"""Two small kernels for ``smemviz capture``'s verdict: one breaks a lint error rule
(a 128B-swizzled tile on a 64-byte boundary, below what TMA needs), one only a warning (padding)."""

import cutlass
import cutlass.cute as cute
from cutlass.memory import SmemAllocator

from smemviz.kernel._compile import compile_host


@cute.kernel
def misaligned_kernel(out: cute.Tensor):
    smem = SmemAllocator()
    flags = smem.allocate_array(cutlass.Int32, 16, byte_alignment=64)
    swizzled = cute.make_composed_layout(cute.make_swizzle(3, 4, 3), 0, cute.make_layout((8, 64), stride=(64, 1)))
    sD = smem.allocate_tensor(cutlass.Int16, swizzled, 64)
    flags[0] = cutlass.Int32(1)
    sD[0, 0] = cutlass.Int16(2)
    tidx, _, _ = cute.arch.thread_idx()
    out[tidx] = flags[tidx % 32] + cutlass.Int32(sD[tidx % 8, 3])


@cute.jit
def misaligned_host(out: cute.Tensor):
    misaligned_kernel(out).launch(grid=(1, 1, 1), block=(32, 1, 1))


@cute.kernel
def padded_kernel(out: cute.Tensor):
    smem = SmemAllocator()
    flags = smem.allocate_array(cutlass.Int32, 4, byte_alignment=16)
    big = smem.allocate_array(cutlass.Int32, 4, byte_alignment=1024)
    last = smem.allocate_array(cutlass.Int32, 4, byte_alignment=1024)
    flags[0] = cutlass.Int32(1)
    big[0] = cutlass.Int32(2)
    last[0] = cutlass.Int32(3)
    tidx, _, _ = cute.arch.thread_idx()
    out[tidx] = flags[tidx % 4] + big[tidx % 4] + last[tidx % 4]


@cute.jit
def padded_host(out: cute.Tensor):
    padded_kernel(out).launch(grid=(1, 1, 1), block=(32, 1, 1))


def _out():
    return cute.runtime.make_fake_tensor(cutlass.Int32, (32,), stride=(1,))


def misaligned():
    compile_host("cli_capture_misaligned", misaligned_host, (_out(),), "sm_90a")


def padded():
    compile_host("cli_capture_padded", padded_host, (_out(),), "sm_90a")
