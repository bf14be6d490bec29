"""Hardware facts smemviz checks layouts against, by architecture.

Every capacity or geometry number in smemviz comes from this module.

* Per-block shared memory is the opt-in maximum a kernel can request
  (the value the CuTe DSL uses for its own capacity checks).
* Shared memory has 32 banks of 4 bytes.
* Tensor memory (Blackwell datacenter parts, sm_100 family) is 128 lanes x
  512 columns of 32-bit cells per CTA; ``tcgen05.alloc`` takes a power-of-two
  column count from 32 to 512 and writes the TMEM base address into a 4-byte
  shared-memory slot.
* A pipeline stage keeps two 8-byte mbarriers (full and empty).
* Swizzled TMA/MMA operand buffers repeat their swizzle pattern every 8 rows
  of the swizzle width: 32B -> 256 B, 64B -> 512 B, 128B -> 1024 B. Each
  buffer (and each stage of it) must start on that atom.
* Occupancy: an SM shares its shared memory among resident CTAs; each CTA
  also costs a 1 KiB reservation (sm_80 and later), and the SM picks its
  shared-memory size from a short list of carveouts; what the carveout leaves
  of the SM's unified data cache is L1.
* Clusters (sm_90 and later): a cluster's CTAs run at once in one GPC, each
  on an SM of its own. The H200's GPC layout and the cap on a cluster
  launch's CTAs per SM are inferred from its driver's answers
  (``cudaOccupancyMaxActiveClusters``, results/cluster_occupancy_h200.md), not
  from a document.

Sources: the CUDA C++ Programming Guide, "Compute Capabilities" appendix
(table "Technical Specifications per Compute Capability" and the per-family
"Shared Memory" sections, which list the carveouts and the 1 KB reserved per
block); the PTX ISA for mbarrier (8-byte object, 8-byte aligned), for
``cp.async.bulk.tensor`` (128-byte aligned shared-memory destination with a
tensor map) and ``tcgen05.alloc`` (power-of-two columns, 32..512, the address
written to shared memory as a 32-bit value; an allocation blocks until enough
columns are free, so CTAs beyond 512 // columns on one SM wait: the
document's word, not run on a Blackwell GPU here); the per-block capacities
are the CuTe DSL's own capacity map (nvidia-cutlass-dsl 4.8.1).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

__all__ = [
    "Arch",
    "ARCHS",
    "get_arch",
    "SMEM_BANKS",
    "SMEM_BANK_BYTES",
    "TMEM_LANES",
    "TMEM_COLUMNS",
    "TMEM_ALLOC_MIN_COLUMNS",
    "TMEM_ALLOC_MAX_COLUMNS",
    "TMEM_PTR_BYTES",
    "MBARRIER_BYTES",
    "MBARRIER_ALIGNMENT",
    "MBARRIERS_PER_STAGE",
    "BARRIER_BYTES_PER_STAGE",
    "TMA_ALIGNMENT",
    "SWIZZLE_128B_ALIGNMENT",
    "SWIZZLE_ATOM_BYTES",
    "SWIZZLE_MODE_BITS",
    "MATRIX_ROW_BYTES",
    "SMEM_RESERVED_PER_CTA",
    "SMEM_ALLOC_GRANULARITY",
    "REGISTERS_PER_SM",
    "MAX_REGISTERS_PER_THREAD",
    "REGISTER_ALLOC_UNIT",
    "ARCH_ENV",
    "VIEW_FALLBACK_ARCH",
    "TMA_ROW_BYTES",
    "WARPGROUP_THREADS",
    "WARP_THREADS",
    "TMEM_ADDRESS_LANE_SHIFT",
    "bank_of",
    "compile_target",
    "arch_of_capability",
    "MAX_SMEM_BASE_ALIGNMENT",
    "tmem_alloc_columns",
    "sm_count",
    "MAX_PORTABLE_CLUSTER_SIZE",
]

KIB = 1024

SMEM_BANKS = 32
SMEM_BANK_BYTES = 4

TMEM_LANES = 128
TMEM_COLUMNS = 512
TMEM_ALLOC_MIN_COLUMNS = 32
TMEM_ALLOC_MAX_COLUMNS = 512
TMEM_PTR_BYTES = 4

MBARRIER_BYTES = 8
MBARRIER_ALIGNMENT = 8
MBARRIERS_PER_STAGE = 2  # full + empty
BARRIER_BYTES_PER_STAGE = MBARRIERS_PER_STAGE * MBARRIER_BYTES

# PTX ISA, cp.async.bulk.tensor: the shared-memory destination is 128-byte aligned
TMA_ALIGNMENT = 128
# swizzle mode -> bytes of one swizzle atom (8 rows x the swizzle width); a swizzled
# buffer and each of its stages start on a multiple of it (CUTLASS aligns them so)
SWIZZLE_ATOM_BYTES: dict[str, int] = {"32B": 256, "64B": 512, "128B": 1024}
# the TMA/WGMMA/UMMA swizzle modes as CuTe's Swizzle<B, M, S> on byte addresses: the
# 16-byte chunk index (M = 4 bits up) XORed with B bits of the 128-byte row index (S = 3 above)
SWIZZLE_MODE_BITS: dict[str, tuple[int, int, int]] = {"32B": (1, 4, 3), "64B": (2, 4, 3), "128B": (3, 4, 3)}
MATRIX_ROW_BYTES = 16  # ldmatrix/stmatrix: each lane's row address reaches 8 b16 elements
SWIZZLE_128B_ALIGNMENT = SWIZZLE_ATOM_BYTES["128B"]

# Programming Guide, "Shared Memory" (8.x and later): 1 KB of shared memory per
# thread block is reserved for system use and counts against the SM's capacity
SMEM_RESERVED_PER_CTA = 1 * KIB
# CUDA occupancy calculator: shared memory is given to a block in 128-byte units (sm_80+)
SMEM_ALLOC_GRANULARITY = 128
# Programming Guide, technical specifications: 64 K 32-bit registers per SM, at most
# 255 per thread, on every architecture listed here; the occupancy calculator
# allocates registers per warp in units of 256
REGISTERS_PER_SM = 64 * KIB
MAX_REGISTERS_PER_THREAD = 255
REGISTER_ALLOC_UNIT = 256
WARP_THREADS = 32  # also tcgen05.ld: warp w of a warpgroup reaches TMEM lanes 32w .. 32w + 31
TMA_ROW_BYTES = 16  # a TMA tensor's strides (so its rows) are multiples of 16 bytes
WARPGROUP_THREADS = 128  # wgmma and setmaxnreg act on 4 consecutive warps
TMEM_ADDRESS_LANE_SHIFT = 16  # a TMEM address is lane << 16 | column
# the CuTe DSL aligns the dynamic shared-memory array to at most this (".align 1024" in PTX)
MAX_SMEM_BASE_ALIGNMENT = 1024
# Programming Guide, "Thread Block Clusters": 8 CTAs is the portable cluster size; larger
# clusters need cudaFuncAttributeNonPortableClusterSizeAllowed (up to Arch.max_cluster_size)
MAX_PORTABLE_CLUSTER_SIZE = 8


@dataclass(frozen=True)
class Arch:
    """One GPU architecture's memory limits."""

    name: str  # canonical, e.g. "sm_90"
    family: str  # e.g. "Hopper"
    smem_per_block: int  # opt-in maximum dynamic shared memory per block, bytes
    has_tmem: bool = False
    # compiles as sm_XXa: its arch-specific instructions (wgmma, tcgen05, setmaxnreg) need the suffix
    arch_specific: bool = False
    smem_per_sm: int = 0  # largest shared-memory carveout of one SM, bytes
    carveouts_kib: tuple[int, ...] = ()  # the shared-memory sizes an SM can be set to, KiB
    max_ctas_per_sm: int = 32  # resident blocks per SM
    max_warps_per_sm: int = 64  # resident warps per SM
    # TMEM columns a CTA can allocate, and how many of them it may hold while others share the SM:
    # the rest only under exclusive allocation (sm_107: 576, of which 512 shared)
    tmem_max_columns: int = 0
    tmem_shared_columns: int = 0
    # SMs of the arch's datacenter part: the size of a persistent grid compiled without a GPU
    sm_count: int | None = None
    # the warp-group MMA the arch's GEMM kernel is written for: "wgmma" (Hopper) or "tcgen05"
    mma: str | None = None
    # the SM's unified data cache (L1 + shared memory), KiB: L1 is what the carveout leaves
    l1_smem_kib: int | None = None
    # most CTAs in a cluster (0: no clusters); above MAX_PORTABLE_CLUSTER_SIZE only non-portably
    max_cluster_size: int = 0
    # SMs of each GPC of the arch's datacenter part, as far as cluster placement goes (None: unknown)
    gpc_sms: tuple[int, ...] | None = None
    # most CTAs of a cluster launch resident on one SM (None: unknown)
    max_cluster_ctas_per_sm: int | None = None

    @property
    def number(self) -> int:
        return int(self.name[3:])

    @property
    def compile_target(self) -> str:
        """The name a compiler takes for this arch's full instruction set, e.g. ``sm_90a``."""
        return self.name + ("a" if self.arch_specific else "")

    @property
    def tmem_columns(self) -> int:
        """Columns a CTA's tensor memory has (0 without TMEM)."""
        return self.tmem_max_columns if self.has_tmem else 0

    def __str__(self) -> str:
        return self.name


