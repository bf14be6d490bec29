"""A plan with every analysis a view shows, computed once.

The byte map, its conflict strip, the explorer's panels, the reports and the
exports all show the same few answers about a plan: its capacity on an arch,
the occupancy that follows, the lint findings, the bank analysis of each
declared access and the ordering of its shared bytes (the check of the kernel's
model a captured plan carries, or the edges a declared plan's hand-overs need). :func:`analyse` computes them once into a frozen
:class:`Analysed`, and every view reads that value instead of deriving its own.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from .. import hardware
from ..layout._plan import LayoutPlan
from ._analysed_ordering import declared_needs, ordering_of
from ._lint import lint_with_accesses
from ._occupancy import plan_occupancy

if TYPE_CHECKING:
    from ..layout._plan import CapacityCheck
    from ._finding import Finding, Findings
    from ._occupancy import Occupancy
    from .banks._access import AnalysedAccess
    from .banks._patterns import AccessReport
    from .ncu._overlay import MeasuredSegment
    from .ordering._plan import PlanNeeds
    from .ordering._result import OrderingReport

__all__ = ["Analysed", "analyse", "as_analysed"]


@dataclass(frozen=True, eq=False)
class Analysed:
    """One plan judged on one arch: what every view of it shows.

    ``arch`` is the architecture the plan was judged on (``None`` when there was
    none to judge an SMEM plan against); ``findings`` holds every lint finding,
    capacity included; ``banks`` the bank analysis of each declared access, in
    the plan's order (a record the analysis refuses keeps its ``error``);
    ``ordering`` the ordering check of the kernel model the plan carries (its
    findings are among ``findings`` too) and ``needs`` the edges a declared plan's
    hand-overs need (``None`` for a plan with a model, or with no hand-over whose
    accesses it declares); ``measured`` what Nsight Compute counted on the kernel's
    regions (``analyse(..., measured=smemviz.read_ncu(...))``), shown beside the prediction."""

    plan: LayoutPlan
    arch: str | None
    capacity: CapacityCheck
    occupancy: Occupancy | None
    findings: Findings
    banks: tuple[AnalysedAccess, ...]
    ordering: OrderingReport | None = None
    needs: PlanNeeds | None = None
    measured: tuple[MeasuredSegment, ...] = ()

    @property
    def has_ordering(self) -> bool:
        """Whether there is an ordering to show: a checked model, or a declared plan's needs."""
        return self.ordering is not None or self.needs is not None

    @property
    def beyond_capacity(self) -> tuple[Finding, ...]:
        """The findings other than the capacity verdict, which every view gives on its own."""
        return tuple(f for f in self.findings if f.rule != "capacity")

    @property
    def bank_reports(self) -> tuple[AccessReport, ...]:
        """The bank report of each access the analysis could take."""
        return tuple(item.report for item in self.banks if item.report is not None)


def analyse(
    plan: LayoutPlan,
    arch: str | int | hardware.Arch | None = None,
    *,
    threads: int | None = None,
    registers: int | None = None,
    measured: Any = None,
) -> Analysed:
    """Judge ``plan`` on ``arch`` (default: the plan's own, else the machine's) once:
    capacity, occupancy (with ``threads`` per CTA and ``registers`` per thread, when
    given), lint, the bank analysis of every declared access and the ordering check
    of the plan's kernel model (run once: lint reads its findings). ``measured``: what
    :func:`smemviz.read_ncu` made of a profiled launch of the plan's kernel, drawn on
    its map and tabled in its reports beside the prediction."""
    a = plan.resolved_arch(arch)
    segments: tuple[MeasuredSegment, ...] = ()
    if measured is not None:
        if plan.memory != "smem":
            raise ValueError("measured= is Nsight Compute's shared-memory counters: it goes with the SMEM plan")
        from .ncu._overlay import as_segments

        segments = as_segments(measured)
    from .banks._access import analyse_accesses  # the bank model loads only for plans with accesses

    banks = analyse_accesses(plan) if plan.accesses else ()
    ordering = ordering_of(plan)
    return Analysed(
        plan=plan,
        arch=a.name if a is not None else None,
        capacity=plan.capacity(a),
        occupancy=plan_occupancy(plan, a, threads=threads, registers=registers),
        findings=lint_with_accesses(plan, a, banks, ordering=ordering),
        banks=banks,
        ordering=ordering,
        needs=declared_needs(plan),
        measured=segments,
    )


def as_analysed(obj: Any, arch: str | int | hardware.Arch | None = None) -> Analysed:
    """``obj`` itself when it is already analysed (and ``arch`` agrees), else the analysis of the
    plan it is or holds, on ``arch``: what every view of a plan reads."""
    if isinstance(obj, Analysed):
        if arch is not None and hardware.get_arch(arch).name != obj.arch:
            return analyse(obj.plan, arch, measured=obj.measured or None)
        return obj
    if isinstance(obj, LayoutPlan):  # judged on ``arch``, the plan kept as it is
        return analyse(obj, arch)
    from ..sources._inputs import as_plan

    return analyse(as_plan(obj, arch=arch), arch)
