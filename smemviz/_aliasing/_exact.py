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

from collections.abc import Callable, Sequence
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
    target: int | None = None,
    stop: Callable[[], bool] | None = None,
) -> ExactResult:
    """Best layout of ``comp`` found within ``node_budget`` nodes.

    The peak is narrowed between a proven lower bound and the best layout
    known (``incumbent``, offsets in ``comp`` order). Three kinds of depth-first
    search take turns, in each static order of ``ranks`` (``ranks[k][i]``:
    buffer ``i``'s rank in order ``k``), with a node limit that doubles each
    round: one asks for a layout at the lower bound, where pruning is hardest
    and the answer is often yes; one for a layout within ``target`` (a
    capacity the caller must meet), if given; and one is branch and bound
    below the best layout, tightening as it finds better ones. A search that
    finishes without an answer proves its cap too low and raises the bound to
    the least bound it pruned at; that cap is then not asked again.

    ``stop`` (checked between searches) ends early; it is for benchmarks with a
    time limit, as it makes the result depend on the machine.
    """
    c = _Component(p, comp)
    best = _Best(incumbent_peak, list(incumbent))
    proven_lo = lower_bound  # no layout has a lower peak
    used = 0
    limit = max(64, 4 * c.n)
    probing = {lower_bound, target}  # caps still worth a look of their own
    while proven_lo < best.peak and used < node_budget:
        for rank in ranks:
            caps = sorted({cap for cap in (*probing, best.peak - 1) if cap is not None and proven_lo <= cap < best.peak})
            for cap in caps:
                if proven_lo >= best.peak or used >= node_budget:
                    break
                allowance = min(limit, node_budget - used)
                if cap == best.peak - 1:  # branch and bound below the best layout
                    nodes, finished, _ = _run(c, rank, best, proven_lo + 1, allowance)
                    if finished:
                        proven_lo = best.peak
                else:  # is there a layout within cap?
                    probe = _Best(cap + 1, best.offsets)
                    nodes, finished, pruned_at = _run(c, rank, probe, cap + 1, allowance)
                    if probe.peak <= cap:
                        best.peak, best.offsets = probe.peak, probe.offsets
                    elif finished:  # none: not even below the least pruned bound
                        proven_lo = max(proven_lo, min(pruned_at, best.peak))
                        probing.discard(cap)  # the bound creeps up from here: leave it to branch and bound
                used += nodes
            if proven_lo >= best.peak or used >= node_budget or (stop is not None and stop()):
                break
        if stop is not None and stop():
            break
        limit *= 2
    return ExactResult(best.offsets, best.peak, proven_lo >= best.peak, used, min(proven_lo, best.peak))


def _run(c: _Component, rank: Sequence[int], best: _Best, stop_below: int, limit: int) -> tuple[int, bool, int]:
    """One depth-first search in one static order; updates ``best`` in place.

    Returns (nodes used, whether the search space was exhausted, the least
    bound among the pruned branches). When the search is exhausted without a
    layout below ``best.peak``, no layout has a peak below that last number:
    every branch was either searched or pruned with a bound at least that high.
    """
    n = c.n
    size, align, neighbours, sections, members = c.size, c.align, c.neighbours, c.sections, c.members
    min_off = [0] * n
    off = [-1] * n
    floor = [0] * len(members)
    total = [sum(size[i] for i in m) for m in members]
    unplaced = set(range(n))
    nodes = 0
    pruned_at = 1 << 62  # least bound of a branch pruned for exceeding the cap
    # The rest of a search depends only on the unplaced buffers' lowest offsets
    # and the last placement (the order constraint, which an earlier last
    # placement only loosens): a state already searched to the end from an
    # earlier or equal last placement, with a lower or equal peak, holds nothing new.
    searched: dict[tuple, list[tuple[int, int, int]]] = {}

    def dfs(last_off: int, last_rank: int, peak: int) -> None:
        nonlocal nodes, pruned_at
        nodes += 1
        if nodes > limit:
            raise _OutOfNodes
        state = tuple([m if o < 0 else -1 for m, o in zip(min_off, off)])
        visits = searched.get(state)
        if visits is not None:
            for s_off, s_rank, s_peak in visits:
                if s_peak <= peak and (s_off < last_off or (s_off == last_off and s_rank <= last_rank)):
                    return
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
            over = max(end, max(total[s] for s in sections[i]) + o)
            if over > cap:
                # it does not fit here; when nothing is left to raise it, it never will
                if over < pruned_at:
                    pruned_at = over
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
            ok = o + most_left <= cap
            if not ok:
                over = o + max(total)
                ok = over <= cap
                if not ok and over < pruned_at:
                    pruned_at = over
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
                            pruned_at = min(pruned_at, floor[s] + total[s])
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
        searched.setdefault(state, []).append((last_off, last_rank, peak))

    try:
        dfs(-1, -1, 0)
    except _OutOfNodes:
        return limit, False, pruned_at
    except _Proven:
        return nodes, True, pruned_at
    return nodes, True, pruned_at