# Carveout lists, Programming Guide "Shared Memory" sections: 8.0/8.7 "0, 8, 16, 32,
# 64, 100, 132 or 164 KB"; 8.6/8.9 and 12.x "0, 8, 16, 32, 64 or 100 KB"; 9.0 and
# 10.x "0, 8, 16, 32, 64, 100, 132, 164, 196 or 228 KB". The per-SM size is the
# largest carveout. Resident blocks and warps per SM: the technical-specifications
# table (8.0: 32 / 64; 8.6, 8.7: 16 / 48; 8.9: 24 / 48; 9.0, 10.x: 32 / 64;
# 12.x: 32 / 48). sm_101 and sm_110 (Jetson Thor) are taken as 10.0, whose
# per-block limit the DSL's capacity map gives them too (not checked on hardware).
# Unified data cache per SM, the same sections: 8.0/8.7 192 KB; 8.6/8.9 and 12.x
# 128 KB; 9.0 and 10.x 256 KB.
#
# Clusters on the H200 (sm_90), inferred from its driver (results/cluster_occupancy_h200.md):
# cudaOccupancyMaxActiveClusters answers, for every cluster size k (1..16) and every
# CTAs-per-SM count c asked, sum over GPCs of size s >= k of floor(s * min(c, 8) / k) with
# GPCs of 18, 18, 16, 16, 16, 16, 16, 8, 2, 2, 2 and 2 SMs -- the only layout (groups of
# 1..32 SMs) that matches all 112 distinct answers; the SM ids of launched clusters group
# the same way. The four pairs are taken as groups of their own because no cluster of more
# than 2 CTAs is placed on them; where they sit physically is not known. Non-portable
# clusters of 16 launch there. Blackwell's 16 is the same limit, not checked on hardware;
# sm_120's clusters are taken as the portable 8 (not checked). Other archs have no layout here.
_H200_GPC_SMS = (18, 18, 16, 16, 16, 16, 16, 8, 2, 2, 2, 2)
_H200_CLUSTER_CTAS_PER_SM = 8
_CARVEOUTS_164 = (0, 8, 16, 32, 64, 100, 132, 164)
_CARVEOUTS_100 = (0, 8, 16, 32, 64, 100)
_CARVEOUTS_228 = (0, 8, 16, 32, 64, 100, 132, 164, 196, 228)


