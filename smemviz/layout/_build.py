"""Assemble a :class:`~smemviz.LayoutPlan` from placed allocations.

The allocators, CUTLASS's allocators read back, and the kernel bridge's probes
all end here: one place decides how regions, padding, alias groups and barrier
storage are written down, so every producer's plan reads the same.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, replace
from typing import Any

from .. import hardware
from .._units import align_up
from ._plan import AliasGroup, LayoutPlan, MemoryKind, Region

__all__ = ["build_plan", "Lifetimes", "covered_bytes", "byte_split"]


def build_plan(  # noqa: PLR0913 - the keyword options are the plan's own fields
    memory: MemoryKind,
    standalone: Iterable[Any],
    groups: Iterable[Iterable[Iterable[Any]]],
    data_total: int,
    *,
    size_of,
    align_of,
    offset_of=None,
    barriers: Iterable[tuple[str, int]] = (),
    tmem_ptr: Any = None,
    arch: str | None = None,
    source: str = "smemviz",
    lifetimes: Lifetimes | None = None,
) -> LayoutPlan:
    """Assemble a plan from allocations whose ``offset`` is already set
    (or that ``offset_of`` places).

    Works for smemviz's allocations and for CUTLASS's alike (duck-typed).
    ``lifetimes`` (a layout solved from live steps) adds the steps, each
    region's live steps and the solver's bound.
    """
    from .._dtypes import dtype_name

    off = offset_of or _offset_attr

    regions: list[Region] = []
    group_infos: list[AliasGroup] = []
    standalone = list(standalone)
    groups = [[list(p) for p in g] for g in groups]

    # padding in front of each top-level block (standalone region or whole group), in address order
    tops: list[tuple[int, int, int, int]] = []  # (offset, size, kind 0=standalone 1=group, index)
    for i, a in enumerate(standalone):
        tops.append((off(a), size_of(a), 0, i))
    group_offsets = []
    for gi, phases in enumerate(groups):
        g_offset = min(off(a) for p in phases for a in p)
        group_offsets.append(g_offset)
        g_size = max(max(off(a) + size_of(a) for a in p) for p in phases) - g_offset
        tops.append((g_offset, g_size, 1, gi))
    top_padding: dict[tuple[int, int], int] = {}
    cursor = 0
    for offset, size, kind, i in sorted(tops):
        top_padding[(kind, i)] = offset - cursor
        cursor = max(cursor, offset + size)

    base_alignment = 1
    index = 0

    def make(a, padding: int, group=None, phase=None) -> Region:
        dtype = getattr(a, "dtype", None)
        return Region(
            name=a.name,
            kind="tmem_ptr" if (tmem_ptr is not None and a is tmem_ptr) else "data",
            offset=off(a),
            size=size_of(a),
            alignment=align_of(a),
            padding_before=padding,
            group=group,
            phase=phase,
            dtype=dtype_name(dtype),
            count=getattr(a, "count", None) if dtype is not None else None,
            index=index,
            swizzle=getattr(a, "swizzle", None),
            stages=getattr(a, "stages", None),
            tma=getattr(a, "tma", None),
            shape=getattr(a, "shape", None),
            live=lifetimes.live.get(id(a)) if lifetimes is not None else None,
        )

    for i, a in enumerate(standalone):
        base_alignment = max(base_alignment, align_of(a))
        regions.append(make(a, top_padding[(0, i)]))
        index += 1

    for gi, phases in enumerate(groups):
        g_align = max(align_of(a) for p in phases for a in p)
        base_alignment = max(base_alignment, g_align)
        g_offset = group_offsets[gi]
        phase_sizes = []
        for pi, phase in enumerate(phases):
            # the first member of each phase also sees the gap in front of the group
            cursor = g_offset - top_padding[(1, gi)]
            for a in phase:
                regions.append(make(a, off(a) - cursor, gi, pi))
                cursor = max(cursor, off(a) + size_of(a))
                index += 1
            phase_sizes.append(cursor - g_offset)
        group_infos.append(AliasGroup(gi, g_offset, max(phase_sizes), g_align, tuple(phase_sizes)))

    barrier_total = 0
    if memory == "smem":
        if base_alignment == 1:
            base_alignment = hardware.TMA_ALIGNMENT
        start = align_up(data_total, hardware.MBARRIER_ALIGNMENT)
        cursor = start
        prev_end = data_total
        for name, nbytes in barriers:
            off = align_up(cursor, hardware.MBARRIER_ALIGNMENT)
            regions.append(
                Region(
                    name=name,
                    kind="barrier",
                    offset=off,
                    size=nbytes,
                    alignment=hardware.MBARRIER_ALIGNMENT,
                    padding_before=off - prev_end,
                    dtype="i64",
                    count=nbytes // hardware.MBARRIER_BYTES,
                    index=index,
                )
            )
            index += 1
            cursor = prev_end = off + nbytes
        barrier_total = cursor - start

    accesses = tuple(acc for a in [*standalone, *(a for g in groups for p in g for a in p)] for acc in _accesses(a))
    regions.sort(key=lambda r: (r.offset, r.index))
    if lifetimes is not None:
        regions = _padding_by_step(regions)
    return LayoutPlan(
        memory=memory,
        regions=tuple(regions),
        groups=tuple(group_infos),
        data_total=data_total,
        barrier_bytes=barrier_total,
        base_alignment=base_alignment,
        arch=arch,
        source=source,
        accesses=accesses,
        **(lifetimes.plan_fields() if lifetimes is not None else {}),
    )


def covered_bytes(regions: Iterable[Region]) -> int:
    """Bytes (units) that at least one of ``regions`` covers: regions that share
    bytes (alias phases, lifetimes that never meet) count them once."""
    covered = 0
    cur_start = cur_end = 0
    for start, end in sorted((r.offset, r.end) for r in regions if r.size):
        if start > cur_end:
            covered += cur_end - cur_start
            cur_start, cur_end = start, end
        else:
            cur_end = max(cur_end, end)
    return covered + cur_end - cur_start


def byte_split(plan: LayoutPlan) -> tuple[int, int, int]:
    """``(data, barriers, padding)`` of a plan, which add up to ``plan.total``
    whatever made the plan (allocator, CUTLASS, ``@cute.struct``, capture, a
    layout file): barriers are the bytes the mbarrier regions cover, padding the
    bytes no region covers, data the rest (the bytes data regions hold).

    ``plan.data_total`` is the allocator's total instead (the padding between
    data regions included), which CUTLASS's allocators report likewise."""
    barriers = covered_bytes(plan.barrier_regions)
    padding = plan.padding
    return plan.total - barriers - padding, barriers, padding


