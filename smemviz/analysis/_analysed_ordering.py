"""The ordering part of a plan's analysis: the check of the kernel's model a plan
carries, or, for a declared plan, the edges its hand-overs need.

A captured plan carries its kernel's :class:`~smemviz.layout.ordering.OrderingModel`;
:func:`ordering_of` checks it once (lint, the maps, the pipeline diagram and the
reports all read that one report). A declared plan has no kernel yet: where its
regions declare how they are touched (TMA destinations, declared accesses) and
share bytes over time (alias phases, live steps), :func:`declared_needs` states the
edge each hand-over needs, through :func:`~smemviz.analysis.ordering.plan_needs`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..layout._plan import LayoutPlan
    from .ordering._plan import PlanNeeds
    from .ordering._result import OrderingReport

__all__ = ["ordering_of", "declared_kinds", "declared_needs"]

# the bank model's instruction kinds, as the ordering model names its access kinds
_ACCESS_KIND = {"ld": "ld", "st": "st", "ldmatrix": "ldmatrix", "stmatrix": "stmatrix", "cp.async": "cp_async"}
_WRITES = ("st", "stmatrix", "cp_async")
# finding a declared plan's hand-overs compares every pair of regions with every third
# (about 0.1 s at 200 regions on the development machine, growing with the cube): a plan
# with more data regions than this is not searched, so a large layout redraws as fast
NEEDS_MAX_REGIONS = 200


def ordering_of(plan: LayoutPlan) -> OrderingReport | None:
    """The ordering check of the model ``plan`` carries (``None`` without one)."""
    if plan.ordering is None:
        return None
    from .ordering import check_ordering

    return check_ordering(plan.ordering)


def declared_kinds(plan: LayoutPlan) -> dict[str, tuple[str, str]]:
    """Per region that declares how it is touched: (its first write, its last access), as
    the ordering model names access kinds. A TMA destination is first written by a TMA
    load; otherwise the first declared write (``st``, ``stmatrix``, ``cp.async``) is, or
    the first declared access. The last access is the last declared read, else the last
    declared access, else (a TMA destination with nothing else declared) the load itself."""
    from .._smem_instructions import INSTRUCTIONS

    touched: dict[str, list[str]] = {}
    for acc in plan.accesses:
        spec = INSTRUCTIONS.get(acc.instruction.strip().lower())
        if acc.region is not None and spec is not None and spec.kind in _ACCESS_KIND:
            touched.setdefault(acc.region, []).append(_ACCESS_KIND[spec.kind])
    out: dict[str, tuple[str, str]] = {}
    for r in plan.regions:
        if r.kind != "data":
            continue
        kinds = touched.get(r.name, [])
        if not kinds and not r.tma:
            continue
        writes = [k for k in kinds if k in _WRITES]
        reads = [k for k in kinds if k not in _WRITES]
        first = "tma_load" if r.tma else (writes or kinds)[0]
        last = reads[-1] if reads else kinds[-1] if kinds else first
        out[r.name] = (first, last)
    return out


def declared_needs(plan: LayoutPlan) -> PlanNeeds | None:
    """The edges a declared plan's hand-overs need, when it carries no model, some region
    declares how it is touched and some hand-over is found; else ``None`` (also for a plan
    of more than :data:`NEEDS_MAX_REGIONS` data regions: call ``plan_needs`` for those)."""
    if plan.ordering is not None or not (plan.groups or plan.steps):
        return None
    if sum(r.kind == "data" for r in plan.regions) > NEEDS_MAX_REGIONS:
        return None
    kinds = declared_kinds(plan)
    if not kinds:
        return None
    from .ordering import plan_needs

    needs = plan_needs(plan, kinds)
    return needs if needs.needs or needs.unknown else None
