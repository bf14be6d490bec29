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
from ...layout._build import covered_bytes
from ...layout._plan import CAPTURE_SOURCE, AliasGroup, LayoutPlan, Region, RegionKind
from .._struct import plan_from_struct
from ._records import CapturedAllocation, CapturedTmem

__all__ = ["smem_plan", "tmem_plan", "swizzle_label"]

_BARRIER_NAME = re.compile(r"mbar|barrier|pipeline|(^|_)bars?($|_)", re.IGNORECASE)
_TMEM_NAME = re.compile(r"tmem", re.IGNORECASE)
_REPEAT = re.compile(r"#\d+$")
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
    name = _REPEAT.sub("", a.name)  # "bars#2", a name made again (in another arm, say), is still "bars"
    if a.dtype in ("i64", "u64") and _BARRIER_NAME.search(name):
        return "barrier"
    if a.dtype in ("i32", "u32") and a.count == 1 and _TMEM_NAME.search(name):
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


def smem_plan(  # noqa: PLR0913 - what capture knows of one kernel
    allocations: list[CapturedAllocation],
    views: dict[int, dict[str, str]],
    total: int,
    arch: str | None,
    struct_prefixes: dict[int, str],
    launch: tuple[int, int] | None = None,
    branches: list[dict[int, int]] | None = None,
) -> LayoutPlan:
    """The plan of one kernel. ``views[i]`` holds the layouts allocation ``i``'s struct
    fields are viewed with; ``struct_prefixes[i]`` the prefix its field names need.
    ``launch`` is ``(smem, allocated end)`` when the launch states its own smem=: the
    plan then holds an empty region named for it where the allocations end, so its
    tables say where a total beyond the allocations comes from. ``branches`` holds,
    per alias group the compiler made by overlaying exclusive arms of an ``if``,
    allocation index -> phase (arm); those groups come first in the plan."""
    pads, groups, member = _branch_layout([(a.offset, a.end, a.alignment) for a in allocations], branches or [])
    regions: list[Region] = []
    order = sorted(range(len(allocations)), key=lambda i: (allocations[i].offset, i))
    for i in order:
        a = allocations[i]
        group, phase = member.get(i, (None, None))
        if a.how == "struct":
            rs, gs = _struct_regions(a, views.get(i, {}), struct_prefixes.get(i, ""), len(groups), len(regions))
            if rs:
                rs[0] = replace(rs[0], padding_before=pads[i])
            if group is not None:  # a union's fields keep their union; the rest lie in the arm's phase
                rs = [r if r.group is not None else replace(r, group=group, phase=phase) for r in rs]
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
                    padding_before=pads[i],
                    group=group,
                    phase=phase,
                    dtype=a.dtype,
                    count=a.count,
                    index=len(regions),
                    swizzle=a.swizzle,
                    layout=a.layout,
                    source=a.source,
                )
            )
    cursor = max([a.end for a in allocations] + [0])
    if launch is not None:
        requested, end = launch
        regions.append(Region(name=f"launch smem={requested} B", kind="data", offset=end, size=0, index=len(regions)))
    widest = max([r.alignment for r in regions] + [g.alignment for g in groups] + [1])
    return LayoutPlan(
        memory="smem",
        regions=tuple(sorted(regions, key=lambda r: (r.offset, r.index))),
        groups=tuple(groups),
        data_total=max(total, cursor),
        barrier_bytes=covered_bytes(r for r in regions if r.kind == "barrier"),
        base_alignment=widest,
        arch=arch,
        source=CAPTURE_SOURCE,
    )


