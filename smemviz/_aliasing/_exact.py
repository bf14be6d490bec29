"""Exact branch and bound for one group of conflicting buffers.

The search builds layouts bottom-up. Every layout can be pushed down until
each buffer rests at the lowest aligned offset above the buffers it is live
with, and listing those buffers by (offset, order rank) gives a sequence in
which every buffer lands exactly where the search puts it: at the lowest
legal offset given the ones before. So the search only walks such canonical
sequences, and prunes

* sequences that are not sorted by (offset, rank) (each layout is met once);
* a buffer placed at or above where another unplaced buffer could already sit
  entirely (that buffer could drop into the gap: dominance);
* nodes where some section's floor plus the bytes still to place there
  exceeds the best peak found so far (the bound); a section's floor is the
  highest of: its tallest placed buffer, the current offset, and the lowest
  offset any of its unplaced buffers can still take (cross-section inference);
* the remaining siblings once a buffer with nothing left to stack on top of
  it has been tried (its offset can no longer change).

The work is counted in search nodes, never in time, so a budget gives the
same answer on every machine.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ._problem import Problem

__all__ = ["ExactResult", "search"]


class _OutOfNodes(Exception):
    pass


class _Proven(Exception):
    pass


@dataclass
class ExactResult:
    offsets: list[int]  # per buffer of the component, in component order
    peak: int
    proven: bool
    nodes: int
    lower_bound: int  # raised above the static bound when the search proves a cap infeasible


class _Best:
    """The best layout found so far, shared by the searches that improve it."""

    __slots__ = ("peak", "offsets")

    def __init__(self, peak: int, offsets: list[int]) -> None:
        self.peak = peak
        self.offsets = offsets


class _Component:
    """One component with local indices, laid out for a fast inner loop."""

    def __init__(self, p: Problem, comp: Sequence[int]) -> None:
        local = {g: k for k, g in enumerate(comp)}
        self.size = [p.sizes[g] for g in comp]
        self.align = [p.alignments[g] for g in comp]
        self.neighbours = [[local[j] for j in p.neighbours[g]] for g in comp]
        section_ids = sorted({s for g in comp for s in p.buffer_sections[g]})
        sec_local = {s: k for k, s in enumerate(section_ids)}
        self.sections = [[sec_local[s] for s in p.buffer_sections[g]] for g in comp]
        self.members = [[local[g] for g in p.sections[s]] for s in section_ids]
        self.n = len(comp)


def search(
    p: Problem,
    comp: Sequence[int],
    ranks: Sequence[Sequence[int]],
    incumbent: list[int],
    incumbent_peak: int,
    lower_bound: int,
    node_budget: int,
) -> ExactResult:
    """Best layout of ``comp`` found within ``node_budget`` nodes.

    The peak is narrowed between a proven lower bound and the best layout
    known (``incumbent``, offsets in ``comp`` order) by asking "is there a
    layout with peak <= cap?": first at the lower bound, where the bound
    prunes hardest and the answer is often yes, then just below the best
    layout found so far, until a search finishes without one. Each
    question is answered by depth-first searches in the static orders of
    ``ranks`` (``ranks[k][i]``: buffer ``i``'s rank in order ``k``), taking
    turns with a node limit that doubles each round. A finished search that
    found nothing proves the cap too low.
    """
    c = _Component(p, comp)
    best = _Best(incumbent_peak, list(incumbent))
    proven_lo = lower_bound  # no layout has a lower peak
    used = 0
    first = True
    while proven_lo < best.peak and used < node_budget:
        # first at the bound; then always just below the best layout (branch and bound)
        cap = proven_lo if first else best.peak - 1
        allowance = (node_budget - used) // 2 if first else node_budget - used
        first = False
        found, exhausted, nodes = _decide(c, ranks, best, cap, max(allowance, 1))
        used += nodes
        if not found:
            if not exhausted:
                if cap == best.peak - 1:
                    break  # out of nodes below the best layout
                continue
            proven_lo = cap + 1
    return ExactResult(best.offsets, best.peak, proven_lo >= best.peak, used, proven_lo)


def _decide(c: _Component, ranks: Sequence[Sequence[int]], best: _Best, cap: int, allowance: int) -> tuple[bool, bool, int]:
    """Look for a layout with peak <= ``cap`` (improving ``best`` in place).

    Returns (found one, search finished, nodes used).
    """
    before = best.peak
    target = _Best(cap + 1, best.offsets)
    used = 0
    limit = max(64, 4 * c.n)
    while used < allowance:
        for rank in ranks:
            nodes, finished = _run(c, rank, target, cap + 1, min(limit, allowance - used))
            used += nodes
            if target.peak <= cap:
                if target.peak < before:
                    best.peak, best.offsets = target.peak, target.offsets
                return True, True, used
            if finished:
                return False, True, used
            if used >= allowance:
                break
        limit *= 2
    return False, False, used


def _run(c: _Component, rank: Sequence[int], best: _Best, stop_below: int, limit: int) -> tuple[int, bool]:
    """One depth-first search in one static order; updates ``best`` in place.

    Returns (nodes used, whether the search space was exhausted).
    """
    n = c.n
    size, align, neighbours, sections, members = c.size, c.align, c.neighbours, c.sections, c.members
    min_off = [0] * n
    off = [-1] * n
    floor = [0] * len(members)
    total = [sum(size[i] for i in m) for m in members]
    unplaced = set(range(n))
    nodes = 0

    def dfs(last_off: int, last_rank: int, peak: int) -> None:
        nonlocal nodes
        nodes += 1
        if nodes > limit:
            raise _OutOfNodes
        if not unplaced:
            if peak < best.peak:
                best.peak = peak
                best.offsets = off[:]
                if peak < stop_below:
                    raise _Proven
            return
        min_height = min(min_off[i] + size[i] for i in unplaced)
        candidates = sorted(
            (min_off[i], rank[i], i)
            for i in unplaced
            if min_off[i] < min_height
            and (min_off[i] > last_off or (min_off[i] == last_off and rank[i] > last_rank))
        )
        for o, r, i in candidates:
            s_i = size[i]
            end = o + s_i
            cap = best.peak - 1
            if end > cap:
                continue
            off[i] = o
            unplaced.discard(i)
            floors_saved = []
            for s in sections[i]:
                floors_saved.append((s, floor[s]))
                floor[s] = end
                total[s] -= s_i
            raised = []
            stacked = False
            for j in neighbours[i]:
                if off[j] < 0:
                    stacked = True
                    a = align[j]
                    m = -(-end // a) * a
                    if m > min_off[j]:
                        raised.append((j, min_off[j]))
                        min_off[j] = m
            ok = o + max(total) <= cap
            if ok:
                for s in sections[i]:
                    if end + total[s] > cap:
                        ok = False
                        break
            if ok and raised:
                seen = set()
                for j, _ in raised:
                    for s in sections[j]:
                        if s in seen:
                            continue
                        seen.add(s)
                        lowest = min(min_off[k] for k in members[s] if off[k] < 0)
                        if lowest > floor[s]:
                            floors_saved.append((s, floor[s]))
                            floor[s] = lowest
                        if floor[s] + total[s] > cap:
                            ok = False
                            break
                    if not ok:
                        break
            if ok:
                dfs(o, r, end if end > peak else peak)
            for j, m in reversed(raised):
                min_off[j] = m
            for s, f in reversed(floors_saved):
                floor[s] = f
            for s in sections[i]:
                total[s] += s_i
            unplaced.add(i)
            off[i] = -1
            if not stacked:
                break  # its offset is final, so any later sibling would have to go below it

    try:
        dfs(-1, -1, 0)
    except _OutOfNodes:
        return limit, False
    except _Proven:
        return nodes, True
    return nodes, True
