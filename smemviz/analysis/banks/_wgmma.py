"""WGMMA's shared-memory operand reads, as the H200 counts them.

A warpgroup's ``wgmma.mma_async`` reads its SMEM operands through descriptors, not lane
addresses, so the per-lane model does not apply. Measured with Nsight Compute on the
smemviz GEMM (``results/bank_gemm_h200.md``: f16/bf16 m64n128k16 and m64n256k16, e4m3
m64n256k32, operands in each canonical layout, interleaved, 32B, 64B and 128B): every
instruction reads at 128 bytes per wavefront with no bank conflict, and ncu counts a
warpgroup instruction once on each of its four warps, a quarter of its wavefronts each.
Non-canonical layouts (plain unswizzled rows) cannot be described to WGMMA at all.
What the swizzle mode of an operand buffer changes is how TMA fills it (16-byte boxes
for interleaved, one 128-byte row per box for 128B), which the same file times.
"""

from __future__ import annotations

from dataclasses import dataclass

from ... import hardware
from ..._dtypes import dtype_name, dtype_width

__all__ = ["WGMMA_LAYOUTS", "WgmmaReads", "wgmma_reads"]

WGMMA_LAYOUTS = ("interleaved", "32B", "64B", "128B")  # WGMMA's canonical K-major atoms, all measured
WGMMA_M = 64
WGMMA_K_BYTES = 32  # every wgmma's K step is 32 bytes of a row (k16 for 16-bit inputs, k32 for 8-bit)
WARPS_PER_WARPGROUP = hardware.WARPGROUP_THREADS // hardware.WARP_THREADS
WAVEFRONT_BYTES = hardware.SMEM_BANKS * hardware.SMEM_BANK_BYTES  # one wavefront: a word from every bank
_INPUTS = ("f16", "bf16", "f8e4m3", "f8e5m2", "tf32")


@dataclass(frozen=True)
class WgmmaReads:
    """One warpgroup ``wgmma`` instruction's SMEM reads: bytes, wavefronts, conflicts."""

    shape: tuple[int, int, int]  # (m, n, k)
    dtype: str
    a_bytes: int  # 0 when A comes from registers
    b_bytes: int
    wavefronts: int
    conflicts: int

    @property
    def ideal(self) -> int:
        return -(-(self.a_bytes + self.b_bytes) // WAVEFRONT_BYTES)

    @property
    def wavefronts_per_warp(self) -> float:
        """What ncu's per-instruction (per-warp) counters show: a quarter of the warpgroup's."""
        return self.wavefronts / WARPS_PER_WARPGROUP

    @property
    def instruction(self) -> str:
        m, n, k = self.shape
        return f"wgmma.m{m}n{n}k{k}.{self.dtype}"


def wgmma_reads(n: int, dtype: str, *, layout: str = "128B", a_in_smem: bool = True) -> WgmmaReads:
    """The SMEM reads of one ``wgmma.m64nNkK`` on ``dtype`` inputs with operands in ``layout``."""
    name = dtype_name(dtype)
    if name not in _INPUTS:
        raise ValueError(f"wgmma inputs must be one of {_INPUTS}, got {dtype!r}")
    if layout not in WGMMA_LAYOUTS:
        raise ValueError(
            f"wgmma reads SMEM only in its canonical layouts {WGMMA_LAYOUTS}; got {layout!r} "
            "(plain unswizzled rows cannot be described to it: use 'interleaved')"
        )
    if not isinstance(n, int) or not 8 <= n <= 256 or n % 8:
        raise ValueError(f"wgmma N must be a multiple of 8 in 8..256, got {n!r}")
    element_bytes = dtype_width(name) // 8
    k = WGMMA_K_BYTES // element_bytes
    a_bytes = WGMMA_M * WGMMA_K_BYTES if a_in_smem else 0
    b_bytes = n * WGMMA_K_BYTES
    wavefronts = -(-(a_bytes + b_bytes) // WAVEFRONT_BYTES)
    return WgmmaReads((WGMMA_M, n, k), name, a_bytes, b_bytes, wavefronts, conflicts=0)
