"""The solver's driver: greedy layouts first, then the exact search on each
group of buffers that meet, within one node budget for the whole layout."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Literal

from ._exact import search
from ._greedy import ORDERS, best_greedy
from ._problem import Problem
from ._progress import Progress

__all__ = [
    "Solution",
    "SolverName",
    "SOLVERS",
    "solve",
    "solve_problem",
    "DEFAULT_NODE_BUDGET",
    "DEFAULT_WORK",
    "NOTICE_AFTER_S",
    "default_node_budget",
]

SolverName = Literal["auto", "exact", "greedy"]
SOLVERS = ("auto", "exact", "greedy")

# search nodes per layout at most (a few us each compiled): kernel-sized layouts mostly need a few hundred,
# the hardest of 3000 random ones about 0.3 million (benchmarks/bench_alias.py --seeds 0-14)
DEFAULT_NODE_BUDGET = 2_000_000
# a node's work grows with the buffers summed over the sections (Problem.membership): the default
# budget is this much work, so a large layout gets fewer nodes and the same few seconds (some 20 ns a
# unit compiled here: about 4 s of search; a kernel-sized layout keeps the whole DEFAULT_NODE_BUDGET)
DEFAULT_WORK = 200_000_000

# static orders the exact search restarts with, in turn
_SEARCH_ORDERS = ("crowding", "lifetime", "area", "size", "alignment", "area-time")


def default_node_budget(p: Problem) -> int:
    """The node budget when none is given: :data:`DEFAULT_NODE_BUDGET`, less for layouts
    whose nodes cost more (it depends on the problem only, never on the machine)."""
    return max(1_000, min(DEFAULT_NODE_BUDGET, DEFAULT_WORK // max(1, p.membership)))


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


def solve(  # noqa: PLR0913 - the public solver's keyword options
    sizes: Sequence[int],
    alignments: Sequence[int],
    lives: Sequence[Iterable[int]],
    *,
    solver: SolverName = "auto",
    node_budget: int | None = None,
    incumbents: Iterable[Sequence[int]] = (),
    target: int | None = None,
    enough: int | None = None,
    step_lengths: Sequence[int] | None = None,
) -> Solution:
    """Offsets minimising the peak, so that buffers live at a common step never overlap.

    ``lives[i]`` are the steps buffer ``i`` is live in (any ints); ``step_lengths``
    how long each step lasts, when steps are stretches of time. ``incumbents``
    are known valid layouts (e.g. a hand-written one) the result must not be worse than.
    ``target`` is a peak the caller must meet, e.g. a capacity; ``enough`` a peak
    at which to stop looking for smaller ones (see :func:`solve_problem`).
    ``node_budget`` defaults to :func:`default_node_budget`.
    """
    return solve_problem(
        Problem.build(sizes, alignments, lives, step_lengths),
        solver=solver,
        node_budget=node_budget,
        incumbents=incumbents,
        target=target,
        enough=enough,
    )


def solve_problem(
    p: Problem,
    *,
    solver: SolverName = "auto",
    node_budget: int | None = None,
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
    peak cannot change the result, so its search stops there. A search that
    runs a while shows its progress (:mod:`._progress`).
    """
    if solver not in SOLVERS:
        raise ValueError(f"solver must be one of {', '.join(map(repr, SOLVERS))}, got {solver!r}")
    if node_budget is None:
        node_budget = default_node_budget(p)
    if node_budget < 0:
        raise ValueError(f"node_budget must be >= 0, got {node_budget}")
    progress = Progress(p.count, node_budget, notice_after_s=NOTICE_AFTER_S, stop=stop)
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
            progress.done_before = nodes
            result = search(
                p,
                comp,
                ranks,
                best,
                best_peak,
                comp_lower,
                budget,
                target,
                good_enough,
                progress.should_stop,
                progress=progress.update,
            )
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
    progress.finish(nodes, peak, min(lower, peak), peak <= lower)
    # proven optimal when some group's proven bound reaches the peak
    return Solution(tuple(offsets), peak, min(lower, peak), peak <= lower, label, nodes, greedy_peak_all)


# seconds of search after which its progress is shown (the answer does not depend on time,
# so showing it is all a clock may do here)
NOTICE_AFTER_S = 1.0


def _ranks(p: Problem, comp: Sequence[int], order: str) -> list[int]:
    """Each buffer's position (by index in ``comp``) when ``comp`` is sorted by ``order``."""
    key = ORDERS[order]
    seq = sorted(range(len(comp)), key=lambda i: key(p, comp[i]))
    rank = [0] * len(comp)
    for pos, i in enumerate(seq):
        rank[i] = pos
    return rank
