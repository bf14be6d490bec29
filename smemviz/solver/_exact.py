"""Exact search for one group of conflicting buffers: the smallest peak,
proven, within a node budget.

The search itself (:mod:`._core`) answers one question: is there a layout
within a cap? This module narrows the peak with it, between a proven lower
bound and the best layout known.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from types import ModuleType
from typing import Any

from ._loader import core_kind, load_core
from ._problem import Problem

__all__ = ["ExactResult", "search"]


@dataclass
class ExactResult:
    offsets: list[int]  # per buffer of the component, in component order
    peak: int
    proven: bool
    nodes: int
    lower_bound: int  # raised above the static bound when the search proves a cap infeasible


# the table of searched states: at most this many entries, holding this many numbers (8 bytes each)
_MAX_MEMO_SLOTS = 1 << 21
_MAX_MEMO_POOL = 1 << 23


class _Component:
    """One component in the arrays the kernel reads (local indices), and the table
    of searched states its searches share."""

    def __init__(self, p: Problem, comp: Sequence[int], core: ModuleType) -> None:
        local = {g: k for k, g in enumerate(comp)}
        self.n = len(comp)
        self.core = core
        self.sizes = [p.sizes[g] for g in comp]
        self.aligns = [p.alignments[g] for g in comp]
        section_ids = sorted({s for g in comp for s in p.buffer_sections[g]})
        sec_local = {s: k for k, s in enumerate(section_ids)}
        arr = core.as_array
        self.graph = core.Graph(
            arr(self.sizes),
            arr(self.aligns),
            arr([p.spans[g] for g in comp]),
            *_csr([[local[j] for j in p.neighbours[g]] for g in comp], arr),
            *_csr([[sec_local[s] for s in p.buffer_sections[g]] for g in comp], arr),
            *_csr([[local[g] for g in p.sections[s]] for s in section_ids], arr),
        )
        self.memo = core.new_memo()

    def fits_kernel_keys(self) -> bool:
        """The kernel packs (offset, rank) into one int64: ranks below 2**20, offsets below 2**42."""
        highest = sum(self.sizes) + max(self.aligns, default=1)
        return self.n < 1 << 20 and highest < 1 << 42

    def _make_room(self, limit: int) -> None:
        """Room for what a search of ``limit`` more nodes may remember, within the caps."""
        table, info, pool = self.memo
        entries, used = int(info[0]), int(info[1])
        slots = len(table)
        want = min(_MAX_MEMO_SLOTS, 2 * (entries + limit))
        if slots < want:
            while slots < want:
                slots *= 2
            table = self.core.regrow(table, slots)
        want = min(_MAX_MEMO_POOL, used + 3 * self.n * limit)
        if len(pool) < want:
            pool = self.core.grown(pool, used, want)
        self.memo = self.core.Memo(table, info, pool)

    def run(self, order_id: int, rank: Sequence[int], cap: int, limit: int) -> tuple[int, int, int, list[int]]:
        """One search of the kernel (see ``_core.run``): (status, nodes, least pruned bound, offsets)."""
        self._make_room(limit)
        status, nodes, pruned, off = self.core.run(
            self.graph, self.core.as_array(rank), order_id, cap, limit, self.memo
        )
        return int(status), int(nodes), int(pruned), [int(x) for x in off]


def _csr(rows: list[list[int]], arr: Callable[[list[int]], Any]) -> tuple[Any, Any]:
    """Rows of ints as (row starts, the rows one after another)."""
    ptr = [0]
    for row in rows:
        ptr.append(ptr[-1] + len(row))
    return arr(ptr), arr([x for row in rows for x in row])


def search(  # noqa: PLR0913 - the search's inputs and its stopping rules, named
    p: Problem,
    comp: Sequence[int],
    ranks: Sequence[Sequence[int]],
    incumbent: list[int],
    incumbent_peak: int,
    lower_bound: int,
    node_budget: int,
    target: int | None = None,
    enough: int = 0,
    stop: Callable[[], bool] | None = None,
    compiled: bool | None = None,
    progress: Callable[[int, int, int], object] | None = None,
) -> ExactResult:
    """Best layout of ``comp`` found within ``node_budget`` nodes.

    The peak is narrowed between a proven lower bound and the best layout
    known (``incumbent``, offsets in ``comp`` order) by asking the kernel, in
    each static order of ``ranks`` (``ranks[k][i]``: buffer ``i``'s rank in
    order ``k``), for a layout within a cap: at the lower bound, where pruning
    is hardest and the answer is often yes; within ``target`` (a capacity the
    caller must meet), if given; and one unit below the best layout, again
    after each improvement. Each round doubles the node limit; order ``k``
    gets a quarter of order ``k - 1``'s. The table of searched states is kept
    across these searches, so a longer one resumes. A search that finishes
    without an answer proves its cap too low and raises the bound to the least
    bound it pruned at; that cap is then not asked again.

    The search ends once a layout within ``enough`` is found.
    ``stop`` (checked between searches) ends early; it is for benchmarks with a
    time limit, as it makes the result depend on the machine. ``compiled``
    picks the kernel's form (default: compiled when numba can). ``progress``
    is told (nodes used, best peak, proven bound) after each search; it only watches.
    """
    core = load_core(compiled if compiled is not None else core_kind() == "compiled")
    c = _Component(p, comp, core)
    if not c.fits_kernel_keys():  # beyond what the kernel's packed keys hold: keep the layout known
        return ExactResult(list(incumbent), incumbent_peak, incumbent_peak <= lower_bound, 0, lower_bound)
    best_peak, best_offsets = incumbent_peak, list(incumbent)
    proven_lo = lower_bound  # no layout has a lower peak
    used = 0
    limit = max(64, 4 * c.n)
    probing = {lower_bound, target}  # caps still worth a look of their own
    while proven_lo < best_peak and best_peak > enough and used < node_budget:
        for order_id, rank in enumerate(ranks):
            caps = sorted(
                {cap for cap in (*probing, best_peak - 1) if cap is not None and proven_lo <= cap < best_peak}
            )
            for cap in caps:
                if proven_lo >= best_peak or best_peak <= enough or used >= node_budget:
                    break
                allowance = min(max(64, limit >> (2 * order_id)), node_budget - used)
                status, nodes, pruned_at, offsets = c.run(order_id, rank, cap, allowance)
                used += nodes
                if status == core.FOUND:
                    best_peak = max(o + s for o, s in zip(offsets, c.sizes))
                    best_offsets = offsets
                elif status == core.EXHAUSTED:  # none within cap: not even below the least pruned bound
                    proven_lo = max(proven_lo, min(pruned_at, best_peak))
                    probing.discard(cap)  # the bound creeps up from here: leave it to the search below the best
                if progress is not None:
                    progress(used, best_peak, proven_lo)
            if proven_lo >= best_peak or best_peak <= enough or used >= node_budget or (stop is not None and stop()):
                break
        if stop is not None and stop():
            break
        limit *= 2
    return ExactResult(best_offsets, best_peak, proven_lo >= best_peak, used, min(proven_lo, best_peak))