def _arch(  # noqa: PLR0913 - one row of the arch table
    name: str,
    family: str,
    per_block_bytes: int,
    carveouts: tuple[int, ...],
    ctas: int,
    warps: int,
    *,
    has_tmem: bool = False,
    arch_specific: bool = False,
    tmem_columns: int = TMEM_COLUMNS,
    sm_count: int | None = None,
    mma: str | None = None,
    l1_smem_kib: int | None = None,
    max_cluster_size: int = 0,
    gpc_sms: tuple[int, ...] | None = None,
    max_cluster_ctas_per_sm: int | None = None,
) -> Arch:
    return Arch(
        name,
        family,
        per_block_bytes,
        has_tmem,
        arch_specific,
        carveouts[-1] * KIB,
        carveouts,
        ctas,
        warps,
        tmem_max_columns=tmem_columns if has_tmem else 0,
        tmem_shared_columns=min(tmem_columns, TMEM_COLUMNS) if has_tmem else 0,
        sm_count=sm_count,
        mma=mma,
        l1_smem_kib=l1_smem_kib,
        max_cluster_size=max_cluster_size,
        gpc_sms=gpc_sms,
        max_cluster_ctas_per_sm=max_cluster_ctas_per_sm,
    )


# sm_107 (Rubin), as nvidia-cutlass-dsl 4.8.1 gives it: 334848 B per block
# (cutlass.memory.get_smem_capacity_in_bytes) and 576 TMEM columns, those above
# 512 only with an exclusive allocation (cute.arch.tmem). Its carveouts and
# resident limits are taken as 10.0's with the larger top carveout (not checked).
_CARVEOUTS_328 = (*_CARVEOUTS_228[:-1], 328)


