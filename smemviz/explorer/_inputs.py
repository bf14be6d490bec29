"""What the explorer is given, as an (SMEM plan, TMEM plan) pair.

A layout handed to ``explore`` follows smemviz's one input rule
(:mod:`smemviz.sources._inputs`). A builder's return value is the builder's own
fresh object, so the explorer computes its allocators when the builder did
not.
"""

from __future__ import annotations

from typing import Any

from ..layout._allocator import _BaseAllocator
from ..layout._plan import LayoutPlan
from ..sources._inputs import as_layouts, built_plans

__all__ = ["to_plans", "builder_plans", "declared_allocators", "Plans"]

Plans = tuple["LayoutPlan | None", "LayoutPlan | None"]


def to_plans(obj: Any) -> Plans:
    """``(smem_plan, tmem_plan)`` of a layout given to the explorer."""
    pair = as_layouts(obj)
    return pair.smem, pair.tmem


def builder_plans(result: Any) -> Plans:
    """``(smem_plan, tmem_plan)`` of what a builder returned, computing its allocators."""
    return built_plans(result)


def declared_allocators(obj: Any) -> dict[str, _BaseAllocator]:
    """smemviz allocators in what a builder returned (or was given), by memory:
    the declarations a comparison lays out again."""
    items = obj if isinstance(obj, (tuple, list)) else [obj]
    return {item.plan.memory: item for item in items if isinstance(item, _BaseAllocator) and item.layout_computed}
