"""How many CTAs of a kernel fit on one SM, and what one more would take.

The model is the CUDA occupancy calculator's for sm_80 and later: a CTA's
shared memory plus the 1 KiB the system reserves per CTA, rounded up to the
128-byte allocation unit, shares the SM's largest carveout with the other
resident CTAs; warps and registers (64 K per SM, allocated per warp in units
of 256) and the resident-CTA limit cap the count too. Every number comes from
:mod:`smemviz.hardware`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, overload

from .. import hardware
from .._units import align_up

if TYPE_CHECKING:
    from ..layout._plan import LayoutPlan

__all__ = ["Occupancy", "occupancy", "plan_occupancy", "smem_footprint"]


def smem_footprint(smem_bytes: int) -> int:
    """Shared memory one CTA takes from its SM: its bytes plus the per-CTA
    reservation, in whole allocation units."""
    return align_up(smem_bytes + hardware.SMEM_RESERVED_PER_CTA, hardware.SMEM_ALLOC_GRANULARITY)


@dataclass(frozen=True)
class Occupancy:
    """Resident CTAs per SM for one SMEM size on one architecture."""

    arch: str
    smem_per_cta: int  # bytes the kernel asks for
    footprint: int  # what one CTA takes from the SM (see smem_footprint)
    smem_per_sm: int  # the SM's largest carveout
    by_smem: int  # CTAs the shared memory allows (0: over the per-block limit)
    by_threads: int | None  # CTAs the warps allow (None: threads not given)
    by_registers: int | None  # CTAs the registers allow (None: registers not given)
    max_ctas: int  # the architecture's resident-CTA limit
    carveout_kib: int | None  # smallest carveout that holds `ctas` CTAs
    next_smem_per_cta: int | None  # most SMEM per CTA at which ctas + 1 fit; None when unreachable

    @property
    def ctas(self) -> int:
        limits = [self.by_smem, self.max_ctas]
        limits += [n for n in (self.by_threads, self.by_registers) if n is not None]
        return min(limits)

    @property
    def limiter(self) -> str:
        """What bounds ``ctas``: "shared memory", "threads", "registers" or "CTA slots"."""
        for name, n in (
            ("shared memory", self.by_smem),
            ("threads", self.by_threads),
            ("registers", self.by_registers),
        ):
            if n is not None and n == self.ctas:
                return name
        return "CTA slots"

    @property
    def smem_to_save(self) -> int | None:
        """Bytes to cut from each CTA to reach the next occupancy level (None: SMEM is not the limit)."""
        if self.next_smem_per_cta is None:
            return None
        return max(0, self.smem_per_cta - self.next_smem_per_cta)

    def message(self) -> str:
        if self.by_smem == 0:
            return f"{self.arch}: no CTA fits ({self.smem_per_cta:,} B is over the per-block limit)"
        plural = "s" if self.ctas != 1 else ""
        text = f"{self.arch}: {self.ctas} CTA{plural}/SM (limited by {self.limiter})"
        if self.next_smem_per_cta is not None:
            text += (
                f"; {self.ctas + 1} CTAs/SM need <= {self.next_smem_per_cta:,} B per CTA ({self.smem_to_save:,} B less)"
            )
        return text


@overload
def occupancy(
    smem: int, arch: str | int | hardware.Arch, *, threads: int | None = None, registers: int | None = None
) -> Occupancy: ...


@overload
def occupancy(
    smem: LayoutPlan,
    arch: str | int | hardware.Arch | None = None,
    *,
    threads: int | None = None,
    registers: int | None = None,
) -> Occupancy | None: ...


def occupancy(
    smem: int | LayoutPlan,
    arch: str | int | hardware.Arch | None = None,
    *,
    threads: int | None = None,
    registers: int | None = None,
) -> Occupancy | None:
    """Occupancy of a CTA on ``arch`` whose shared memory is ``smem``: a byte count, or
    an SMEM plan (its unified bytes; ``arch`` defaults to the plan's own).

    ``threads`` (per CTA) and ``registers`` (per thread) add their limits;
    registers need threads. Raises ``ValueError`` naming the bad number. A TMEM plan,
    or a plan with no arch to judge it on, has no occupancy: ``None``.
    """
    if isinstance(smem, int) and not isinstance(smem, bool):
        if arch is None:
            raise ValueError("occupancy of a byte count needs arch=, e.g. 'sm_90a'")
        return _occupancy(smem, arch, threads, registers)
    if isinstance(smem, bool) or not hasattr(smem, "memory") or not hasattr(smem, "unified_bytes"):
        raise TypeError(f"occupancy takes a LayoutPlan or a byte count (int), got {type(smem).__name__}")
    return plan_occupancy(smem, arch, threads=threads, registers=registers)


def plan_occupancy(
    plan: LayoutPlan,
    arch: str | int | hardware.Arch | None = None,
    *,
    threads: int | None = None,
    registers: int | None = None,
) -> Occupancy | None:
    """The occupancy of an SMEM plan on ``arch`` (default: its own); ``None`` for TMEM or no arch."""
    if plan.memory != "smem":
        return None
    a = plan.resolved_arch(arch)
    if a is None:
        return None
    return _occupancy(plan.unified_bytes, a, threads, registers)


def _occupancy(
    smem_bytes: int, arch: str | int | hardware.Arch, threads: int | None, registers: int | None
) -> Occupancy:
    a = hardware.get_arch(arch)
    if not isinstance(smem_bytes, int) or smem_bytes < 0:
        raise ValueError(f"shared memory per CTA must be an int >= 0, got {smem_bytes!r}")
    if threads is not None and not (isinstance(threads, int) and 1 <= threads <= 1024):
        raise ValueError(f"threads per CTA must be 1..1024, got {threads!r}")
    if registers is not None:
        if threads is None:
            raise ValueError("registers per thread need threads per CTA too")
        if not (isinstance(registers, int) and 1 <= registers <= hardware.MAX_REGISTERS_PER_THREAD):
            raise ValueError(f"registers per thread must be 1..{hardware.MAX_REGISTERS_PER_THREAD}, got {registers!r}")
    footprint = smem_footprint(smem_bytes)
    by_smem = 0 if smem_bytes > a.smem_per_block else a.smem_per_sm // footprint
    by_threads = by_registers = None
    if threads is not None:
        warps = -(-threads // hardware.WARP_THREADS)
        by_threads = a.max_warps_per_sm // warps
        if registers is not None:
            per_warp = align_up(registers * hardware.WARP_THREADS, hardware.REGISTER_ALLOC_UNIT)
            by_registers = (hardware.REGISTERS_PER_SM // per_warp) // warps
    others = [n for n in (by_threads, by_registers) if n is not None]
    ctas = min([by_smem, a.max_ctas_per_sm, *others])
    carveout = None
    if ctas > 0:
        carveout = next((c for c in a.carveouts_kib if c * hardware.KIB >= ctas * footprint), None)
    next_smem = None
    target = ctas + 1
    if ctas == by_smem and target <= min([a.max_ctas_per_sm, *others]):
        share = a.smem_per_sm // target
        share -= share % hardware.SMEM_ALLOC_GRANULARITY
        candidate = min(share - hardware.SMEM_RESERVED_PER_CTA, a.smem_per_block)
        if candidate >= 0:
            next_smem = candidate
    return Occupancy(
        arch=a.name,
        smem_per_cta=smem_bytes,
        footprint=footprint,
        smem_per_sm=a.smem_per_sm,
        by_smem=by_smem,
        by_threads=by_threads,
        by_registers=by_registers,
        max_ctas=a.max_ctas_per_sm,
        carveout_kib=carveout,
        next_smem_per_cta=next_smem,
    )
