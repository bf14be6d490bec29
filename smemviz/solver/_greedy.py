"""Greedy placement: buffers in a fixed order, each at the lowest aligned
offset where it overlaps nothing it is live with (first fit, holes included).

This is what compilers ship (size-ordered first fit); here it gives the
starting layout that the exact search must beat, and the fallback that
``solver="auto"`` never does worse than.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from ._problem import Problem, align_up

__all__ = ["ORDERS", "first_fit", "ordered", "best_greedy"]


def _start(p: Problem, i: int) -> int:
    return p.buffer_sections[i][0] if p.buffer_sections[i] else 0


# name -> sort key over (problem, buffer index); ties fall back to the index.
# "area" and "lifetime" count the sections a buffer spans, "area-time" its steps
ORDERS: dict[str, Callable[[Problem, int], tuple]] = {
    "size": lambda p, i: (-p.sizes[i], i),
    "area": lambda p, i: (-p.sizes[i] * len(p.buffer_sections[i]), -p.sizes[i], i),
    "alignment": lambda p, i: (-p.alignments[i], -p.sizes[i], i),
    "lifetime": lambda p, i: (-len(p.buffer_sections[i]), -p.sizes[i], i),
    "crowding": lambda p, i: (-p.crowding[i], -p.spans[i], -p.sizes[i] * p.spans[i], i),
    "area-time": lambda p, i: (-p.sizes[i] * p.spans[i], -p.spans[i], i),
    "conflicts": lambda p, i: (-len(p.neighbours[i]), -p.sizes[i], i),
    "start": lambda p, i: (_start(p, i), -p.sizes[i], i),
}


def first_fit(p: Problem, order: Sequence[int]) -> list[int]:
    """Offsets (every buffer of ``p``) placing ``order`` one by one, first fit."""
    offsets = [0] * p.count
    placed = [False] * p.count
    sizes, aligns, neighbours = p.sizes, p.alignments, p.neighbours
    for i in order:
        size, al = sizes[i], aligns[i]
        taken = sorted((offsets[j], offsets[j] + sizes[j]) for j in neighbours[i] if placed[j])
        cursor = 0
        for lo, hi in taken:
            if lo >= cursor + size:
                break
            if hi > cursor:
                cursor = align_up(hi, al)
        offsets[i] = cursor
        placed[i] = True
    return offsets


def ordered(p: Problem, pool: Sequence[int], order: str) -> list[int]:
    """``pool`` sorted by one of :data:`ORDERS`."""
    key = ORDERS[order]
    return sorted(pool, key=lambda i: key(p, i))


def best_greedy(p: Problem, indices: Sequence[int] | None = None) -> tuple[str, list[int], int]:
    """The best first-fit layout over :data:`ORDERS`: (order name, offsets, peak)."""
    pool = list(range(p.count)) if indices is None else list(indices)
    best: tuple[str, list[int], int] | None = None
    for name in ORDERS:
        offsets = first_fit(p, ordered(p, pool, name))
        peak = max((offsets[i] + p.sizes[i] for i in pool), default=0)
        if best is None or peak < best[2]:
            best = (name, offsets, peak)
    assert best is not None
    return best
