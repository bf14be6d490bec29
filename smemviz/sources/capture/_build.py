"""From captured allocations to the :class:`LayoutPlan` of each kernel.

A struct allocation becomes its fields (read by :func:`plan_from_struct`,
unions as alias groups) shifted to where the compiler put the struct; every
other allocation is one region. The plan's total is the compiler's: the
dynamic SMEM its launch requests, barriers and the TMEM-pointer slot included.
"""

from __future__ import annotations

import re
from dataclasses import replace

from ... import hardware
from ..._dtypes import dtype_name
from ...layout._plan import CAPTURE_SOURCE, AliasGroup, LayoutPlan, Region, RegionKind
from .._struct import plan_from_struct
from ._records import CapturedAllocation, CapturedTmem

__all__ = ["smem_plan", "tmem_plan", "swizzle_label"]

_BARRIER_NAME = re.compile(r"mbar|barrier|pipeline|(^|_)bars?($|_)", re.IGNORECASE)
_TMEM_NAME = re.compile(r"tmem", re.IGNORECASE)
_SWIZZLE = re.compile(r"^S<(\d+),(\d+),(\d+)>")
# the hardware swizzle modes, by their CuTe Swizzle<B, M, S> on byte addresses
_SWIZZLE_MODES = {bits: mode for mode, bits in hardware.SWIZZLE_MODE_BITS.items()}


def swizzle_label(layout: str | None) -> str | None:
    """ "128B" for a layout that starts ``S<3,4,3> o ...`` (and 64B/32B likewise)."""
    if not layout:
        return None
    m = _SWIZZLE.match(layout)
    if m is None:
        return None
    b, mm, s = (int(g) for g in m.groups())
    return _SWIZZLE_MODES.get((b, mm, s))


def _kind(a: CapturedAllocation) -> RegionKind:
    if a.via == "cutlass.memory.tmem":
        return "tmem_ptr" if a.dtype in ("i32", "u32") else "barrier"
    if a.dtype in ("i64", "u64") and _BARRIER_NAME.search(a.name):
        return "barrier"
    if a.dtype in ("i32", "u32") and a.count == 1 and _TMEM_NAME.search(a.name):
        return "tmem_ptr"
    return "data"


def _struct_regions(
    a: CapturedAllocation, views: dict[str, str], prefix: str, first_group: int, first_index: int
) -> tuple[list[Region], list[AliasGroup]]:
    inner = plan_from_struct(a.struct)
    regions = []
    for r in inner.regions:
        layout = views.get(r.name)
        regions.append(
            replace(
                r,
                name=prefix + r.name,
                offset=r.offset + a.offset,
                group=None if r.group is None else r.group + first_group,
                index=first_index + r.index,
                layout=layout or None,
                swizzle=swizzle_label(layout) or r.swizzle,
                source=a.source,
            )
        )
    groups = [replace(g, index=g.index + first_group, offset=g.offset + a.offset) for g in inner.groups]
    return regions, groups


def smem_plan(
    allocations: list[CapturedAllocation],
    views: dict[int, dict[str, str]],
    total: int,
    arch: str | None,
    struct_prefixes: dict[int, str],
    launch: tuple[int, int] | None = None,
) -> LayoutPlan:
    """The plan of one kernel. ``views[i]`` holds the layouts allocation ``i``'s struct
    fields are viewed with; ``struct_prefixes[i]`` the prefix its field names need.
    ``launch`` is ``(smem, allocated end)`` when the launch states its own smem=: the
    plan then holds an empty region named for it where the allocations end, so its
    tables say where a total beyond the allocations comes from."""
    regions: list[Region] = []
    groups: list[AliasGroup] = []
    order = sorted(range(len(allocations)), key=lambda i: (allocations[i].offset, i))
    cursor = 0
    for i in order:
        a = allocations[i]
        if a.how == "struct":
            rs, gs = _struct_regions(a, views.get(i, {}), struct_prefixes.get(i, ""), len(groups), len(regions))
            if rs:
                rs[0] = replace(rs[0], padding_before=max(0, rs[0].offset - cursor))
            regions += rs
            groups += gs
        else:
            regions.append(
                Region(
                    name=a.name,
                    kind=_kind(a),
                    offset=a.offset,
                    size=a.size,
                    alignment=a.alignment,
                    padding_before=max(0, a.offset - cursor),
                    dtype=a.dtype,
                    count=a.count,
                    index=len(regions),
                    swizzle=a.swizzle,
                    layout=a.layout,
                    source=a.source,
                )
            )
        cursor = max(cursor, a.end)
    if launch is not None:
        requested, end = launch
        regions.append(Region(name=f"launch smem={requested} B", kind="data", offset=end, size=0, index=len(regions)))
    widest = max([r.alignment for r in regions] + [g.alignment for g in groups] + [1])
    return LayoutPlan(
        memory="smem",
        regions=tuple(sorted(regions, key=lambda r: (r.offset, r.index))),
        groups=tuple(groups),
        data_total=max(total, cursor),
        barrier_bytes=0,
        base_alignment=widest,
        arch=arch,
        source=CAPTURE_SOURCE,
    )


def tmem_plan(columns: list[CapturedTmem], arch: str | None) -> LayoutPlan:
    """TMEM columns of one kernel: each allocated block, or the pool allocations inside it."""
    blocks = [c for c in columns if c.pool is None]
    pooled = {c.pool for c in columns if c.pool is not None}
    shown: list[CapturedTmem] = []
    for b_index, block in enumerate(blocks):
        if b_index in pooled:
            parts = [replace(c, offset=block.offset + c.offset) for c in columns if c.pool == b_index]
            shown += parts
            used = max(c.offset + c.columns for c in parts)
            if used < block.offset + block.columns:  # allocated, but no pool allocation took it
                shown.append(
                    replace(
                        block,
                        name=f"{block.name} (unassigned)",
                        offset=used,
                        columns=block.offset + block.columns - used,
                    )
                )
        else:
            shown.append(block)
    regions: list[Region] = []
    cursor = 0
    for c in sorted(shown, key=lambda c: c.offset):
        regions.append(
            Region(
                name=c.name,
                kind="data",
                offset=c.offset,
                size=c.columns,
                padding_before=max(0, c.offset - cursor),
                dtype=dtype_name(c.dtype) if c.dtype is not None else None,
                index=len(regions),
                layout=c.layout,
                source=c.source,
            )
        )
        cursor = max(cursor, c.offset + c.columns)
    return LayoutPlan(memory="tmem", regions=tuple(regions), data_total=cursor, arch=arch, source=CAPTURE_SOURCE)