def _blackwell(name: str, sm_count: int | None = None) -> Arch:
    """A datacenter Blackwell row (10.x): TMEM, tcgen05, 10.0's limits."""
    return _arch(
        name,
        "Blackwell",
        227 * KIB,
        _CARVEOUTS_228,
        32,
        64,
        has_tmem=True,
        arch_specific=True,
        sm_count=sm_count,
        mma="tcgen05",
        l1_smem_kib=256,
        max_cluster_size=16,
    )


_ARCH_LIST = (
    _arch("sm_80", "Ampere", 163 * KIB, _CARVEOUTS_164, 32, 64, l1_smem_kib=192),
    _arch("sm_86", "Ampere", 99 * KIB, _CARVEOUTS_100, 16, 48, l1_smem_kib=128),
    _arch("sm_87", "Ampere", 163 * KIB, _CARVEOUTS_164, 16, 48, l1_smem_kib=192),
    _arch("sm_89", "Ada", 99 * KIB, _CARVEOUTS_100, 24, 48, l1_smem_kib=128),
    _arch(
        "sm_90",
        "Hopper",
        227 * KIB,
        _CARVEOUTS_228,
        32,
        64,
        arch_specific=True,
        sm_count=132,
        mma="wgmma",
        l1_smem_kib=256,
        max_cluster_size=16,
        gpc_sms=_H200_GPC_SMS,
        max_cluster_ctas_per_sm=_H200_CLUSTER_CTAS_PER_SM,
    ),
    _blackwell("sm_100", sm_count=148),
    _blackwell("sm_101"),
    _blackwell("sm_103"),
    _arch(
        "sm_107",
        "Rubin",
        334848,
        _CARVEOUTS_328,
        32,
        64,
        has_tmem=True,
        arch_specific=True,
        tmem_columns=576,
        max_cluster_size=16,
    ),
    _blackwell("sm_110"),
    _arch("sm_120", "Blackwell (GeForce)", 99 * KIB, _CARVEOUTS_100, 32, 48, l1_smem_kib=128, max_cluster_size=8),
    _arch("sm_121", "Blackwell (GeForce)", 99 * KIB, _CARVEOUTS_100, 32, 48, l1_smem_kib=128, max_cluster_size=8),
)

ARCHS: dict[str, Arch] = {a.name: a for a in _ARCH_LIST}

_ALIASES = {
    "ampere": "sm_80",
    "a100": "sm_80",
    "ada": "sm_89",
    "hopper": "sm_90",
    "h100": "sm_90",
    "h200": "sm_90",
    "blackwell": "sm_100",
    "b200": "sm_100",
    "gb200": "sm_100",
}

_ARCH_RE = re.compile(r"^(?:sm_?)?(\d{2,3})[af]?$")


def get_arch(arch: str | int | Arch) -> Arch:
    """Resolve ``"sm_90a"``, ``"sm100"``, ``90``, ``"hopper"`` or an :class:`Arch`."""
    if isinstance(arch, Arch):
        return arch
    if isinstance(arch, bool) or not isinstance(arch, (str, int)):
        raise TypeError(f"architecture must be a name like 'sm_90a' or an int, got {arch!r}")
    key = str(arch).strip().lower()
    key = _ALIASES.get(key, key)
    m = _ARCH_RE.match(key)
    if m is not None:
        name = f"sm_{m.group(1)}"
        if name in ARCHS:
            return ARCHS[name]
    known = ", ".join(ARCHS)
    raise ValueError(f"unknown architecture {arch!r}; known: {known} (suffixes 'a'/'f' accepted)")


