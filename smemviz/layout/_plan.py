"""The computed layout as one immutable value that every view reads.

A :class:`LayoutPlan` lists every placed region (data allocations, pipeline
mbarrier storage, the TMEM-pointer slot) with its offset, size, alignment,
the padding in front of it and, for aliased regions, its alias group and
phase. Reports, figures, exports and the kernel bridge all consume it.

Group and phase indices are 0-based in the data; views show them 1-based.

A plan solved from lifetimes also names its program ``steps``, gives every
region the steps it is ``live`` in, and records the proven ``lower_bound`` and
whether the layout is ``optimal``.
"""

from __future__ import annotations

import json
import warnings
from dataclasses import asdict, dataclass, replace
from functools import cached_property, lru_cache
from typing import TYPE_CHECKING, Any, Literal

from .. import device, hardware
from .._errors import CapacityError
from .._names import shown
from .._units import align_up
from ._access import SmemAccess
from ._tma_atom import TmaAtom
from .ordering import OrderingModel
from .ordering import to_dict as ordering_to_dict

if TYPE_CHECKING:
    from ..analysis._diff import PlanDiff
    from ..analysis._lint import Findings
    from ..analysis._occupancy import Occupancy

__all__ = [
    "Region",
    "AliasGroup",
    "LayoutPlan",
    "CapacityCheck",
    "SCHEMA",
    "SCHEMA_VERSION",
    "LIFETIME_SCHEMA_VERSION",
    "STRUCT_SOURCE",
    "CAPTURE_SOURCE",
    "SELF_SIZED_SOURCES",
]

SCHEMA = "smemviz.layout-plan"
SCHEMA_VERSION = 1
# version 2 adds steps, Region.live and the solver's bound; a plan without
# lifetimes is still written as version 1, so older readers keep reading it
LIFETIME_SCHEMA_VERSION = 2
READABLE_VERSIONS = (SCHEMA_VERSION, LIFETIME_SCHEMA_VERSION)  # what LayoutPlan.from_dict reads

RegionKind = Literal["data", "barrier", "tmem_ptr"]
MemoryKind = Literal["smem", "tmem"]
_KINDS = ("data", "barrier", "tmem_ptr")
# the source of a plan read from a @cute.struct: its barriers sit inside the data
STRUCT_SOURCE = "cute.struct"
# the source of a plan captured from a compiled kernel: the compiler placed every
# allocation, barriers among them, and its total is the launch's dynamic SMEM
CAPTURE_SOURCE = "cute.capture"
# sources whose data total is the whole layout (no barrier block appended after it)
SELF_SIZED_SOURCES = (STRUCT_SOURCE, CAPTURE_SOURCE)


@dataclass(frozen=True)
class Region:
    """One placed region. Units are bytes for SMEM and columns for TMEM."""

    name: str
    kind: RegionKind
    offset: int
    size: int
    alignment: int = 1
    padding_before: int = 0
    group: int | None = None  # alias group index, None when standalone
    phase: int | None = None  # phase index within the group
    dtype: str | None = None
    count: int | None = None
    index: int = 0  # declaration order
    swizzle: str | None = None  # "32B" / "64B" / "128B" when the buffer is swizzled
    stages: int | None = None  # pipeline stages the buffer holds, when known
    tma: bool | None = None  # True when the buffer is a TMA destination
    shape: tuple[int, ...] | None = None  # element shape, stages first, when declared with one
    live: tuple[int, ...] | None = None  # step indices it is live in; None: every step
    layout: str | None = None  # the tile's CuTe layout, "shape:stride" in elements (a swizzle as "S<B,M,S> o ...")
    source: str | None = None  # where the kernel declares it, "file.py:line", when read from a kernel

    @property
    def end(self) -> int:
        return self.offset + self.size

    def live_in(self, step: int) -> bool:
        return self.live is None or step in self.live

    @property
    def aliased(self) -> bool:
        return self.group is not None

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        for key in _OPTIONAL_REGION_KEYS:  # written only when set, so older readers see no change
            if d[key] is None:
                del d[key]
        d["end"] = self.end
        if self.live is not None:
            d["live"] = list(self.live)
        if self.shape is not None:
            d["shape"] = list(self.shape)
        return d