def _accesses(alloc: Any) -> tuple[Any, ...]:
    """An allocation's declared accesses, checked again (allocations are mutable); CUTLASS's have none."""
    if getattr(alloc, "access", None) is None:
        return ()
    from ._allocation import declared_accesses

    return declared_accesses(alloc)


def _offset_attr(alloc: Any) -> int:
    return alloc.offset


def _padding_by_step(regions: list[Region]) -> list[Region]:
    """With lifetimes, regions overlap in address: the padding before a region is
    the gap down to the highest end below it among the regions live with it."""
    lives = [None if r.live is None else frozenset(r.live) for r in regions]
    out = []
    for r, live in zip(regions, lives):
        below = [
            q.end
            for q, other in zip(regions, lives)
            if q is not r and q.end <= r.offset and (live is None or other is None or not live.isdisjoint(other))
        ]
        out.append(replace(r, padding_before=r.offset - max(below, default=0)))
    return out


@dataclass(frozen=True)
class Lifetimes:
    """What a layout solved from lifetimes adds to its plan."""

    steps: tuple[str, ...]
    live: dict[int, tuple[int, ...]]  # id(allocation) -> its live steps (absent: every step)
    lower_bound: int
    optimal: bool
    solver: str

    def plan_fields(self) -> dict[str, Any]:
        return {"steps": self.steps, "lower_bound": self.lower_bound, "optimal": self.optimal, "solver": self.solver}
