"""CUTLASS's flat packing: blocks sorted by alignment, largest first, then bumped from 0.

Each standalone allocation is one block; each alias group is one block as
large as its largest phase (every phase packed from the group's base) and
aligned to its largest member. The same declarations give the same offsets as
``cutlass.experimental.task_scheduling.memory``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from .._units import align_up

__all__ = ["Placed", "pack_blocks", "member_offsets"]

# (allocation or alias group, base offset, size, alignment)
Placed = tuple[Any, int, int, int]


def pack_blocks(
    allocations: Sequence[Any],
    aliased: set[int],
    alias_groups: Sequence[Sequence[Sequence[Any]]],
    size_of: Callable[[Any], int],
    align_of: Callable[[Any], int],
) -> tuple[list[Placed], int]:
    """(block, base offset, size, alignment) for every block, and the total."""
    blocks: list[tuple[int, int, Any]] = []  # (alignment, size, alloc or group)
    for a in allocations:
        if id(a) not in aliased:
            blocks.append((align_of(a), size_of(a), a))
    for group in alias_groups:
        g_size = 0
        g_align = 1
        for phase in group:
            cursor = 0
            for a in phase:
                al = align_of(a)
                if al > g_align:
                    g_align = al
                cursor = align_up(cursor, al) + size_of(a)
            if cursor > g_size:
                g_size = cursor
        blocks.append((g_align, g_size, group))
    blocks.sort(key=_by_alignment_desc)

    offsets: list[Placed] = []
    cursor = 0
    for al, size, item in blocks:
        base = align_up(cursor, al)
        offsets.append((item, base, size, al))
        cursor = base + size
    return offsets, cursor


def member_offsets(
    placed: Sequence[Placed], size_of: Callable[[Any], int], align_of: Callable[[Any], int]
) -> list[Placed]:
    """(allocation, offset, size, alignment) for every allocation of a packed layout."""
    out = []
    for item, base, size, al in placed:
        if type(item) is list:
            for phase in item:
                c = base
                for a in phase:
                    a_align = align_of(a)
                    c = align_up(c, a_align)
                    a_size = size_of(a)
                    out.append((a, c, a_size, a_align))
                    c += a_size
        else:
            out.append((item, base, size, al))
    return out


def _by_alignment_desc(block: tuple[int, int, Any]) -> int:
    return -block[0]
