"""Hand a layout's declarations to the lifetime solver and read back its answer.

Alias groups are read as lifetimes (one step per combination of phases), and
the packed layout is passed along as a layout to beat: it is valid for any
lifetimes, so the solved layout is never larger than the hand-written one.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from .._aliasing import solve
from .._lifetimes import phase_lifetimes
from ._build import Lifetimes

__all__ = ["solve_placement"]


def solve_placement(
    allocs: Sequence[Any],
    size_of: Callable[[Any], int],
    align_of: Callable[[Any], int],
    live: dict[int, frozenset[int]],
    alias_groups: Sequence[Sequence[Sequence[Any]]],
    steps: tuple[str, ...] | None,
    given: dict[int, int],
    *,
    solver: str,
    node_budget: int,
    target: int | None,
) -> tuple[list[int], int, Lifetimes]:
    """Offsets (in ``allocs`` order), the data total, and what the plan records of the solve."""
    if alias_groups:
        steps, live = phase_lifetimes(alias_groups)
    elif steps is None:
        steps = tuple(str(k) for k in range(max((max(v) for v in live.values()), default=0) + 1))
    every = frozenset(range(len(steps)))
    solution = solve(
        [size_of(a) for a in allocs],
        [align_of(a) for a in allocs],
        [live.get(id(a), every) for a in allocs],
        solver=solver,  # type: ignore[arg-type]
        node_budget=node_budget,
        incumbents=[[given[id(a)] for a in allocs]],
        target=target,  # the search also asks for a layout that fits
    )
    lifetimes = Lifetimes(
        steps=steps,
        live={k: tuple(sorted(v)) for k, v in live.items()},
        lower_bound=solution.lower_bound,
        optimal=solution.optimal,
        solver=solution.solver,
    )
    return list(solution.offsets), solution.peak, lifetimes
