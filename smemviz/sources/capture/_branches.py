"""Which allocations lie in exclusive arms of one ``if``: the alias groups a merged kernel has.

A kernel launched with ``smem_merge_branch_allocs=True`` lets the compiler overlay
the SMEM allocations of an ``if``'s two arms, since one launch runs only one of
them; TMEM is allocated at run time, so an arm's columns are only ever taken
when that arm runs. Each allocation is known by its branch path: the
``(if, arm)`` pairs it lies in, outermost first. The outermost ``if`` whose arms
both allocate becomes one alias group, its arms the phases; an ``if`` nested in an
arm whose arms both allocate is a group of its own, lying inside that arm's phase
(the compiler overlays nested arms too), like a union inside a struct's union.
"""

from __future__ import annotations

from collections.abc import Sequence

__all__ = ["BranchPath", "branch_groups", "describe_arms"]

BranchPath = tuple[tuple[int, int], ...]  # (the if's index in the module, arm: 0 then, 1 else), outermost first


def branch_groups(paths: Sequence[BranchPath]) -> list[dict[int, int]]:
    """One alias group per ``if`` whose arms both allocate, outer ifs first (an if's
    index is its place in printing order, which puts it after the ifs around it):
    each maps every item lying in one of its arms, nested or not, to its phase."""
    arms: dict[int, set[int]] = {}
    for path in paths:
        for if_index, arm in path:
            arms.setdefault(if_index, set()).add(arm)
    groups: dict[int, dict[int, int]] = {}
    for item, path in enumerate(paths):
        for if_index, arm in path:
            if len(arms[if_index]) > 1:
                groups.setdefault(if_index, {})[item] = sorted(arms[if_index]).index(arm)
    return [groups[i] for i in sorted(groups)]


def describe_arms(
    memory: str, groups: list[dict[int, int]], names: list[str], sources: list[str | None]
) -> tuple[str, ...]:
    """One line per alias group of exclusive arms: what each arm holds, and why the overlay is safe."""
    out = []
    for g, items in enumerate(groups):
        arms = []
        for phase in range(max(items.values()) + 1):
            mine = [i for i in sorted(items) if items[i] == phase]
            where = next((sources[i] for i in mine if sources[i]), None)
            listed = ", ".join(names[i] for i in mine[:4]) + (f" and {len(mine) - 4} more" if len(mine) > 4 else "")
            arms.append(f"arm {phase + 1}: {listed}" + (f" ({where})" if where else ""))
        how = (
            "the launch sets smem_merge_branch_allocs=True, so the compiler overlays the arms' SMEM"
            if memory == "SMEM"
            else "each arm allocates its own columns at run time"
        )
        out.append(
            f"{memory} alias group {g + 1}: exclusive arms of one if ({'; '.join(arms)}); {how}. "
            "One launch runs one arm, so they never hold data at once: safe by construction."
        )
    return tuple(out)