# every TMEM arch has the same 512 columns, so a TMEM layout is judged against the
# first of them when nothing else names one; an SMEM layout is not judged at all
_TMEM_FALLBACK = "sm_100"
# an interactive view's arch menu must show some choice; it shows this one, visibly
VIEW_FALLBACK_ARCH = "sm_90"
ARCH_ENV = "CUTE_DSL_ARCH"  # what the CuTe DSL itself compiles for
TMEM_FALLBACK_ARCH = _TMEM_FALLBACK

# what the machine says (nvidia-smi, $CUTE_DSL_ARCH) lives in smemviz.device, not in this table;
# the names below were here before and still answer for one release, with a warning
_MOVED_TO_DEVICE = ("GpuQueryError", "query_gpu", "detect_arch", "default_arch")


def __getattr__(name: str) -> Any:
    if name in _MOVED_TO_DEVICE:
        import warnings

        warnings.warn(
            f"smemviz.hardware.{name} is deprecated and will be removed in the next release; "
            f"use smemviz.device.{name} (the facts table asks no machine)",
            DeprecationWarning,
            stacklevel=2,
        )
        from . import device

        return getattr(device, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def compile_target(arch: str | int | Arch) -> str:
    """The compiler's name for ``arch``: ``"sm90"``/``"hopper"`` -> ``"sm_90a"``.

    A suffix the caller wrote (``a``/``f``) is kept; without one, archs with
    arch-specific instructions get ``a``.
    """
    resolved = get_arch(arch)
    if isinstance(arch, (str, int)) and not isinstance(arch, bool):
        written = str(arch).strip().lower()
        if written[-1:] in ("a", "f") and _ARCH_RE.match(written):
            return resolved.name + written[-1]
    return resolved.compile_target


def arch_of_capability(major: int, minor: int) -> Arch:
    """The arch of a CUDA compute capability, e.g. (9, 0) -> sm_90."""
    return get_arch(major * 10 + minor)


def bank_of(byte_offset: int) -> int:
    """The shared-memory bank (0..31) that a byte offset falls in."""
    return (byte_offset // SMEM_BANK_BYTES) % SMEM_BANKS


def tmem_alloc_columns(columns: int, arch: str | int | Arch | None = None) -> int:
    """The column count to pass to ``tcgen05.alloc`` for ``columns`` used columns.

    Rounds up to a power of two, at least 32; 0 when nothing is used. Beyond
    512, an ``arch`` with a wider TMEM (sm_107: 576) takes it all, exclusively;
    otherwise ``ValueError``.
    """
    if columns < 0:
        raise ValueError(f"TMEM column count must be >= 0, got {columns}")
    if columns == 0:
        return 0
    if columns > TMEM_ALLOC_MAX_COLUMNS:
        wide = get_arch(arch) if arch is not None else None
        if wide is not None and columns <= wide.tmem_max_columns:
            return wide.tmem_max_columns  # the whole of a wider TMEM: an exclusive allocation
        limit = wide.tmem_max_columns if wide is not None and wide.has_tmem else TMEM_ALLOC_MAX_COLUMNS
        raise ValueError(
            f"{columns} TMEM columns exceed the {limit} columns of a CTA by {columns - limit}"
            + (f" on {wide.name}" if wide is not None else "")
        )
    n = TMEM_ALLOC_MIN_COLUMNS
    while n < columns:
        n *= 2
    return n


def sm_count(arch: str | int | Arch) -> int:
    """The SM count a persistent grid for ``arch`` assumes when compiling without a GPU."""
    resolved = get_arch(arch)
    if resolved.sm_count is None:
        known = ", ".join(a.name for a in ARCHS.values() if a.sm_count is not None)
        raise ValueError(f"no SM count is recorded for {resolved.name}; known: {known}")
    return resolved.sm_count


def tmem_targets() -> tuple[str, ...]:
    """Compile targets of the archs with tensor memory whose tcgen05 kernels smemviz compiles."""
    return tuple(a.compile_target for a in ARCHS.values() if a.mma == "tcgen05")
