"""The accesses a plan carries (:class:`smemviz.layout.SmemAccess`, plain data), analysed:
the atom each record's instruction makes, its report and advice, and the lint finding of
each conflicting access, so that ``plan.lint`` and ``smemviz check`` report it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from ..._dtypes import dtype_width
from ..._limits import MAX_PLAN_INSTRUCTIONS
from ...layout._access import ACCESS_KEYS, SmemAccess
from ...layout._access import access_from_dict as _record_from_dict
from .._finding import Finding
from ._advice import Advice, advise
from ._patterns import AccessAtom, AccessReport, analyze_access, instruction_atom

__all__ = [
    "AccessSpec",
    "access_from_dict",
    "access_atom",
    "analyse_declared",
    "advise_declared",
    "bank_findings",
    "conflict_findings",
    "unanalysable_findings",
    "BANK_ACCESS_RULE",
    "AnalysedAccess",
    "analyse_plan",
    "ACCESS_KEYS",
    "BANK_RULE",
    "BANK_FACT",
]

AccessSpec = SmemAccess  # the record is the model's; this name stays for code written against it
BANK_RULE = "bank-conflict"
BANK_FACT = (
    "hardware.SMEM_BANKS = 32 banks of hardware.SMEM_BANK_BYTES = 4 B; the H200 calibration in "
    "results/bank_calibration.csv (ncu wavefronts and conflicts per warp instruction)"
)


def access_from_dict(data: Mapping[str, Any], region: str | None = None) -> SmemAccess:
    """An access record from a table (see :func:`smemviz.layout._access.access_from_dict`)."""
    return _record_from_dict(data, region)


def _element_bytes(plan: Any, acc: SmemAccess) -> tuple[Any, int]:
    region = plan.region(acc.region)
    dtype = acc.dtype or region.dtype
    if dtype is None:
        raise ValueError(f"access of {acc.region!r}: the region has no dtype; give the access a 'dtype'")
    return dtype, dtype_width(dtype) // 8


def access_atom(acc: SmemAccess, element_bytes: int) -> AccessAtom:
    """The warp instruction's footprint for ``acc`` over elements of ``element_bytes``."""
    return instruction_atom(acc.instruction, element_bytes, acc.threads)


def analyse_declared(plan: Any, acc: SmemAccess, *, swizzle: object = None) -> AccessReport:
    """The report of one record on ``plan`` (``swizzle`` overrides the record's: what-if)."""
    dtype, eb = _element_bytes(plan, acc)
    swz = acc.swizzle if swizzle is None else swizzle
    return analyze_access(
        plan,
        str(acc.region),
        access_atom(acc, eb),
        layout=acc.layout,
        dtype=dtype,
        swizzle=swz,
        warps=acc.warps,
        stage=acc.stage,
    )


def advise_declared(plan: Any, acc: SmemAccess) -> Advice:
    """:func:`advise` for one record."""
    dtype, eb = _element_bytes(plan, acc)
    return advise(
        plan,
        str(acc.region),
        access_atom(acc, eb),
        layout=acc.layout,
        dtype=dtype,
        warps=acc.warps,
        stage=acc.stage,
        swizzle=acc.swizzle,
    )


@dataclass(frozen=True)
class AnalysedAccess:
    """One record of a plan with what the analysis made of it: its report and advice, or why it
    could not be analysed (``error``)."""

    access: SmemAccess
    report: AccessReport | None
    advice: Advice | None
    error: str | None = None


def analyse_plan(plan: Any) -> tuple[AnalysedAccess, ...]:
    """Every access the plan carries, analysed; a record the analysis refuses (a tile past its
    region, a layout the atom does not divide) is kept with its error rather than raised.

    Nothing is kept between calls: a view reads the analysis made once for it
    (:func:`smemviz.analysis.analyse`), so no view repeats this."""
    if not getattr(plan, "accesses", ()):
        return ()
    return _analyse(plan)


def analyse_accesses(plan: Any) -> tuple[AnalysedAccess, ...]:
    """The same as :func:`analyse_plan`: the name :func:`smemviz.analysis.analyse` calls."""
    return analyse_plan(plan)


def _analyse(plan: Any) -> tuple[AnalysedAccess, ...]:
    out = []
    walked = 0  # warp instructions analysed so far: a plan may not make the analysis walk without end
    for acc in getattr(plan, "accesses", ()):
        if walked > MAX_PLAN_INSTRUCTIONS:
            why = (
                f"the plan's accesses before it already take more than {MAX_PLAN_INSTRUCTIONS} warp "
                f"instructions, as many as one plan is analysed for"
            )
            out.append(AnalysedAccess(acc, None, None, why))
            continue
        try:
            rep = analyse_declared(plan, acc)
            adv = None if rep.conflict_free else advise_declared(plan, acc)
        except (TypeError, ValueError, KeyError) as exc:
            out.append(AnalysedAccess(acc, None, None, str(exc).strip("\"'")))
            continue
        walked += rep.instructions * (1 if adv is None else 4)  # advice walks up to three swizzles more
        out.append(AnalysedAccess(acc, rep, adv))
    return tuple(out)


def _fix(adv: Advice) -> str:
    if adv.fixes:
        return f"{adv.swizzle} swizzle on a {adv.alignment}-byte boundary: {adv.allocation_line}; {adv.dsl_line}"
    if adv.swizzle:
        return (
            f"{adv.swizzle} swizzle on a {adv.alignment}-byte boundary cuts it to {adv.best.n_way}-way; "
            f"the rest is the access itself"
        )
    return "no swizzle helps: " + adv.reason


def _finding(acc: SmemAccess, rep: AccessReport, adv: Advice) -> Finding:
    message = (
        f"{acc.short_instruction} on {acc.region!r} is {rep.n_way}-way: {rep.wavefronts} wavefronts where "
        f"{rep.ideal} would do ({rep.instructions} instructions, {rep.conflicts} conflicts as ncu counts)"
    )
    return Finding(BANK_RULE, "warning", (str(acc.region),), message, _fix(adv), BANK_FACT)


def bank_findings(plan: Any, accesses: Iterable[SmemAccess]) -> tuple[Finding, ...]:
    """A warning for each access that conflicts, its fix taken from :func:`advise` (raises what
    the analysis refuses)."""
    out = []
    for acc in accesses:
        rep = analyse_declared(plan, acc)
        if not rep.conflict_free:
            out.append(_finding(acc, rep, advise_declared(plan, acc)))
    return tuple(out)


BANK_ACCESS_RULE = "bank-access"


def conflict_findings(plan: Any, items: tuple[AnalysedAccess, ...] | None = None) -> list[Finding]:
    """The ``bank-conflict`` lint rule: a warning per conflicting access the plan carries
    (``items``: the plan's accesses already analysed)."""
    return [
        _finding(item.access, item.report, item.advice)
        for item in (analyse_plan(plan) if items is None else items)
        if item.report is not None and item.advice is not None
    ]


def unanalysable_findings(plan: Any, items: tuple[AnalysedAccess, ...] | None = None) -> list[Finding]:
    """The ``bank-access`` lint rule: an error per access the analysis cannot take (it describes
    a tile its region does not hold), so a wrong declaration is not read as conflict-free."""
    return [
        Finding(
            BANK_ACCESS_RULE,
            "error",
            (str(item.access.region),),
            f"{item.access.short_instruction} on {item.access.region!r} cannot be analysed: {item.error}",
            "make the access's layout, dtype, warps and stage describe the region's tile",
            BANK_FACT,
        )
        for item in (analyse_plan(plan) if items is None else items)
        if item.error is not None
    ]
