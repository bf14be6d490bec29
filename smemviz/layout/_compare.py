"""The same declarations laid out other ways: alias groups read as lifetimes, and
hand-written against greedy against optimal."""

from __future__ import annotations

import copy
from typing import Any, Literal

from ..solver import phase_lifetimes
from ._base import _BaseAllocator, capacity_checks_deferred
from ._plan import LayoutPlan

__all__ = ["groups_to_lifetimes", "compare_layouts"]


def groups_to_lifetimes(allocator: _BaseAllocator) -> Any:
    """A new allocator with the same declarations, where the alias groups are
    read as lifetimes, so the solver can re-lay them out.

    Each step is one combination of phases (one per group): phases of a group
    are live in different steps, phases of different groups and every other
    allocation meet in some step. The hand-written layout stays valid, so the
    solved one is never larger. The allocations themselves are shared: the
    one laid out last sets their offsets.
    """
    if not isinstance(allocator, _BaseAllocator):
        raise TypeError(f"expected an SmemAllocator or TmemAllocator, got {type(allocator).__name__}")
    steps, live = phase_lifetimes(allocator._alias_groups)
    placed, _ = allocator._packed_layout()
    new = copy.copy(allocator)
    # the hand-written layout, handed to the solver as one to beat (the new allocator's
    # own packing knows no groups, so it would not share a byte)
    new._layout_to_beat = {id(a): o for a, o, _, _ in allocator._member_offsets(placed)}
    new._allocations = list(allocator.allocations)
    new._added = {id(a) for a in new._allocations}
    new._alias_groups = []
    new._aliased = set()
    new._steps = steps
    new._live = dict(live)
    new._lifetimes = None
    new._layout_computed = False
    new._total = 0
    new._plan = None
    new._reset_copy()
    return new


def _clone(allocator: _BaseAllocator) -> Any:
    """An uncomputed copy with copies of every allocation (so laying it out
    leaves the caller's offsets alone)."""
    twins = {id(a): copy.copy(a) for a in allocator.allocations}
    new = copy.copy(allocator)
    new._allocations = [twins[id(a)] for a in allocator._allocations]
    new._added = {id(a) for a in new._allocations}
    new._alias_groups = [[[twins[id(a)] for a in phase] for phase in group] for group in allocator._alias_groups]
    new._aliased = {id(a) for g in new._alias_groups for p in g for a in p}
    new._live = {id(twins[k]): v for k, v in ((id(a), allocator._live.get(id(a))) for a in allocator.allocations) if v}
    new._lifetimes = None
    new._layout_computed = False
    new._total = 0
    new._plan = None
    new._reset_copy()
    ptr = getattr(allocator, "_tmem_ptr_alloc", None)
    if ptr is not None:
        setattr(new, "_tmem_ptr_alloc", twins[id(ptr)])  # noqa: B010 (SMEM allocators only)
    return new


def compare_layouts(allocator: _BaseAllocator, node_budget: int | Literal["auto"] = "auto") -> dict[str, LayoutPlan]:
    """Plans of the same declarations laid out three ways, for comparison:

    * ``"hand-written"`` (alias groups as declared) or ``"no aliasing"`` (when
      sharing comes only from ``live=`` steps): the layout without a solver;
    * ``"greedy"``: first fit in the best of several orders;
    * ``"optimal"``: the exact search (``optimal`` says whether it is proven).

    The allocator itself is not laid out; capacity is not enforced here.
    """
    if not isinstance(allocator, _BaseAllocator):
        raise TypeError(f"expected an SmemAllocator or TmemAllocator, got {type(allocator).__name__}")
    with capacity_checks_deferred():
        plain = _clone(allocator)
        plain._live = {}
        plain.compute_layout()
        out = {"hand-written" if allocator._alias_groups else "no aliasing": plain.plan}
        for label, solver in (("greedy", "greedy"), ("optimal", "auto")):
            solved = _clone(allocator)
            if solved._alias_groups:
                solved = groups_to_lifetimes(solved)
            solved.compute_layout(solver=solver, node_budget=node_budget)
            out[label] = solved.plan
    return out
