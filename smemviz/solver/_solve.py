"""The solver's driver: greedy layouts first, then the exact search on each
group of buffers that meet, within one node budget for the whole layout."""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Literal

from ._exact import search
from ._greedy import ORDERS, best_greedy
from ._problem import Problem

__all__ = ["Solution", "SolverName", "SOLVERS", "solve", "solve_problem", "DEFAULT_NODE_BUDGET", "NOTICE_AFTER_S"]

SolverName = Literal["auto", "exact", "greedy"]
SOLVERS = ("auto", "exact", "greedy")

# search nodes per layout (a few us each compiled): kernel-sized layouts mostly need a few hundred,
# the hardest of 3000 random ones about 0.3 million (benchmarks/bench_alias.py --seeds 0-14)
DEFAULT_NODE_BUDGET = 2_000_000

# static orders the exact search restarts with, in turn
_SEARCH_ORDERS = ("crowding", "lifetime", "area", "size", "alignment", "area-time")


@dataclass(frozen=True)
class Solution:
    """Offsets for every buffer and what is known about their optimality."""

    offsets: tuple[int, ...]
    peak: int
    lower_bound: int
    optimal: bool  # True only when proven
    solver: str  # "exact" when the search beat every greedy order, else "greedy:<order>" or "given"
    nodes: int  # search nodes used (the deterministic measure of work)
    greedy_peak: int  # the best greedy layout's peak, for comparison

    @property
    def gap(self) -> int:
        """Units the peak may be above the optimum (0 when proven optimal)."""
        return 0 if self.optimal else max(0, self.peak - self.lower_bound)


def solve(
    sizes: Sequence[int],
    alignments: Sequence[int],
    lives: Sequence[Iterable[int]],
    *,
    solver: SolverName = "auto",
    node_budget: int = DEFAULT_NODE_BUDGET,
    incumbents: Iterable[Sequence[int]] = (),
    target: int | None = None,
) -> Solution:
    """Offsets minimising the peak, so that buffers live at a common step never overlap.

    ``lives[i]`` are the steps buffer ``i`` is live in (any ints). ``incumbents``
    are known valid layouts (e.g. a hand-written one) the result must not be worse than.
    ``target`` is a peak the caller must meet, e.g. a capacity.
    """
    return solve_problem(
        Problem.build(sizes, alignments, [set(live) for live in lives]),
        solver=solver, node_budget=node_budget, incumbents=incumbents, target=target,
    )


def solve_problem(
    p: Problem,
    *,
    solver: SolverName = "auto",
    node_budget: int = DEFAULT_NODE_BUDGET,
    incumbents: Iterable[Sequence[int]] = (),
    target: int | None = None,
    enough: int | None = None,
    stop: Callable[[], bool] | None = None,
) -> Solution:
    """:func:`solve` for a built :class:`Problem`.

    ``target`` is a peak the caller must meet (a capacity): the search also
    asks for a layout within it. ``enough`` is a peak at which to stop looking
    for smaller ones (default: the lower bound; a capacity makes it a yes/no
    question, as MiniMalloc asks it). ``stop`` ends the search early when it
    returns True (for time-limited benchmarks; the result then depends on the machine).

    Groups of buffers that never meet are solved apart, the one with the
    highest bound first: a group whose layout already ends below another's
    peak cannot change the result, so its search stops there.
    """
    if solver not in SOLVERS:
        raise ValueError(f"solver must be one of {', '.join(map(repr, SOLVERS))}, got {solver!r}")
    if node_budget < 0:
        raise ValueError(f"node_budget must be >= 0, got {node_budget}")
    stop = _SlowSearchNotice(p.count, node_budget, stop)
    offsets = [0] * p.count
    lower = p.lower_bound
    comps = sorted(p.components(), key=lambda comp: -p.section_bounds_of(comp))
    greedy_peak_all = 0
    peak_so_far = 0
    nodes = 0
    improved = False
    names: list[str] = []
    known = [list(inc) for inc in incumbents if not p.violations(list(inc))]
    for k, comp in enumerate(comps):
        name, g_offsets, g_peak = best_greedy(p, comp)
        greedy_peak_all = max(greedy_peak_all, g_peak)
        best = [g_offsets[i] for i in comp]
        best_peak = g_peak
        for inc in known:
            peak = max(inc[i] + p.sizes[i] for i in comp)
            if peak < best_peak:
                best, best_peak, name = [inc[i] for i in comp], peak, "given"
        comp_lower = p.section_bounds_of(comp)
        good_enough = max(p.lower_bound, peak_so_far, enough if enough is not None else 0)
        budget = (node_budget - nodes) // (len(comps) - k)
        if solver != "greedy" and best_peak > max(comp_lower, good_enough) and budget > 0:
            ranks = [_ranks(p, comp, order) for order in _SEARCH_ORDERS]
            result = search(p, comp, ranks, best, best_peak, comp_lower, budget, target, good_enough, stop)
            nodes += result.nodes
            comp_lower = result.lower_bound
            if result.peak < best_peak:
                improved = True
                name = "exact"
            best, best_peak = result.offsets, result.peak
        names.append(name)
        peak_so_far = max(peak_so_far, best_peak)
        lower = max(lower, comp_lower)
        for i, o in zip(comp, best):
            offsets[i] = o
    peak = p.peak(offsets)
    label = "exact" if improved else ",".join(sorted({n if n == "given" else f"greedy:{n}" for n in names})) or "none"
    # proven optimal when some group's proven bound reaches the peak
    return Solution(tuple(offsets), peak, min(lower, peak), peak <= lower, label, nodes, greedy_peak_all)


# seconds of exact search after which the user is told it is still going, and how to get an answer sooner
NOTICE_AFTER_S = 3.0


class _SlowSearchNotice:
    """Checked between searches: says once, on stderr, that a long search is
    still going (the answer does not depend on time, so a notice is all a
    clock may do here); passes the caller's ``stop`` through."""

    def __init__(self, buffers: int, budget: int, stop: Callable[[], bool] | None) -> None:
        self._clock = time.monotonic
        self._start = self._clock()
        self._buffers, self._budget, self._stop = buffers, budget, stop
        self._said = False

    def __call__(self) -> bool:
        if not self._said and self._clock() - self._start > NOTICE_AFTER_S:
            self._said = True
            print(f"smemviz: still searching for the smallest layout of {self._buffers} buffers "
                  f"(node budget {self._budget:,}; the same declarations always give the same layout). "
                  "compute_layout(solver='greedy') or a smaller node_budget answers sooner.",
                  file=sys.stderr, flush=True)
        return self._stop is not None and self._stop()


def _ranks(p: Problem, comp: Sequence[int], order: str) -> list[int]:
    """Each buffer's position (by index in ``comp``) when ``comp`` is sorted by ``order``."""
    key = ORDERS[order]
    seq = sorted(range(len(comp)), key=lambda i: key(p, comp[i]))
    rank = [0] * len(comp)
    for pos, i in enumerate(seq):
        rank[i] = pos
    return rank

