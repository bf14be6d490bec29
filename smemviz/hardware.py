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
"""

from __future__ import annotations

import re
from dataclasses import dataclass

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
    "TMA_ROW_BYTES",
    "WARPGROUP_THREADS",
    "WARP_THREADS",
    "TMEM_ADDRESS_LANE_SHIFT",
    "REGISTERS_PER_SM",
    "bank_of",
    "default_arch",
    "compile_target",
    "arch_of_capability",
    "MAX_SMEM_BASE_ALIGNMENT",
    "tmem_alloc_columns",
    "sm_count",
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

TMA_ALIGNMENT = 128
SWIZZLE_128B_ALIGNMENT = 1024
TMA_ROW_BYTES = 16  # a TMA tensor's strides (so its rows) are multiples of 16 bytes
WARPGROUP_THREADS = 128  # wgmma and setmaxnreg act on 4 consecutive warps
TMEM_ADDRESS_LANE_SHIFT = 16  # a TMEM address is lane << 16 | column
WARP_THREADS = 32  # tcgen05.ld: warp w of a warpgroup reaches TMEM lanes 32w .. 32w + 31
REGISTERS_PER_SM = 65536  # 32-bit registers; a CTA's threads x registers/thread must fit
# the CuTe DSL aligns the dynamic shared-memory array to at most this (".align 1024" in PTX)
MAX_SMEM_BASE_ALIGNMENT = 1024


@dataclass(frozen=True)
class Arch:
    """One GPU architecture's memory limits."""

    name: str  # canonical, e.g. "sm_90"
    family: str  # e.g. "Hopper"
    smem_per_block: int  # opt-in maximum dynamic shared memory per block, bytes
    has_tmem: bool = False
    # compiles as sm_XXa: its arch-specific instructions (wgmma, tcgen05, setmaxnreg) need the suffix
    arch_specific: bool = False

    @property
    def number(self) -> int:
        return int(self.name[3:])

    @property
    def compile_target(self) -> str:
        """The name a compiler takes for this arch's full instruction set, e.g. ``sm_90a``."""
        return self.name + ("a" if self.arch_specific else "")

    @property
    def tmem_columns(self) -> int:
        return TMEM_COLUMNS if self.has_tmem else 0

    def __str__(self) -> str:
        return self.name


_ARCH_LIST = (
    Arch("sm_80", "Ampere", 163 * KIB),
    Arch("sm_86", "Ampere", 99 * KIB),
    Arch("sm_87", "Ampere", 163 * KIB),
    Arch("sm_89", "Ada", 99 * KIB),
    Arch("sm_90", "Hopper", 227 * KIB, arch_specific=True),
    Arch("sm_100", "Blackwell", 227 * KIB, has_tmem=True, arch_specific=True),
    Arch("sm_101", "Blackwell", 227 * KIB, has_tmem=True, arch_specific=True),
    Arch("sm_103", "Blackwell", 227 * KIB, has_tmem=True, arch_specific=True),
    Arch("sm_110", "Blackwell", 227 * KIB, has_tmem=True, arch_specific=True),
    Arch("sm_120", "Blackwell (GeForce)", 99 * KIB),
    Arch("sm_121", "Blackwell (GeForce)", 99 * KIB),
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


# the arch a memory is judged against when nothing names one
_DEFAULT_ARCH = {"smem": "sm_90", "tmem": "sm_100"}


def default_arch(memory: str) -> Arch:
    """The arch a layout of ``memory`` ("smem"/"tmem") is judged against when none is given."""
    return ARCHS[_DEFAULT_ARCH[memory]]


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


def tmem_alloc_columns(columns: int) -> int:
    """The column count to pass to ``tcgen05.alloc`` for ``columns`` used columns.

    Rounds up to a power of two, at least 32; 0 when nothing is used.
    Raises ``ValueError`` beyond the 512 columns a CTA has.
    """
    if columns < 0:
        raise ValueError(f"TMEM column count must be >= 0, got {columns}")
    if columns == 0:
        return 0
    if columns > TMEM_ALLOC_MAX_COLUMNS:
        raise ValueError(
            f"{columns} TMEM columns exceed the {TMEM_ALLOC_MAX_COLUMNS} columns of a CTA "
            f"by {columns - TMEM_ALLOC_MAX_COLUMNS}"
        )
    n = TMEM_ALLOC_MIN_COLUMNS
    while n < columns:
        n *= 2
    return n


# SMs of each arch's datacenter part (H100/H200 SXM: 132; B200: 148): the default size of a
# persistent grid when no GPU is here to ask (a launch asks the GPU it runs on)
_SM_COUNT = {"sm_90": 132, "sm_100": 148}


def sm_count(arch: str | int | Arch) -> int:
    """The SM count a persistent grid for ``arch`` assumes when compiling without a GPU."""
    resolved = get_arch(arch)
    if resolved.name not in _SM_COUNT:
        raise ValueError(f"no SM count is recorded for {resolved.name}; known: {', '.join(_SM_COUNT)}")
    return _SM_COUNT[resolved.name]