_OPTIONAL_REGION_KEYS = ("swizzle", "stages", "tma", "live", "shape", "layout", "source")


@dataclass(frozen=True)
class AliasGroup:
    """One alias group: phases that reuse ``[offset, offset + size)`` in turn."""

    index: int
    offset: int
    size: int
    alignment: int
    phase_sizes: tuple[int, ...]

    @property
    def end(self) -> int:
        return self.offset + self.size

    @property
    def saved(self) -> int:
        """Units saved against laying every phase out side by side."""
        return sum(self.phase_sizes) - self.size

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["phase_sizes"] = list(self.phase_sizes)
        d["end"] = self.end
        return d


@dataclass(frozen=True)
class CapacityCheck:
    """How a layout compares with one architecture's capacity (``arch`` is
    ``None`` when no architecture was given or detected: then nothing is judged)."""

    arch: str | None
    memory: MemoryKind
    used: int
    limit: int
    unit: str
    contributors: tuple[tuple[str, int, int], ...]  # largest top-level blocks: (label, size, alignment)
    breakdown: str = ""  # how ``used`` adds up, e.g. "data 230400 B + barriers 112 B"

    @property
    def judged(self) -> bool:
        return self.arch is not None

    @property
    def fits(self) -> bool:
        return not self.judged or self.used <= self.limit

    @property
    def overshoot(self) -> int:
        return max(0, self.used - self.limit) if self.judged else 0

    @property
    def headroom(self) -> int:
        return max(0, self.limit - self.used)

    @property
    def percent(self) -> float:
        if not self.judged:
            return 0.0
        return 100.0 * self.used / self.limit if self.limit else float("inf")

    def message(self) -> str:
        """The one wording of a capacity verdict, used by every error, report and view."""
        what = "SMEM" if self.memory == "smem" else "TMEM"
        unit = "B" if self.memory == "smem" else "columns"
        head = f"{what} layout needs {self.used:,} {unit}"
        if self.breakdown:
            head += f" ({self.breakdown})"
        if not self.judged:
            return f"{head}; no arch given, so no capacity checked (pass arch=, e.g. 'sm_90a')"
        if self.limit == 0:
            return f"{self.arch} has no {what}, but the layout needs {self.used:,} {unit}"
        limit = (
            f"the {self.arch} per-block limit of {self.limit:,} B"
            if self.memory == "smem"
            else f"the {self.limit:,} columns of a CTA on {self.arch}"
        )
        if self.fits:
            return f"{head}: fits {limit} ({self.percent:.1f}%)"
        top = ", ".join(
            f"{shown(label)} ({size:,} {unit}" + (f", align {al})" if al > 1 else ")")
            for label, size, al in self.contributors
        )
        return f"{head}, which exceeds {limit} by {self.overshoot:,} {unit}; largest: {top}"