def _branch_layout(
    spans: list[tuple[int, int, int]], branches: list[dict[int, int]]
) -> tuple[list[int], list[AliasGroup], dict[int, tuple[int, int]]]:
    """Padding before each item (``(offset, end, alignment)``), one alias group per
    arm-overlaying ``if`` (``branches``: outer ifs first, each item under the if ->
    phase), and item -> (innermost group, phase). Each standalone item, or whole
    group, is padded from the end of what lies before it in the same phase (or at
    the top); each phase of a group starts counting where the group's gap starts."""
    member = {i: (g, p) for g, items in enumerate(branches) for i, p in items.items()}  # the last is innermost
    extents = [(min(spans[i][0] for i in items), max(spans[i][1] for i in items)) for items in branches]
    parent: dict[int, tuple[int, int] | None] = {}
    for g, items in enumerate(branches):
        around = [h for h in range(g) if set(items) <= set(branches[h])]
        parent[g] = (around[-1], branches[around[-1]][next(iter(items))]) if around else None
    contents: dict[tuple[int, int] | None, list[tuple[int, int, int, int]]] = {}  # (start, end, item, group)
    for i in range(len(spans)):
        contents.setdefault(member.get(i), []).append((spans[i][0], spans[i][1], i, -1))
    for g, (start, end) in enumerate(extents):
        contents.setdefault(parent[g], []).append((start, end, -1, g))
    pads = [0] * len(spans)
    reach = [[0] * (max(items.values()) + 1) for items in branches]

    def place(where: tuple[int, int] | None, cursor: int) -> None:
        for start, end, item, g in sorted(contents.get(where, [])):
            pad = max(0, start - cursor)
            if g < 0:
                pads[item] = pad
            else:
                for phase in range(len(reach[g])):
                    place((g, phase), start - pad)
            if where is not None:
                reach[where[0]][where[1]] = max(reach[where[0]][where[1]], end - extents[where[0]][0])
            cursor = max(cursor, end)

    place(None, 0)
    groups = [
        AliasGroup(g, extents[g][0], max(reach[g]), max(spans[i][2] for i in items), tuple(reach[g]))
        for g, items in enumerate(branches)
    ]
    return pads, groups, member


def tmem_plan(
    columns: list[CapturedTmem], arch: str | None, branches: list[dict[int, int]] | None = None
) -> LayoutPlan:
    """TMEM columns of one kernel: each allocated block, or the pool allocations inside it.
    ``branches`` holds, per ``if`` whose arms both allocate, block index -> phase (arm):
    one launch runs one arm, so those blocks are an alias group."""
    blocks = [c for c in columns if c.pool is None]
    pooled = {c.pool for c in columns if c.pool is not None}
    shown: list[tuple[int, CapturedTmem]] = []  # (block it lies in, what is shown)
    for b_index, block in enumerate(blocks):
        if b_index in pooled:
            parts = [replace(c, offset=block.offset + c.offset) for c in columns if c.pool == b_index]
            shown += [(b_index, c) for c in parts]
            used = max(c.offset + c.columns for c in parts)
            if used < block.offset + block.columns:  # allocated, but no pool allocation took it
                unassigned = replace(
                    block, name=f"{block.name} (unassigned)", offset=used, columns=block.offset + block.columns - used
                )
                shown.append((b_index, unassigned))
        else:
            shown.append((b_index, block))
    shown.sort(key=lambda bc: bc[1].offset)
    in_branches = [{k: items[b] for k, (b, _) in enumerate(shown) if b in items} for items in branches or []]
    in_branches = [items for items in in_branches if items]
    pads, groups, member = _branch_layout([(c.offset, c.offset + c.columns, 1) for _, c in shown], in_branches)
    regions: list[Region] = []
    for k, (_, c) in enumerate(shown):
        group, phase = member.get(k, (None, None))
        regions.append(
            Region(
                name=c.name,
                kind="data",
                offset=c.offset,
                size=c.columns,
                padding_before=pads[k],
                group=group,
                phase=phase,
                dtype=dtype_name(c.dtype) if c.dtype is not None else None,
                index=len(regions),
                layout=c.layout,
                source=c.source,
            )
        )
    total = max([c.offset + c.columns for _, c in shown] + [0])
    return LayoutPlan(
        memory="tmem", regions=tuple(regions), groups=tuple(groups), data_total=total, arch=arch, source=CAPTURE_SOURCE
    )
