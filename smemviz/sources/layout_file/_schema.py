"""The schema of a layout file: its keys, the entries they make, and the
:class:`LayoutSpec` that turns them into allocators and plans."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from ... import hardware
from ...layout._access import SmemAccess
from ...layout._allocation import SmemAllocation, TmemAllocation
from ...layout._allocator import SmemAllocator, TmemAllocator
from ...layout._pipelines import PipelineConfig, PipelineGroup
from ...layout._plan import LayoutPlan
from ...layout._tma_atom import TmaAtom
from .._inputs import LayoutPair

__all__ = [
    "SCHEMA_VERSION",
    "SmemEntry",
    "TmemEntry",
    "PipelineEntry",
    "PipelineGroupEntry",
    "LayoutSpec",
    "TOP_KEYS",
    "SMEM_KEYS",
    "TMEM_KEYS",
    "PIPELINE_KEYS",
    "GROUP_KEYS",
    "ALIAS_KEYS",
    "MAX_DEPTH",
]

SCHEMA_VERSION = 1

# the keys each table may hold
TOP_KEYS = (
    "version",
    "name",
    "arch",
    "steps",
    "tmem_ptr",
    "smem",
    "pipeline",
    "pipeline_group",
    "smem_alias",
    "tmem",
    "tmem_alias",
)
SMEM_KEYS = (
    "name",
    "size",
    "dtype",
    "count",
    "align",
    "live",
    "swizzle",
    "stages",
    "tma",
    "shape",
    "access",
    "tma_box",
)
TMEM_KEYS = ("name", "columns", "live")
PIPELINE_KEYS = ("name", "stages")
GROUP_KEYS = ("name", "stages", "members", "barriers_per_stage")
ALIAS_KEYS = ("phases",)

# a layout file's dtype -> the TMA descriptor's data type (check_tma_descriptor's names)
TMA_DATA_TYPES = {
    "f64": "float64",
    "f32": "float32",
    "tf32": "tfloat32",
    "f16": "float16",
    "bf16": "bfloat16",
    "f8e4m3": "uint8",
    "f8e5m2": "uint8",
    "f8e8m0": "uint8",
    "i64": "int64",
    "i32": "int32",
    "i16": "uint16",
    "i8": "uint8",
    "u64": "uint64",
    "u32": "uint32",
    "u16": "uint16",
    "u8": "uint8",
}

# The deepest the schema nests is 5 (document, [[smem_alias]], its table,
# phases, a phase; or [[smem]], its table, access, its table, warps); anything far
# deeper is refused before it is walked.
MAX_DEPTH = 32


# -- the declarations ------------------------------------------------------------


@dataclass(frozen=True)
class SmemEntry:
    """One ``[[smem]]`` entry."""

    name: str
    size: int = 0
    align: int = hardware.TMA_ALIGNMENT
    dtype: str | None = None
    count: int = 1
    live: tuple[str | int, ...] | None = None  # steps it is live in; None: every step
    swizzle: str | None = None  # "32B" / "64B" / "128B" (lint)
    stages: int | None = None  # pipeline stages the buffer holds (lint, stage marks)
    tma: bool | None = None  # a TMA destination (lint)
    shape: tuple[int, ...] | None = None  # element shape, stages first (with dtype)
    access: tuple[SmemAccess, ...] | None = None  # how the kernel's warps touch it (bank analysis)
    tma_box: tuple[int, ...] | None = None  # the box its TMA copies move, elements, innermost first (lint)

    def tma_atom(self) -> TmaAtom | None:
        """The TMA atom the entry declares with ``tma_box``: the box, the entry's dtype and swizzle; the
        global tensor is not declared (its extents and strides stay unknown)."""
        if self.tma_box is None:
            return None
        rank = len(self.tma_box)
        return TmaAtom(
            name=self.name,
            site="layout file",
            direction="load",
            data_type=TMA_DATA_TYPES.get(self.dtype or ""),
            global_dims=(None,) * rank,
            global_strides=(None,) * max(rank - 1, 0),
            box_dims=self.tma_box,
            element_strides=(1,) * rank,
            swizzle=self.swizzle or "none",
            region=self.name,
            unread=() if self.dtype in TMA_DATA_TYPES else (f"data type (dtype {self.dtype!r} has no TMA data type)",),
            declared=True,
        )

    def allocation(self) -> SmemAllocation:
        return SmemAllocation(
            self.name,
            self.size,
            self.align,
            self.dtype,
            self.count,
            swizzle=self.swizzle,
            stages=self.stages,
            tma=self.tma,
            shape=self.shape,
            access=self.access,
        )


@dataclass(frozen=True)
class TmemEntry:
    """One ``[[tmem]]`` entry."""

    name: str
    columns: int
    live: tuple[str | int, ...] | None = None

    def allocation(self) -> TmemAllocation:
        return TmemAllocation(self.name, self.columns)


@dataclass(frozen=True)
class PipelineEntry:
    """One ``[[pipeline]]``: ``stages`` x 16 B of mbarriers."""

    name: str
    stages: int


@dataclass(frozen=True)
class PipelineGroupEntry:
    """One ``[[pipeline_group]]``: ``barriers_per_stage`` x ``stages`` x 16 B."""

    name: str
    stages: int
    barriers_per_stage: int


@dataclass(frozen=True)
class LayoutSpec:
    """A layout file's declarations; builds fresh allocators and plans on demand."""

    source: str
    name: str | None = None
    arch: str | None = None
    smem: tuple[SmemEntry, ...] = ()
    pipelines: tuple[PipelineEntry, ...] = ()
    pipeline_groups: tuple[PipelineGroupEntry, ...] = ()
    smem_aliases: tuple[tuple[tuple[str, ...], ...], ...] = ()
    tmem_ptr: str | None = None
    tmem: tuple[TmemEntry, ...] = ()
    tmem_aliases: tuple[tuple[tuple[str, ...], ...], ...] = ()
    steps: tuple[str, ...] | None = None  # program steps that entries' live= name

    @property
    def has_smem(self) -> bool:
        return bool(self.smem or self.pipelines or self.pipeline_groups)

    @property
    def has_tmem(self) -> bool:
        return bool(self.tmem)

    def smem_allocator(self, arch: str | int | hardware.Arch | None = None) -> SmemAllocator:
        """A computed :class:`SmemAllocator`; with ``arch`` it refuses a layout
        that does not fit (``CapacityError``), like ``SmemAllocator(arch)``."""
        allocator = self._declare_smem(SmemAllocator(arch, steps=self.steps))
        allocator.compute_layout()
        return allocator

    def tmem_allocator(self, arch: str | int | hardware.Arch | None = None) -> TmemAllocator:
        """A computed :class:`TmemAllocator` (``CapacityError`` beyond 512 columns)."""
        allocator = self._declare_tmem(TmemAllocator(arch, steps=self.steps))
        allocator.compute_layout()
        return allocator

    def plans(self, arch: str | int | hardware.Arch | None = None) -> tuple[LayoutPlan | None, LayoutPlan | None]:
        """``(smem_plan, tmem_plan)``, ``None`` for a memory the file leaves empty.

        Plans carry ``arch`` (default: the file's), so reports and checks use it;
        an SMEM layout over capacity still gets a plan, to show by how much.
        """
        name = hardware.get_arch(arch).name if arch is not None else self.arch
        atoms = tuple(a for a in (e.tma_atom() for e in self.smem) if a is not None)
        smem = replace(self.smem_allocator().plan, arch=name, tma_atoms=atoms) if self.has_smem else None
        tmem = replace(self.tmem_allocator().plan, arch=name) if self.has_tmem else None
        return smem, tmem

    def __smemviz_layout__(self, arch: str | None = None) -> LayoutPair:
        """The file's layouts, titled with its name (smemviz's input rule)."""
        smem, tmem = self.plans(arch)
        return LayoutPair(smem, tmem, self.name, arch or self.arch)

    def _declare_smem(self, allocator: SmemAllocator) -> SmemAllocator:
        allocs = {e.name: e.allocation() for e in self.smem}
        for e in self.smem:
            allocator.add(allocs[e.name], live=_live_arg(e.live))
        if self.tmem_ptr is not None:
            allocator.add_tmem_ptr(allocs[self.tmem_ptr])
        for p in self.pipelines:
            allocator.add_pipeline(p.name, p.stages)
        for g in self.pipeline_groups:
            allocator.add_pipeline_group(PipelineGroup(g.name, PipelineConfig(g.stages), g.barriers_per_stage))
        for phases in self.smem_aliases:
            allocator.add_alias_group([[allocs[n] for n in phase] for phase in phases])
        return allocator

    def _declare_tmem(self, allocator: TmemAllocator) -> TmemAllocator:
        allocs = {e.name: e.allocation() for e in self.tmem}
        for e in self.tmem:
            allocator.add(allocs[e.name], live=_live_arg(e.live))
        for phases in self.tmem_aliases:
            allocator.add_alias_group([[allocs[n] for n in phase] for phase in phases])
        return allocator


def _live_arg(live: tuple[str | int, ...] | None) -> Any:
    """An entry's ``live`` as the allocators take it."""
    return None if live is None else list(live)
