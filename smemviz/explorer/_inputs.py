"""Turn what the explorer is given (a plan, an allocator, a pair, or a
builder's return value) into an (SMEM plan, TMEM plan) pair."""

from __future__ import annotations

from typing import Any

from .._cutlass_interop import as_plan, is_cutlass_allocator
from .._plan import LayoutPlan

__all__ = ["to_plans", "Plans"]

Plans = tuple["LayoutPlan | None", "LayoutPlan | None"]


def _computed(obj: Any) -> Any:
    """``obj`` with its layout computed (``compute_layout()`` called if needed)."""
    if isinstance(obj, LayoutPlan):
        return obj
    done = getattr(obj, "layout_computed", None)
    if done is None and is_cutlass_allocator(obj):
        done = getattr(obj, "_layout_computed", False)
    if done is False and callable(getattr(obj, "compute_layout", None)):
        obj.compute_layout()
    return obj


def to_plans(obj: Any) -> Plans:
    """``(smem_plan, tmem_plan)`` from a plan, an allocator (SMEM or TMEM,
    smemviz's or CUTLASS's, computed or not) or a tuple/list of those."""
    items = list(obj) if isinstance(obj, (tuple, list)) else [obj]
    if not items or len(items) > 2:
        raise TypeError(
            f"expected a plan, an allocator or an (SMEM, TMEM) pair; got a {type(obj).__name__} of {len(items)} items"
        )
    smem: LayoutPlan | None = None
    tmem: LayoutPlan | None = None
    for item in items:
        if item is None:
            continue
        plan = as_plan(_computed(item))
        if plan.memory == "smem":
            if smem is not None:
                raise ValueError(f"got two SMEM layouts ({smem!r} and {plan!r}); pass one SMEM and one TMEM")
            smem = plan
        else:
            if tmem is not None:
                raise ValueError(f"got two TMEM layouts ({tmem!r} and {plan!r}); pass one SMEM and one TMEM")
            tmem = plan
    if smem is None and tmem is None:
        raise ValueError(f"nothing to show: {obj!r} holds no layout")
    return smem, tmem
