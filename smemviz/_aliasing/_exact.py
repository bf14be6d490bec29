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
    layout with peak <= cap?": briefly at the lower bound, where the bound
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
    # a short look at the bound itself, where pruning is hardest and the answer often yes
    probe = _Best(lower_bound + 1, best.offsets)
    finished, used = _take_turns(c, ranks, probe, lower_bound + 1, max(node_budget // 4, 1))
    if probe.peak <= lower_bound:
        best.peak, best.offsets = probe.peak, probe.offsets
    elif finished:
        proven_lo = lower_bound + 1
    if proven_lo < best.peak and used < node_budget:
        # branch and bound below the best layout, which each search tightens as it goes
        finished, nodes = _take_turns(c, ranks, best, proven_lo + 1, node_budget - used)
        used += nodes
        if finished:
            proven_lo = best.peak
    return ExactResult(best.offsets, best.peak, proven_lo >= best.peak, used, min(proven_lo, best.peak))


def _take_turns(
    c: _Component, ranks: Sequence[Sequence[int]], best: _Best, stop_below: int, allowance: int
) -> tuple[bool, int]:
    """Searches for layouts below ``best.peak`` in each order in turn, the node
    limit doubling each round, until one finishes or reaches ``stop_below``.

    Returns (a search finished, nodes used).
    """
    used = 0
    limit = max(64, 4 * c.n)
    while used < allowance:
        for rank in ranks:
            nodes, finished = _run(c, rank, best, stop_below, min(limit, allowance - used))
            used += nodes
            if finished or best.peak < stop_below:
                return True, used
            if used >= allowance:
                break
        limit *= 2
    return False, used


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
        most_left = max(total)  # bytes still to place in the most crowded section
        for o, r, i in candidates:
            s_i = size[i]
            end = o + s_i
            cap = best.peak - 1
            if end > cap or any(end + total[s] - s_i > cap for s in sections[i]):
                # it does not fit here; when nothing is left to raise it, it never will
                if any(off[j] < 0 for j in neighbours[i]):
                    continue
                break
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
            # every buffer still to place goes at or above o
            ok = o + most_left <= cap or o + max(total) <= cap
            if ok and raised:
                seen = set()
                for j, _ in raised:
                    m = min_off[j]
                    for s in sections[j]:
                        # the section's floor rises to its lowest reachable offset, which is at most m
                        if s in seen or m + total[s] <= cap:
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