@dataclass(frozen=True)
class LayoutPlan:
    """An immutable computed layout of SMEM (bytes) or TMEM (columns)."""

    memory: MemoryKind
    regions: tuple[Region, ...]
    groups: tuple[AliasGroup, ...] = ()
    data_total: int = 0  # the allocator's ``total``: data only, no barriers
    barrier_bytes: int = 0
    base_alignment: int = 1
    arch: str | None = None
    source: str = "smemviz"  # "smemviz", "cutlass" (CUTLASS's allocator) or "cute.struct"
    steps: tuple[str, ...] = ()  # program steps, when the layout was solved from lifetimes
    lower_bound: int | None = None  # no layout of these lifetimes has a smaller data total
    optimal: bool | None = None  # True only when the solver proved it; None without lifetimes
    solver: str | None = None  # what found the layout ("exact", "greedy:size", ...)
    accesses: tuple[SmemAccess, ...] = ()  # how the kernel's warps touch its regions (bank analysis)
    ordering: OrderingModel | None = None  # the kernel's sync objects and per-role programs (ordering checks)
    tma_atoms: tuple[TmaAtom, ...] = ()  # the kernel's TMA descriptors' parameters, as captured (tma-descriptor rule)

    def __post_init__(self) -> None:
        if self.memory not in ("smem", "tmem"):
            raise ValueError(f"memory must be 'smem' or 'tmem', got {self.memory!r}")
        for r in self.regions:
            if r.kind not in _KINDS:
                raise ValueError(f"region {r.name!r}: unknown kind {r.kind!r}")
            if r.offset < 0 or r.size < 0:
                raise ValueError(f"region {r.name!r}: negative offset or size ({r.offset}, {r.size})")
            if r.live is not None and any(not 0 <= t < len(self.steps) for t in r.live):
                raise ValueError(f"region {r.name!r}: live steps {r.live} outside the plan's {len(self.steps)} steps")
        if self.accesses:
            self._check_accesses()

    def _check_accesses(self) -> None:
        """Every access names a data region of this SMEM plan."""
        if self.memory != "smem":
            raise ValueError(f"a TMEM plan has no bank accesses; got {len(self.accesses)}")
        kinds = {r.name: r.kind for r in self.regions}
        for acc in self.accesses:
            if not isinstance(acc, SmemAccess):
                raise TypeError(f"LayoutPlan.accesses holds SmemAccess records, not {type(acc).__name__}")
            if acc.region not in kinds:
                raise ValueError(
                    f"access {acc.short_instruction} names region {acc.region!r}, which the plan does not have"
                )
            if kinds[acc.region] != "data":
                raise ValueError(
                    f"access {acc.short_instruction} of {acc.region!r}: a {kinds[acc.region]} region holds no tile"
                )

    def accesses_of(self, region: str) -> tuple[SmemAccess, ...]:
        """The accesses declared on ``region``, in declaration order."""
        return tuple(a for a in self.accesses if a.region == region)

    # -- lifetimes -------------------------------------------------------------

    @property
    def gap(self) -> int | None:
        """Units the data total may be above the optimum (0 when proven optimal)."""
        if self.lower_bound is None:
            return None
        return 0 if self.optimal else max(0, self.data_total - self.lower_bound)

    def step_index(self, step: int | str) -> int:
        """The index of ``step`` (a name or an index) among :attr:`steps`."""
        if isinstance(step, str):
            if step in self.steps:
                return self.steps.index(step)
            raise KeyError(f"no step named {step!r}; steps: {', '.join(map(repr, self.steps))}")
        if not isinstance(step, int) or isinstance(step, bool):
            raise TypeError(f"a step is a name or an index, got {type(step).__name__} {step!r}")
        if 0 <= step < len(self.steps):
            return step
        if not self.steps:
            raise KeyError(f"no step {step}: this plan was not solved from lifetimes, so it has no steps")
        raise KeyError(f"no step {step}; the plan has {len(self.steps)} steps (0..{len(self.steps) - 1})")

    def live_at(self, step: int | str) -> tuple[Region, ...]:
        """The regions live at ``step`` (name or index), in address order."""
        k = self.step_index(step)
        return tuple(r for r in self.regions if r.live_in(k))

    def at_step(self, step: int | str) -> LayoutPlan:
        """The plan of what is live at ``step``: the 1-D byte map of that moment."""
        k = self.step_index(step)
        live = self.live_at(k)
        names = {r.name for r in live}
        return replace(self, regions=live, groups=(), accesses=tuple(a for a in self.accesses if a.region in names))

    @cached_property
    def step_bounds(self) -> tuple[int, ...]:
        """The least data total each step alone allows (its live data regions
        packed with their alignments); the largest is the static lower bound,
        unless :attr:`pairwise_bound` is higher."""
        out = []
        for k in range(len(self.steps)):
            live = [r for r in self.data_regions if r.live_in(k) and r.size]
            out.append(_packed_bound(tuple(sorted((r.size, r.alignment) for r in live))))
        return tuple(out)

    @cached_property
    def pairwise_bound(self) -> tuple[int, tuple[str, ...]]:
        """Regions that each meet all the others at some step, but not all at one
        step (a lifetime with a gap makes these), and their least total: they
        stack all the same, so the data total cannot go below it. (0, ()) when
        no such set needs more than the most crowded step."""
        from ..solver import stacked_beyond_steps

        regions = [r for r in self.data_regions if r.size]
        everywhere = range(len(self.steps))
        lives = [r.live if r.live is not None else everywhere for r in regions]
        best, names = max(self.step_bounds, default=0), tuple[str, ...]()
        for members in stacked_beyond_steps([r.size for r in regions], lives):
            bound = _packed_bound(tuple(sorted((regions[k].size, regions[k].alignment) for k in members)))
            if bound > best:
                best, names = bound, tuple(regions[k].name for k in members)
        return (best, names) if names else (0, ())

    @cached_property
    def live_profile(self) -> tuple[int, ...]:
        """Data units live at each step (barriers excluded)."""
        return tuple(sum(r.size for r in self.data_regions if r.live_in(k)) for k in range(len(self.steps)))

    # -- sizes ---------------------------------------------------------------

    @property
    def unit(self) -> str:
        return "B" if self.memory == "smem" else "cols"

    @property
    def unified_bytes(self) -> int:
        """SMEM: what the one unified array holds (data rounded to 8, then barriers).
        TMEM: the columns used."""
        if self.memory == "tmem" or self.source in SELF_SIZED_SOURCES:
            return self.data_total  # a struct's size (a captured kernel's total) already holds its barriers
        return align_up(self.data_total, hardware.MBARRIER_ALIGNMENT) + self.barrier_bytes

    @property
    def total(self) -> int:
        """Everything the layout needs: unified bytes for SMEM, columns for TMEM."""
        return self.unified_bytes

    @property
    def tmem_alloc_columns(self) -> int:
        """Columns to pass to ``tcgen05.alloc`` (power of two, >= 32); TMEM plans only."""
        if self.memory != "tmem":
            return 0
        return hardware.tmem_alloc_columns(self.data_total, self.arch)

    @cached_property
    def data_regions(self) -> tuple[Region, ...]:
        return tuple(r for r in self.regions if r.kind != "barrier")

    @cached_property
    def barrier_regions(self) -> tuple[Region, ...]:
        return tuple(r for r in self.regions if r.kind == "barrier")

    @cached_property
    def alias_savings(self) -> int:
        """Units saved by aliasing: every phase side by side, minus the shared region."""
        return sum(g.saved for g in self.groups)

    @cached_property
    def padding(self) -> int:
        """Units inside the layout covered by no region in any phase."""
        covered = 0
        cur_start = cur_end = -1
        for start, end in sorted((r.offset, r.end) for r in self.regions if r.size):
            if start > cur_end:
                covered += cur_end - cur_start if cur_end > cur_start else 0
                cur_start, cur_end = start, end
            else:
                cur_end = max(cur_end, end)
        covered += cur_end - cur_start if cur_end > cur_start else 0
        return max(0, self.unified_bytes - covered)

    @cached_property
    def peak_live(self) -> int:
        """Lower bound on the data total: every standalone region plus, for each
        alias group, its largest phase, with no padding at all (with lifetimes:
        the most units live at one step)."""
        if self.steps:
            return max(self.live_profile, default=0)
        standalone = sum(r.size for r in self.data_regions if r.group is None)
        per_phase: dict[tuple[int, int], int] = {}
        for r in self.data_regions:
            if r.group is not None:
                key = (r.group, r.phase or 0)
                per_phase[key] = per_phase.get(key, 0) + r.size
        largest: dict[int, int] = {}
        for (g, _), size in per_phase.items():
            largest[g] = max(largest.get(g, 0), size)
        return standalone + sum(largest.values())

    # -- lookup --------------------------------------------------------------

    def region(self, name: str) -> Region:
        """The first region called ``name`` (``KeyError`` naming the known ones)."""
        for r in self.regions:
            if r.name == name:
                return r
        known = ", ".join(repr(r.name) for r in self.regions[:20])
        raise KeyError(f"no region named {name!r}; regions: {known}")

    @cached_property
    def _by_phase(self) -> dict[tuple[int, int], tuple[Region, ...]]:
        members: dict[tuple[int, int], list[Region]] = {}
        for r in self.regions:
            if r.group is not None:
                members.setdefault((r.group, r.phase or 0), []).append(r)
        return {k: tuple(v) for k, v in members.items()}

    def phase_regions(self, group: int, phase: int) -> tuple[Region, ...]:
        """The regions of one phase of one alias group, in address order."""
        return self._by_phase.get((group, phase), ())

    @cached_property
    def _blocks(self) -> tuple[tuple[str, int, int], ...]:
        out = [(r.name, r.offset, r.size) for r in self.regions if r.group is None]
        for g in self.groups:
            out.append((self._group_label(g.index), g.offset, g.size))
        return tuple(sorted(out, key=lambda b: b[1]))

    def blocks(self) -> list[tuple[str, int, int]]:
        """Deprecated (nothing reads it): the top-level blocks as (label, offset, size)."""
        _deprecated("blocks()", "plan.regions and plan.groups")
        return list(self._blocks)

    @cached_property
    def _largest_blocks(self) -> tuple[tuple[str, int, int], ...]:
        aligned = [(r.name, r.size, r.alignment) for r in self.regions if r.group is None]
        aligned += [(self._group_label(g.index), g.size, g.alignment) for g in self.groups]
        return tuple(sorted(aligned, key=lambda b: -b[1])[:3])

    def group_label(self, index: int) -> str:
        """Deprecated (nothing reads it outside the plan's capacity message)."""
        _deprecated("group_label(index)", "plan.phase_regions(group, phase)")
        return self._group_label(index)

    def _group_label(self, index: int) -> str:
        """``alias group 1 [a + b | c]``: a group by its phases' members, for capacity messages."""
        phases = []
        for p in range(len(self.groups[index].phase_sizes)):
            phases.append(" + ".join(r.name for r in self.phase_regions(index, p)))
        return f"alias group {index + 1} [" + " | ".join(phases) + "]"

    # -- capacity ------------------------------------------------------------

    def resolved_arch(self, arch: str | int | hardware.Arch | None = None) -> hardware.Arch | None:
        """``arch``, else the plan's own, else :func:`smemviz.device.default_arch`
        (``$CUTE_DSL_ARCH`` or the GPU present; ``None`` for SMEM with neither)."""
        if arch is not None:
            return hardware.get_arch(arch)
        if self.arch is not None:
            return hardware.get_arch(self.arch)
        return device.default_arch(self.memory)

    def capacity(self, arch: str | int | hardware.Arch | None = None) -> CapacityCheck:
        """Compare with ``arch`` (default: see :meth:`resolved_arch`); with no arch
        at all the check says so instead of judging."""
        a = self.resolved_arch(arch)
        if a is None:
            return CapacityCheck(None, self.memory, self.unified_bytes, 0, self.unit, self._largest_blocks)
        if self.memory == "smem":
            used, limit = self.unified_bytes, a.smem_per_block
        else:
            used, limit = self.data_total, a.tmem_columns
        return CapacityCheck(a.name, self.memory, used, limit, self.unit, self._largest_blocks)

    def fits(self, arch: str | int | hardware.Arch | None = None) -> bool:
        return self.capacity(arch).fits

    def check(self, arch: str | int | hardware.Arch | None = None) -> CapacityCheck:
        """Raise :class:`CapacityError` when the layout does not fit ``arch``
        (``ValueError`` when there is no arch to check against)."""
        result = self.capacity(arch)
        if not result.judged:
            raise ValueError(f"no arch to check the {self.memory.upper()} layout against; pass arch=, e.g. 'sm_90a'")
        if not result.fits:
            raise CapacityError(result.message())
        return result

    # -- deprecated: analyses are functions of a plan (smemviz.analysis) ----------
    # Each shim warns and imports the function it names lazily; the import tests list
    # them as the plan's only arrows to analysis, to be removed with the shims.

    def occupancy(
        self, arch: str | int | hardware.Arch | None = None, *, threads: int | None = None, registers: int | None = None
    ) -> Occupancy | None:
        """Deprecated: ``smemviz.analysis.occupancy(plan, arch)``."""
        _deprecated("occupancy(arch)", "smemviz.analysis.occupancy(plan, arch)")
        from ..analysis._occupancy import plan_occupancy

        return plan_occupancy(self, arch, threads=threads, registers=registers)

    def lint(self, arch: str | int | hardware.Arch | None = None, **options: Any) -> Findings:
        """Deprecated: ``smemviz.analysis.lint(plan, arch)``."""
        _deprecated("lint(arch)", "smemviz.analysis.lint(plan, arch)")
        from ..analysis._lint import lint

        return lint(self, arch, **options)

    def diff(self, other: LayoutPlan) -> PlanDiff:
        """Deprecated: ``smemviz.analysis.diff(plan, other)``."""
        _deprecated("diff(other)", "smemviz.analysis.diff(plan, other)")
        from ..analysis._diff import diff_plans

        return diff_plans(self, other)

    def report(self) -> str:
        """Deprecated: ``smemviz.analysis.text_report(plan)``."""
        _deprecated("report()", "smemviz.analysis.text_report(plan)")
        from ..analysis._report import text_report

        return text_report(self)

    # -- serialisation -------------------------------------------------------

    def to_dict(self) -> dict[str, Any]:
        return {
            "schema": SCHEMA,
            "version": LIFETIME_SCHEMA_VERSION if self.steps else SCHEMA_VERSION,
            "memory": self.memory,
            "unit": self.unit,
            "arch": self.arch,
            "source": self.source,
            "data_total": self.data_total,
            "barrier_bytes": self.barrier_bytes,
            "base_alignment": self.base_alignment,
            "summary": {
                "unified": self.unified_bytes,
                "alias_savings": self.alias_savings,
                "padding": self.padding,
                "peak_live": self.peak_live,
                "tmem_alloc_columns": self.tmem_alloc_columns,
            },
            "regions": [r.to_dict() for r in self.regions],
            "groups": [g.to_dict() for g in self.groups],
            **self._lifetime_dict(),
            # written only when there are some, so older readers see no change
            **({"accesses": [a.to_dict() for a in self.accesses]} if self.accesses else {}),
            **({"ordering": ordering_to_dict(self.ordering)} if self.ordering is not None else {}),
            **({"tma_atoms": [t.to_dict() for t in self.tma_atoms]} if self.tma_atoms else {}),
        }

    def _lifetime_dict(self) -> dict[str, Any]:
        if not self.steps:
            return {}
        return {
            "steps": list(self.steps),
            "lower_bound": self.lower_bound,
            "optimal": self.optimal,
            "gap": self.gap,
            "solver": self.solver,
        }

    def to_json(self, indent: int | None = 2) -> str:
        return json.dumps(self.to_dict(), indent=indent)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> LayoutPlan:
        """Deprecated: ``smemviz.layout.plan_from_dict(data)``, the one JSON reader."""
        _deprecated("from_dict(data)", "smemviz.layout.plan_from_dict(data)")
        from ._plan_json import plan_from_dict

        return plan_from_dict(data)

    @classmethod
    def from_json(cls, text: str) -> LayoutPlan:
        """Deprecated: ``smemviz.layout.plan_from_json(text)``."""
        _deprecated("from_json(text)", "smemviz.layout.plan_from_json(text)")
        from ._plan_json import plan_from_json

        return plan_from_json(text)

    # -- display -------------------------------------------------------------

    def _repr_html_(self) -> str:
        """Jupyter's display protocol lives on the object: the one listed arrow to the reports."""
        from ..analysis._report import html_report

        return html_report(self)

    def __repr__(self) -> str:
        return (
            f"LayoutPlan({self.memory}, {len(self.regions)} regions, "
            f"total={self.unified_bytes} {self.unit}, groups={len(self.groups)})"
        )


@lru_cache(maxsize=4096)
def _packed_bound(buffers: tuple[tuple[int, int], ...]) -> int:
    """:func:`~smemviz.solver.packed_bound` of (size, alignment) pairs, kept:
    a layout rebuilt from a control (the explorer) mostly keeps the buffers
    live at each step, and the exact packing is the costly part of its map."""
    from ..solver import packed_bound

    return packed_bound([size for size, _ in buffers], [align for _, align in buffers])


def _deprecated(old: str, new: str) -> None:
    warnings.warn(
        f"LayoutPlan.{old} is deprecated and will be removed in the next release; use {new}",
        DeprecationWarning,
        stacklevel=3,
    )
