"""Turn what the user hands to ``export`` into an SMEM plan and a TMEM plan."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, Literal

from .. import hardware
from .._cutlass_interop import as_plan
from .._plan import LayoutPlan

__all__ = ["Which", "PlanPair", "resolve_plans"]

Which = Literal["both", "smem", "tmem"]
_WHICH = ("both", "smem", "tmem")


@dataclass(frozen=True)
class PlanPair:
    """The plans to export (at least one) and a title for the page."""

    smem: LayoutPlan | None
    tmem: LayoutPlan | None
    title: str | None = None
    arch: str | None = None

    @property
    def plans(self) -> tuple[LayoutPlan, ...]:
        return tuple(p for p in (self.smem, self.tmem) if p is not None)


def _one(obj: Any, arch: str | None) -> LayoutPlan:
    return as_plan(obj, arch=arch)


def resolve_plans(obj: Any, which: str = "both", arch: Any = None) -> PlanPair:
    """Plans from a plan, an allocator, a CUTLASS allocator, a layout file's
    :class:`~smemviz.layout_file.LayoutSpec` or an ``(smem, tmem)`` pair."""
    if which not in _WHICH:
        raise ValueError(f"which must be one of {', '.join(repr(w) for w in _WHICH)}; got {which!r}")
    arch_name = hardware.get_arch(arch).name if arch is not None else None
    title = None
    if hasattr(obj, "plans") and hasattr(obj, "smem_allocator"):  # a LayoutSpec
        smem, tmem = obj.plans(arch_name)
        title = obj.name
    elif isinstance(obj, tuple):
        if len(obj) != 2:
            raise TypeError(f"expected an (smem, tmem) pair, got a tuple of {len(obj)} items")
        smem = _one(obj[0], arch_name) if obj[0] is not None else None
        tmem = _one(obj[1], arch_name) if obj[1] is not None else None
        for slot, plan in (("smem", smem), ("tmem", tmem)):
            if plan is not None and plan.memory != slot:
                raise ValueError(
                    f"the {slot} item of the pair is a {plan.memory.upper()} layout; pass (smem, tmem) in that order"
                )
    else:
        plan = _one(obj, arch_name)
        smem, tmem = (plan, None) if plan.memory == "smem" else (None, plan)
    if which == "smem":
        if smem is None:
            raise ValueError("which='smem' but there is no SMEM layout to export")
        tmem = None
    elif which == "tmem":
        if tmem is None:
            raise ValueError("which='tmem' but there is no TMEM layout to export")
        smem = None
    if smem is None and tmem is None:
        raise ValueError("nothing to export: both the SMEM and the TMEM layout are missing")
    if arch_name is not None:
        smem = replace(smem, arch=arch_name) if smem is not None else None
        tmem = replace(tmem, arch=arch_name) if tmem is not None else None
    return PlanPair(smem, tmem, title, arch_name or (smem or tmem).arch)
