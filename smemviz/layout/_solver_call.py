"""Hand a layout's declarations to the lifetime solver and read back its answer.

Alias groups are read as lifetimes (one step per combination of phases), and
the packed layout is passed along as a layout to beat: it is valid for any
lifetimes, so the solved layout is never larger than the hand-written one.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from ..solver import Times, phase_lifetimes, solve, timeline
from ._build import Lifetimes

__all__ = ["Declarations", "solve_placement"]


@dataclass(frozen=True)
class Declarations:
    """What an allocator declared, as the solver needs it: the allocations in order, how to
    size and align them, their live steps (by id), alias groups and named steps."""

    allocs: Sequence[Any]
    size_of: Callable[[Any], int]
    align_of: Callable[[Any], int]
    live: dict[int, frozenset[int] | Times]
    alias_groups: Sequence[Sequence[Sequence[Any]]]
    steps: tuple[str, ...] | None


def solve_placement(
    declared: Declarations,
    given: dict[int, int],
    *,
    also: dict[int, int] | None = None,
    solver: str,
    node_budget: int | None,
    target: int | None,
    enough: int | None = None,
) -> tuple[list[int], int, Lifetimes]:
    """Offsets (in ``allocs`` order), the data total, and what the plan records of the solve.

    ``also`` is another layout known to be valid (offsets by id), the hand-written
    one of :func:`~smemviz.groups_to_lifetimes`; the solver never returns worse.
    Lifetimes in time values (``Times``: unnamed steps beyond ``MAX_STEPS``) are
    cut into stretches where some lifetime starts or ends; the plan's steps are
    then those stretches, each named by its first time value.
    """
    allocs, size_of, align_of, live = declared.allocs, declared.size_of, declared.align_of, declared.live
    alias_groups, steps = declared.alias_groups, declared.steps
    lengths = None
    sets: dict[int, frozenset[int]]
    if alias_groups:
        steps, sets = phase_lifetimes(alias_groups)
    elif steps is None and any(isinstance(v, Times) for v in live.values()):
        firsts, stretches, lengths = timeline([live.get(id(a)) for a in allocs])
        steps = tuple(str(t) for t in firsts)
        sets = {id(a): s for a, s in zip(allocs, stretches) if id(a) in live}
    else:
        sets = {k: v for k, v in live.items() if not isinstance(v, Times)}  # all of them: steps below MAX_STEPS
        if steps is None:
            steps = tuple(str(k) for k in range(max((max(v) for v in sets.values()), default=0) + 1))
    every = frozenset(range(len(steps)))
    solution = solve(
        [size_of(a) for a in allocs],
        [align_of(a) for a in allocs],
        [sets.get(id(a), every) for a in allocs],
        solver=solver,  # type: ignore[arg-type]
        node_budget=node_budget,
        incumbents=[[given[id(a)] for a in allocs]]
        + ([[also[id(a)] for a in allocs]] if also and all(id(a) in also for a in allocs) else []),
        target=target,  # the search also asks for a layout that fits
        enough=enough,  # and, given a capacity, stops at the first that does
        step_lengths=lengths,
    )
    lifetimes = Lifetimes(
        steps=steps,
        live={k: tuple(sorted(v)) for k, v in sets.items()},
        lower_bound=solution.lower_bound,
        optimal=solution.optimal,
        solver=solution.solver,
    )
    return list(solution.offsets), solution.peak, lifetimes
