"""How many CTAs of a kernel fit on one SM, and what one more would take.

The model is the CUDA occupancy calculator's for sm_80 and later: a CTA's
shared memory plus the 1 KiB the system reserves per CTA, rounded up to the
128-byte allocation unit, shares the SM's largest carveout with the other
resident CTAs; warps and registers (64 K per SM, allocated per warp in units
of 256) and the resident-CTA limit cap the count too. Every number comes from
:mod:`smemviz.hardware`.

Two limits beyond the calculator's:

* TMEM (Blackwell): a CTA's ``tcgen05.alloc`` takes a power of two of at least
  32 columns out of the SM's 512; the PTX ISA says an allocation blocks until
  enough columns are free, so CTAs beyond ``512 // columns`` are resident but
  wait. That is the document's word; it has not been run here.
* Clusters (sm_90 and later): a cluster's CTAs run at once in one GPC, each on
  an SM of its own, so a GPC of ``s`` SMs holds ``floor(s * c / k)`` clusters
  of ``k`` CTAs when ``k <= s`` (``c``: CTAs per SM, capped for cluster
  launches). The GPC layout and the cap are the H200 driver's, inferred from
  ``cudaOccupancyMaxActiveClusters`` (results/cluster_occupancy_h200.md), which
  this model equals on every recorded case.
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
    carveout_kib: int | None  # smallest carveout that holds `resident_ctas` CTAs
    next_smem_per_cta: int | None  # most SMEM per CTA at which ctas + 1 fit; None when unreachable
    # TMEM (None: tmem_columns not given): the columns tcgen05.alloc takes per CTA, and how many
    # CTAs of one SM hold theirs at once (the SM's 512 columns // tmem_alloc)
    tmem_alloc: int | None = None
    by_tmem: int | None = None
    # clusters (None: cluster not given): CTAs per cluster, the CTAs per SM a cluster launch
    # allows, and how many clusters can be active at once (None: the arch's GPC layout is unknown)
    cluster_size: int | None = None
    cluster_ctas_per_sm: int | None = None
    max_active_clusters: int | None = None
    l1_kib: int | None = None  # the SM's unified cache left as L1 beside `carveout_kib` (None: unknown)

    @property
    def resident_ctas(self) -> int:
        """CTAs per SM the launch makes resident: shared memory, threads, registers, CTA slots."""
        limits = [self.by_smem, self.max_ctas]
        limits += [n for n in (self.by_threads, self.by_registers) if n is not None]
        return min(limits)

    @property
    def ctas(self) -> int:
        """CTAs per SM that can work at once: ``resident_ctas``, and no more than hold their TMEM."""
        if self.by_tmem is None:
            return self.resident_ctas
        return min(self.resident_ctas, self.by_tmem)

    @property
    def limiter(self) -> str:
        """What bounds ``ctas``: "shared memory", "threads", "registers", "TMEM" or "CTA slots"."""
        for name, n in (
            ("shared memory", self.by_smem),
            ("threads", self.by_threads),
            ("registers", self.by_registers),
            ("TMEM", self.by_tmem),
        ):
            if n is not None and n == self.ctas:
                return name
        return "CTA slots"

    @property
    def cluster_ctas(self) -> int | None:
        """CTAs of the whole GPU active at once in clusters (None: not known or no cluster)."""
        if self.max_active_clusters is None or self.cluster_size is None:
            return None
        return self.max_active_clusters * self.cluster_size

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
        if self.by_tmem is not None:
            text += f"; TMEM: {self.tmem_alloc} columns per CTA, room for {self.by_tmem} CTA{_s(self.by_tmem)}/SM"
            if self.by_tmem < self.resident_ctas:
                text += f" ({self.resident_ctas} resident: the others wait in tcgen05.alloc)"
        if self.cluster_size is not None:
            size = self.cluster_size
            portable = "" if size <= hardware.MAX_PORTABLE_CLUSTER_SIZE else ", non-portable"
            text += f"; clusters of {size}{portable}: "
            if self.max_active_clusters is None:
                text += f"active count unknown (no GPC layout for {self.arch})"
            else:
                sms = sum(hardware.get_arch(self.arch).gpc_sms or ())
                text += (
                    f"{self.max_active_clusters:,} active at once on {sms} SMs ({self.cluster_ctas:,} CTAs,"
                    f" <= {self.cluster_ctas_per_sm} per SM)"
                )
        if self.l1_kib is not None and self.carveout_kib is not None:
            text += f"; {self.l1_kib} KiB L1 beside the {self.carveout_kib} KiB carveout"
        return text


def _s(n: int) -> str:
    return "" if n == 1 else "s"


Cluster = int | tuple[int, ...]


@overload
def occupancy(
    smem: int,
    arch: str | int | hardware.Arch,
    *,
    threads: int | None = None,
    registers: int | None = None,
    cluster: Cluster | None = None,
    tmem_columns: int | None = None,
) -> Occupancy: ...


@overload
def occupancy(
    smem: LayoutPlan,
    arch: str | int | hardware.Arch | None = None,
    *,
    threads: int | None = None,
    registers: int | None = None,
    cluster: Cluster | None = None,
    tmem_columns: int | None = None,
) -> Occupancy | None: ...


def occupancy(  # noqa: PLR0913 - the occupancy calculator's inputs
    smem: int | LayoutPlan,
    arch: str | int | hardware.Arch | None = None,
    *,
    threads: int | None = None,
    registers: int | None = None,
    cluster: Cluster | None = None,
    tmem_columns: int | None = None,
) -> Occupancy | None:
    """Occupancy of a CTA on ``arch`` whose shared memory is ``smem``: a byte count, or
    an SMEM plan (its unified bytes; ``arch`` defaults to the plan's own).

    ``threads`` (per CTA) and ``registers`` (per thread) add their limits;
    registers need threads. ``cluster`` (CTAs per cluster, or its shape such as
    ``(2, 1, 1)``) adds ``max_active_clusters`` where the arch's GPC layout is
    known (sm_90: the H200's). ``tmem_columns`` (columns a CTA uses, on an arch
    with TMEM) adds how many CTAs per SM hold their allocation at once.
    Raises ``ValueError`` naming the bad number. A TMEM plan, or a plan with no
    arch to judge it on, has no occupancy: ``None``.
    """
    if isinstance(smem, int) and not isinstance(smem, bool):
        if arch is None:
            raise ValueError("occupancy of a byte count needs arch=, e.g. 'sm_90a'")
        return _occupancy(smem, arch, threads, registers, cluster, tmem_columns)
    if isinstance(smem, bool) or not hasattr(smem, "memory") or not hasattr(smem, "unified_bytes"):
        raise TypeError(f"occupancy takes a LayoutPlan or a byte count (int), got {type(smem).__name__}")
    return plan_occupancy(smem, arch, threads=threads, registers=registers, cluster=cluster, tmem_columns=tmem_columns)


def plan_occupancy(  # noqa: PLR0913 - the occupancy calculator's inputs
    plan: LayoutPlan,
    arch: str | int | hardware.Arch | None = None,
    *,
    threads: int | None = None,
    registers: int | None = None,
    cluster: Cluster | None = None,
    tmem_columns: int | None = None,
) -> Occupancy | None:
    """The occupancy of an SMEM plan on ``arch`` (default: its own); ``None`` for TMEM or no arch."""
    if plan.memory != "smem":
        return None
    a = plan.resolved_arch(arch)
    if a is None:
        return None
    return _occupancy(plan.unified_bytes, a, threads, registers, cluster, tmem_columns)


def cluster_size(cluster: Cluster, arch: str | int | hardware.Arch) -> int:
    """CTAs in a cluster given as a count or a shape; ``ValueError`` when ``arch`` cannot launch it."""
    a = hardware.get_arch(arch)
    dims = (cluster,) if isinstance(cluster, int) else tuple(cluster)
    if not dims or len(dims) > 3 or any(isinstance(d, bool) or not isinstance(d, int) or d < 1 for d in dims):
        raise ValueError(f"a cluster is a CTA count or a shape of 1 to 3 positive ints, got {cluster!r}")
    size = 1
    for d in dims:
        size *= d
    if a.max_cluster_size == 0:
        raise ValueError(f"{a.name} has no thread-block clusters (sm_90 and later)")
    if size > a.max_cluster_size:
        raise ValueError(f"a cluster of {size} CTAs is over the {a.max_cluster_size} {a.name} allows")
    return size


def max_active_clusters(ctas_per_sm: int, size: int, arch: str | int | hardware.Arch) -> int | None:
    """Clusters of ``size`` CTAs active at once on ``arch``'s GPU when ``ctas_per_sm`` CTAs fit
    on one SM: each GPC of ``s >= size`` SMs holds ``floor(s * c / size)`` of them, ``c`` being
    ``ctas_per_sm`` capped for cluster launches. ``None`` when the arch's GPC layout is unknown."""
    a = hardware.get_arch(arch)
    if a.gpc_sms is None:
        return None
    c = ctas_per_sm if a.max_cluster_ctas_per_sm is None else min(ctas_per_sm, a.max_cluster_ctas_per_sm)
    return sum(s * c // size for s in a.gpc_sms if s >= size)


def _tmem_limit(a: hardware.Arch, tmem_columns: int | None) -> tuple[int | None, int | None]:
    """(columns tcgen05.alloc takes per CTA, CTAs per SM that hold theirs at once); Nones when not given."""
    if tmem_columns is None:
        return None, None
    if not a.has_tmem:
        raise ValueError(f"{a.name} has no tensor memory; tmem_columns needs a Blackwell arch such as sm_100a")
    if isinstance(tmem_columns, bool) or not isinstance(tmem_columns, int) or tmem_columns < 0:
        raise ValueError(f"TMEM columns per CTA must be an int >= 0, got {tmem_columns!r}")
    if tmem_columns == 0:
        return None, None
    alloc = hardware.tmem_alloc_columns(tmem_columns, a)
    # an allocation past the shared columns (sm_107's 576) holds the whole TMEM alone
    return alloc, a.tmem_shared_columns // alloc if alloc <= a.tmem_shared_columns else 1


def _check_threads(threads: int | None, registers: int | None) -> None:
    if threads is not None and not (isinstance(threads, int) and 1 <= threads <= 1024):
        raise ValueError(f"threads per CTA must be 1..1024, got {threads!r}")
    if registers is not None:
        if threads is None:
            raise ValueError("registers per thread need threads per CTA too")
        if not (isinstance(registers, int) and 1 <= registers <= hardware.MAX_REGISTERS_PER_THREAD):
            raise ValueError(f"registers per thread must be 1..{hardware.MAX_REGISTERS_PER_THREAD}, got {registers!r}")


def _occupancy(  # noqa: PLR0913 - the occupancy calculator's inputs
    smem_bytes: int,
    arch: str | int | hardware.Arch,
    threads: int | None,
    registers: int | None,
    cluster: Cluster | None = None,
    tmem_columns: int | None = None,
) -> Occupancy:
    a = hardware.get_arch(arch)
    if not isinstance(smem_bytes, int) or smem_bytes < 0:
        raise ValueError(f"shared memory per CTA must be an int >= 0, got {smem_bytes!r}")
    _check_threads(threads, registers)
    tmem_alloc, by_tmem = _tmem_limit(a, tmem_columns)
    size = None if cluster is None else cluster_size(cluster, a)
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
    resident = min([by_smem, a.max_ctas_per_sm, *others])
    ctas = resident if by_tmem is None else min(resident, by_tmem)
    if by_tmem is not None:
        others.append(by_tmem)
    carveout = None
    if resident > 0:
        carveout = next((c for c in a.carveouts_kib if c * hardware.KIB >= resident * footprint), None)
    l1 = None if carveout is None or a.l1_smem_kib is None else a.l1_smem_kib - carveout
    cluster_per_sm = clusters = None
    if size is not None:
        cap = a.max_cluster_ctas_per_sm
        cluster_per_sm = resident if cap is None else min(resident, cap)
        clusters = max_active_clusters(resident, size, a)
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
        tmem_alloc=tmem_alloc,
        by_tmem=by_tmem,
        cluster_size=size,
        cluster_ctas_per_sm=cluster_per_sm,
        max_active_clusters=clusters,
        l1_kib=l1,
    )
