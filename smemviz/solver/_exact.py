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
    """One component in the flat arrays the kernel reads (local indices)."""

    def __init__(self, p: Problem, comp: Sequence[int]) -> None:
        import numpy as np

        local = {g: k for k, g in enumerate(comp)}
        self.n = len(comp)
        self.size = np.array([p.sizes[g] for g in comp], np.int64)
        self.span = np.array([p.spans[g] for g in comp], np.int64)
        self.align = np.array([p.alignments[g] for g in comp], np.int64)
        self.nbr_ptr, self.nbr_idx = _csr([[local[j] for j in p.neighbours[g]] for g in comp])
        section_ids = sorted({s for g in comp for s in p.buffer_sections[g]})
        sec_local = {s: k for k, s in enumerate(section_ids)}
        self.sec_ptr, self.sec_idx = _csr([[sec_local[s] for s in p.buffer_sections[g]] for g in comp])
        self.mem_ptr, self.mem_idx = _csr([[local[g] for g in p.sections[s]] for s in section_ids])

    memo: Any = None  # the table of searched states, made by the first run and kept across searches

    def fits_kernel_keys(self) -> bool:
        """The kernel packs (offset, rank) into one int64: ranks below 2**20, offsets below 2**42."""
        highest = int(self.size.sum()) + int(self.align.max(initial=1))
        return self.n < 1 << 20 and highest < 1 << 42

    def start_memo(self, core: ModuleType) -> None:
        """A fresh, small table of searched states; :meth:`run` grows it as searches get longer."""
        import numpy as np

        self.memo = np.zeros((1024, core.MEMO_COLUMNS), np.int64)
        self.memo_info = np.zeros(2, np.int64)  # entries, pool numbers used
        self.pool = np.empty(1024, np.int64)

    def _make_room(self, core: ModuleType, limit: int) -> None:
        """Room for what a search of ``limit`` more nodes may remember, within the caps."""
        import numpy as np

        entries, used = int(self.memo_info[0]), int(self.memo_info[1])
        slots = self.memo.shape[0]
        want = min(_MAX_MEMO_SLOTS, 2 * (entries + limit))
        if slots < want:
            while slots < want:
                slots *= 2
            self.memo = core.regrow(self.memo, slots)
        want = min(_MAX_MEMO_POOL, used + 3 * self.n * limit)
        if self.pool.shape[0] < want:
            pool = np.empty(want, np.int64)
            pool[:used] = self.pool[:used]
            self.pool = pool

    def run(self, core: ModuleType, order_id: int, rank: Sequence[int], cap: int, limit: int
            ) -> tuple[int, int, int, list[int]]:
        import numpy as np

        if self.memo is None:
            self.start_memo(core)
        self._make_room(core, limit)
        status, nodes, pruned, off = core.run(
            self.size, self.align, self.span, np.asarray(rank, np.int64), order_id, self.nbr_ptr, self.nbr_idx, self.sec_ptr,
            self.sec_idx, self.mem_ptr, self.mem_idx, cap, limit, self.memo, self.memo_info, self.pool,
        )
        return int(status), int(nodes), int(pruned), [int(x) for x in off]


def _csr(rows: list[list[int]]) -> tuple[Any, Any]:
    import numpy as np

    ptr = np.zeros(len(rows) + 1, np.int64)
    for k, row in enumerate(rows):
        ptr[k + 1] = ptr[k] + len(row)
    flat = np.array([x for row in rows for x in row], np.int64)
    return ptr, flat


def search(
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
    picks the kernel's form (default: compiled when numba can).
    """
    c = _Component(p, comp)
    if not c.fits_kernel_keys():  # beyond what the kernel's packed keys hold: keep the layout known
        return ExactResult(list(incumbent), incumbent_peak, incumbent_peak <= lower_bound, 0, lower_bound)
    core = load_core(compiled if compiled is not None else core_kind() == "compiled")
    best_peak, best_offsets = incumbent_peak, list(incumbent)
    proven_lo = lower_bound  # no layout has a lower peak
    used = 0
    limit = max(64, 4 * c.n)
    probing = {lower_bound, target}  # caps still worth a look of their own
    while proven_lo < best_peak and best_peak > enough and used < node_budget:
        for order_id, rank in enumerate(ranks):
            caps = sorted({cap for cap in (*probing, best_peak - 1) if cap is not None and proven_lo <= cap < best_peak})
            for cap in caps:
                if proven_lo >= best_peak or best_peak <= enough or used >= node_budget:
                    break
                allowance = min(max(64, limit >> (2 * order_id)), node_budget - used)
                status, nodes, pruned_at, offsets = c.run(core, order_id, rank, cap, allowance)
                used += nodes
                if status == core.FOUND:
                    best_peak = max(o + s for o, s in zip(offsets, c.size.tolist()))
                    best_offsets = offsets
                elif status == core.EXHAUSTED:  # none within cap: not even below the least pruned bound
                    proven_lo = max(proven_lo, min(pruned_at, best_peak))
                    probing.discard(cap)  # the bound creeps up from here: leave it to the search below the best
            if proven_lo >= best_peak or best_peak <= enough or used >= node_budget or (stop is not None and stop()):
                break
        if stop is not None and stop():
            break
        limit *= 2
    return ExactResult(best_offsets, best_peak, proven_lo >= best_peak, used, min(proven_lo, best_peak))
