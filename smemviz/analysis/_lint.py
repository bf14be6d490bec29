"""Hardware rules a layout can break, checked on a :class:`LayoutPlan`.

Each rule rests on one fact in :mod:`smemviz.hardware` and names it, so a
finding can be traced to the number behind it. A layout that breaks an
error rule hangs or reads garbage on the GPU (a misaligned swizzled TMA
buffer, an mbarrier off its 8-byte boundary) or does not launch (over
capacity); warnings cost space.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from .. import hardware
from .._names import shown
from ._finding import SEVERITIES as _SEVERITIES
from ._finding import Finding, Findings, Severity

if TYPE_CHECKING:
    from ..layout._plan import LayoutPlan
    from ..layout._tma_atom import TmaAtom
    from ..layout.ordering import OrderingModel
    from .banks._access import AnalysedAccess
    from .ordering._result import OrderingReport
    from .tma import TmaDescriptorCheck

__all__ = ["Finding", "Findings", "RULES", "lint", "align_fix", "PADDING_SHARE", "PADDING_MIN_BYTES"]

# padding is worth a warning when it is at least this share of the total and this many bytes
PADDING_SHARE = 0.10
PADDING_MIN_BYTES = 1024


@dataclass(frozen=True)
class _Context:
    plan: LayoutPlan
    arch: hardware.Arch | None
    padding_share: float
    accesses: tuple[AnalysedAccess, ...]  # the plan's declared accesses, analysed once
    ordering: tuple[Finding, ...]  # the ordering check's findings, when the plan carries a model


Rule = Callable[[_Context], list[Finding]]


def align_fix(plan: LayoutPlan, name: str, need: int, field: str | None = None) -> str:
    """The fix that aligns region ``name`` to ``need`` bytes, in the words of what declared it:
    smemviz's ``alignment=``, a ``@cute.struct``'s ``Align[..., N]``, or for a kernel captured as
    compiled the DSL allocator's ``byte_alignment=`` (or ``Align`` when it is a struct field)."""
    from ..layout._plan import CAPTURE_SOURCE, STRUCT_SOURCE

    if plan.source == STRUCT_SOURCE:
        how = f"Align[..., {need}] on the field"
    elif plan.source == CAPTURE_SOURCE:
        how = f"byte_alignment={need} in its smem.allocate_tensor/allocate_array call, or Align[..., {need}] for a struct field"
    else:
        how = f"alignment={need}"
    return f"align {shown(name)} to {need} ({field + ' or ' if field else ''}{how})"


# what silicon showed for a swizzled buffer that starts off its swizzle atom (results/swizzle_align_h200.md)
SWIZZLE_ALIGN_EVIDENCE = "H200: TMA + WGMMA correct at every 128 B start (results/swizzle_align_h200.md)"


def _swizzle_align(ctx: _Context) -> list[Finding]:
    """A swizzled buffer off its swizzle atom. Measured on the H200: TMA swizzles on the absolute
    shared-memory address and WGMMA (descriptor base offset 0) reads it back correctly at every
    128-B-aligned start, so such a start is a warning (a reader that swizzles the offset from the
    buffer's start, or a descriptor with the base offset set, sees permuted chunks); below 128 B it is
    an error (TMA cannot write there)."""
    out = []
    blackwell = ctx.arch is not None and ctx.arch.number >= 100
    for r in ctx.plan.regions:
        atom = hardware.SWIZZLE_ATOM_BYTES.get(r.swizzle or "")
        if not atom or not r.offset % atom:
            continue
        where = f"{shown(r.name)} ({r.swizzle} swizzle) starts at {r.offset:,}, not a multiple of its {atom:,} B swizzle atom"
        if r.offset % hardware.TMA_ALIGNMENT:
            out.append(
                Finding(
                    "swizzle-align",
                    "error",
                    (r.name,),
                    f"{where}, nor of the {hardware.TMA_ALIGNMENT} B a TMA destination needs",
                    align_fix(ctx.plan, r.name, atom),
                    f"hardware.SWIZZLE_ATOM_BYTES[{r.swizzle!r}] = {atom}, hardware.TMA_ALIGNMENT = "
                    f"{hardware.TMA_ALIGNMENT}",
                )
            )
            continue
        unmeasured = " (measured on Hopper; on Blackwell inferred from the PTX ISA, not measured)" if blackwell else ""
        out.append(
            Finding(
                "swizzle-align",
                "warning",
                (r.name,),
                f"{where}: TMA and WGMMA still agree there (both swizzle the absolute address; the "
                f"H200 read it correctly with the descriptor's base offset 0){unmeasured}, but an "
                f"access that swizzles the offset from the buffer's start (a hand-computed ld/st, "
                f"ldmatrix or stmatrix address), or a descriptor with the base offset set, sees its 16 B "
                f"chunks permuted",
                align_fix(ctx.plan, r.name, atom),
                f"{SWIZZLE_ALIGN_EVIDENCE}; hardware.SWIZZLE_ATOM_BYTES[{r.swizzle!r}] = {atom}",
            )
        )
    return out


def _swizzle_stage(ctx: _Context) -> list[Finding]:
    out = []
    for r in ctx.plan.regions:
        atom = hardware.SWIZZLE_ATOM_BYTES.get(r.swizzle or "")
        if not atom or not r.stages:
            continue
        if r.size % r.stages:
            out.append(
                Finding(
                    "swizzle-stage",
                    "error",
                    (r.name,),
                    f"{shown(r.name)} ({r.size:,} B) does not split into {r.stages} equal stages",
                    f"make {shown(r.name)} {r.stages} x a multiple of {atom:,} B",
                    f"hardware.SWIZZLE_ATOM_BYTES[{r.swizzle!r}] = {atom}",
                )
            )
        elif (r.size // r.stages) % atom:
            stage = r.size // r.stages
            # as swizzle-align: a 128 B multiple is what the H200 needed (results/swizzle_align_h200.md)
            aligned = not stage % hardware.TMA_ALIGNMENT
            why = (
                " (TMA and WGMMA still agree there, as measured on the H200; an access that swizzles the "
                "offset from the buffer's start does not)"
                if aligned
                else f", and off the {hardware.TMA_ALIGNMENT} B a TMA destination needs"
            )
            out.append(
                Finding(
                    "swizzle-stage",
                    "warning" if aligned else "error",
                    (r.name,),
                    f"{shown(r.name)}: each of its {r.stages} stages is {stage:,} B, not a multiple of the "
                    f"{atom:,} B {r.swizzle} swizzle atom, so stages after the first start off the atom{why}",
                    f"pad each stage of {shown(r.name)} to {-(-stage // atom) * atom:,} B or change the tile",
                    f"hardware.SWIZZLE_ATOM_BYTES[{r.swizzle!r}] = {atom}"
                    + (
                        f"; {SWIZZLE_ALIGN_EVIDENCE}"
                        if aligned
                        else f", hardware.TMA_ALIGNMENT = {hardware.TMA_ALIGNMENT}"
                    ),
                )
            )
    return out


def _tma_align(ctx: _Context) -> list[Finding]:
    need = hardware.TMA_ALIGNMENT
    out = []
    for r in ctx.plan.regions:
        if (r.tma or r.swizzle) and r.offset % need:
            out.append(
                Finding(
                    "tma-align",
                    "error",
                    (r.name,),
                    f"{shown(r.name)} is a TMA destination at offset {r.offset:,}, not {need:,} B aligned",
                    align_fix(ctx.plan, r.name, need),
                    f"hardware.TMA_ALIGNMENT = {need}",
                )
            )
    return out


def _misaligned(ctx: _Context, kind: str, rule: str, what: str, need: int, field: str, fact: str) -> list[Finding]:
    """A finding for each region of ``kind`` whose offset is not a multiple of ``need``."""
    return [
        Finding(
            rule,
            "error",
            (r.name,),
            f"{what} {shown(r.name)} at offset {r.offset:,} is not {need:,} B aligned",
            align_fix(ctx.plan, r.name, need, field),
            f"{fact} = {need}",
        )
        for r in ctx.plan.regions
        if r.kind == kind and r.offset % need
    ]


def _tma_descriptor(ctx: _Context) -> list[Finding]:
    """Each captured (or declared) TMA atom's descriptor, checked as ``cuTensorMapEncodeTiled``
    will judge it at launch: an error per broken rule, an info for what is only known at run time."""
    from .tma._enums import ELEMENT_BITS
    from .tma._rules import DOCUMENTED

    out: list[Finding] = []
    arch = ctx.arch.name if ctx.arch is not None and ctx.arch.number >= 90 else "sm_90a"
    for atom in ctx.plan.tma_atoms:
        regions = (atom.region,) if atom.region else ()
        what = f"TMA {atom.direction} {atom.label}"
        data_type = atom.data_type
        if (
            atom.unread
            or data_type is None
            or data_type not in ELEMENT_BITS
            or atom.swizzle is None
            or not atom.box_dims
        ):
            why = "; ".join(atom.unread) or "its data type, swizzle or box"
            out.append(
                Finding(
                    "tma-descriptor",
                    "info",
                    regions,
                    f"{what}: not checked, capture could not read {why}",
                    "check it with smemviz.check_tma_descriptor(...) and the launch's values",
                    DOCUMENTED,
                )
            )
            continue
        dims, strides = _static_stand_ins(atom.global_dims, atom.global_strides, atom.box_dims, data_type)
        try:
            check = check_tma_descriptor_for(atom, dims, strides, arch)
        except (TypeError, ValueError) as e:  # a value the driver could not even be handed
            out.append(Finding("tma-descriptor", "error", regions, f"{what}: {e}", _tma_fix(str(e)), DOCUMENTED))
            continue
        runtime = set(atom.runtime)
        for p in check.problems:
            if p.parameter in runtime:
                continue  # a stand-in's problem, not the kernel's
            out.append(
                Finding(
                    "tma-descriptor",
                    "error",
                    regions,
                    f"{what}: {p.parameter} = {p.value!r}: {p.rule}; the driver refuses this descriptor at launch",
                    _tma_fix(p.parameter),
                    p.source,
                )
            )
        if runtime and atom.declared:
            out.append(
                Finding(
                    "tma-descriptor",
                    "info",
                    regions,
                    f"{what}: the global tensor is not declared, so only the box {list(atom.box_dims)}, "
                    f"swizzle {atom.swizzle} and data type {atom.data_type} were checked",
                    "check the full descriptor with smemviz.check_tma_descriptor(...) and the tensor's sizes",
                    DOCUMENTED,
                )
            )
        elif runtime:
            names = ", ".join(atom.runtime)
            out.append(
                Finding(
                    "tma-descriptor",
                    "info",
                    regions,
                    f"{what}: {names} are run-time values, not checked; its box {list(atom.box_dims)}, "
                    f"swizzle {atom.swizzle} and data type {atom.data_type} were, and pass"
                    if not check.problems or all(p.parameter in runtime for p in check.problems)
                    else f"{what}: {names} are run-time values, not checked",
                    "check them at launch: smemviz.check_tma_descriptor(...) with the tensor's sizes",
                    DOCUMENTED,
                )
            )
    return out


def _tma_fix(parameter: str) -> str:
    """What to change in the kernel for a broken descriptor rule, by the parameter it names."""
    if parameter.startswith(("global_strides", "global_address")):
        return f"pad the global tensor (its rows, or its base) so that {parameter} obeys the rule"
    if parameter.startswith("global_dims"):
        return f"change the global tensor's extent so that {parameter} obeys the rule"
    if parameter.startswith(("box_dims", "swizzle", "interleave", "element_strides")):
        return f"change the TMA tile or the SMEM layout's swizzle so that {parameter} obeys the rule"
    return f"change {parameter} so that it obeys the rule"


def _static_stand_ins(
    dims: tuple[int | None, ...], strides: tuple[int | None, ...], box: tuple[int, ...], data_type: str
) -> tuple[list[int], list[int]]:
    """Run-time extents and strides replaced by values every rule accepts (the box's extent, the
    packed row rounded up to 16 B), so that the static parameters can be checked on their own."""
    from .tma._enums import ELEMENT_BITS

    full_dims = [d if d is not None else max(b, 1) for d, b in zip(dims, box, strict=False)]
    full_strides: list[int] = []
    reach = full_dims[0] * ELEMENT_BITS[data_type] // 8 if full_dims else 0
    for i, s in enumerate(strides):
        stride = s if s is not None else -(-max(reach, 1) // 16) * 16
        full_strides.append(stride)
        reach = stride * full_dims[i + 1] if i + 1 < len(full_dims) else reach
    return full_dims, full_strides


def check_tma_descriptor_for(atom: TmaAtom, dims: list[int], strides: list[int], arch: str) -> TmaDescriptorCheck:
    from .tma import check_tma_descriptor

    return check_tma_descriptor(
        atom.data_type or "",
        dims,
        strides,
        atom.box_dims,
        atom.element_strides,
        atom.interleave,
        atom.swizzle or "none",
        0,
        atom.l2_promotion or "none",
        atom.oob_fill,
        arch=arch,
    )


def _mbarrier_align(ctx: _Context) -> list[Finding]:
    return _misaligned(
        ctx,
        "barrier",
        "mbarrier-align",
        "mbarrier storage",
        hardware.MBARRIER_ALIGNMENT,
        "an Int64 field",
        "hardware.MBARRIER_ALIGNMENT",
    )


def _tmem_ptr_align(ctx: _Context) -> list[Finding]:
    return _misaligned(
        ctx,
        "tmem_ptr",
        "tmem-ptr-align",
        "TMEM-pointer slot",
        hardware.TMEM_PTR_BYTES,
        "an Int32 field",
        "hardware.TMEM_PTR_BYTES",
    )


def _capacity(ctx: _Context) -> list[Finding]:
    if ctx.arch is None:
        return [
            Finding(
                "capacity",
                "info",
                (),
                "no arch given, so the capacity was not checked",
                "pass arch= (or --arch), or set $CUTE_DSL_ARCH",
                "hardware.Arch.smem_per_block",
            )
        ]
    cap = ctx.plan.capacity(ctx.arch)
    if cap.fits:
        return []
    fact = "hardware.Arch.smem_per_block" if ctx.plan.memory == "smem" else "hardware.TMEM_COLUMNS"
    return [
        Finding(
            "capacity",
            "error",
            tuple(label for label, _, _ in cap.contributors),
            cap.message(),
            f"cut {cap.overshoot:,} {cap.unit} (fewer stages, smaller tiles, or alias buffers that are not live together)",
            f"{fact} = {cap.limit} on {cap.arch}",
        )
    ]


def _padding_share(ctx: _Context) -> list[Finding]:
    plan = ctx.plan
    total = plan.total
    if plan.memory != "smem" or not total:
        return []
    share = plan.padding / total
    if share < ctx.padding_share or plan.padding < PADDING_MIN_BYTES:
        return []
    worst = sorted(plan.regions, key=lambda r: -r.padding_before)[:3]
    names = tuple(r.name for r in worst if r.padding_before)
    return [
        Finding(
            "padding-share",
            "warning",
            names,
            f"padding is {plan.padding:,} B, {100 * share:.1f}% of the {total:,} B layout "
            f"(largest gaps before {', '.join(shown(n) for n in names) or 'the end'})",
            "declare the most-aligned buffers first, or relax alignments the hardware does not need",
            "hardware.Arch.smem_per_block (padding spends the same capacity); the share and size that make "
            "it worth a warning are assumed, a policy (results/lint_facts.md)",
        )
    ]


def _tmem_rounding(ctx: _Context) -> list[Finding]:
    plan = ctx.plan
    if plan.memory != "tmem" or not plan.data_total or plan.data_total > hardware.TMEM_COLUMNS:
        return []
    alloc = plan.tmem_alloc_columns
    wasted = alloc - plan.data_total
    if not wasted:
        return []
    return [
        Finding(
            "tmem-rounding",
            "warning",
            (),
            f"{plan.data_total} TMEM columns are used but tcgen05.alloc takes {alloc}: {wasted} columns wasted",
            f"use {alloc} columns (e.g. one more accumulator stage) or trim to {alloc // 2 if alloc > 32 else 32}",
            f"hardware.TMEM_ALLOC_MIN_COLUMNS = {hardware.TMEM_ALLOC_MIN_COLUMNS}, powers of two up to "
            f"{hardware.TMEM_ALLOC_MAX_COLUMNS}",
        )
    ]


def _bank_conflict(ctx: _Context) -> list[Finding]:
    if not ctx.accesses:
        return []
    from .banks._access import conflict_findings

    return conflict_findings(ctx.plan, ctx.accesses)


def _bank_access(ctx: _Context) -> list[Finding]:
    if not ctx.accesses:
        return []
    from .banks._access import unanalysable_findings

    return unanalysable_findings(ctx.plan, ctx.accesses)


def _ordering_findings(model: OrderingModel, report: OrderingReport | None = None) -> tuple[Finding, ...]:
    """The ordering check's findings of ``model``. Where the tracer could not read all of the
    kernel (an incomplete model: an info finding names each thing), an error may follow from
    what was not read rather than from the kernel: it is reported as a warning saying so, so a
    kernel is never failed, nor called safe, on a guess."""
    from .ordering import check_ordering
    from .ordering._check import unread_notes
    from .ordering._result import NOT_READ

    found = tuple((report if report is not None else check_ordering(model)).findings)
    missing = unread_notes(model)
    if not missing:
        return found
    notes = [f.message.removeprefix(NOT_READ) for f in found if f.message.startswith(NOT_READ)]
    found = tuple(f for f in found if not f.message.startswith(NOT_READ))  # one line for them all, below
    why = f" (the model is incomplete: {len(notes)} thing(s) not read; this may follow from them)"
    found = tuple(
        replace(f, severity="warning", message=f.message + why) if f.severity == "error" else f for f in found
    )
    more = f" and {len(notes) - 1} more" if len(notes) > 1 else ""
    summary = Finding(
        "unordered-alias",
        "info",
        (),
        f"ordering not fully read: {len(notes)} thing(s) the trace could not read, so no edge is "
        f"taken as proven there (first: {notes[0]}{more})",
        "smemviz.analysis.ordering.check_ordering(plan.ordering) lists each",
        "the mbarrier rules; a model that misses a call proves nothing about it",
    )
    return (*found, summary)


def _ordering_rule(rule_id: str) -> Rule:
    """One of the ordering check's rules: its findings, from the one check of the plan's model."""

    def check(ctx: _Context) -> list[Finding]:
        return [f for f in ctx.ordering if f.rule == rule_id]

    return check


# the ordering check's rules (smemviz.analysis.ordering), run on a plan that carries a model
ORDERING_RULES = (
    "unordered-alias",
    "proxy-fence",
    "mbarrier-arrive-count",
    "mbarrier-tx-bytes",
    "mbarrier-init",
    "mbarrier-parity",
    "tmem-lifecycle",
)

# rule id -> (severity it reports at, the check); the order is the report's order
RULES: dict[str, tuple[Severity, Rule]] = {
    "capacity": ("error", _capacity),
    "swizzle-align": ("warning", _swizzle_align),  # error below 128 B alignment
    "swizzle-stage": ("error", _swizzle_stage),  # a warning at a 128 B multiple
    "tma-align": ("error", _tma_align),
    "tma-descriptor": ("error", _tma_descriptor),
    "mbarrier-align": ("error", _mbarrier_align),
    "tmem-ptr-align": ("error", _tmem_ptr_align),
    "bank-access": ("error", _bank_access),
    "padding-share": ("warning", _padding_share),
    "tmem-rounding": ("warning", _tmem_rounding),
    "bank-conflict": ("warning", _bank_conflict),
    **{rule: ("error", _ordering_rule(rule)) for rule in ORDERING_RULES},
}


def lint(
    plan: LayoutPlan,
    arch: str | int | hardware.Arch | None = None,
    *,
    padding_share: float = PADDING_SHARE,
    ignore: tuple[str, ...] = (),
) -> Findings:
    """Check ``plan`` against every rule in :data:`RULES` (minus ``ignore``)."""
    accesses: tuple[AnalysedAccess, ...] = ()
    if plan.accesses and not {"bank-conflict", "bank-access"} <= set(ignore):
        from .banks._access import analyse_accesses

        accesses = analyse_accesses(plan)
    return lint_with_accesses(plan, arch, accesses, padding_share=padding_share, ignore=ignore)


def lint_with_accesses(
    plan: LayoutPlan,
    arch: str | int | hardware.Arch | None,
    accesses: tuple[AnalysedAccess, ...],
    *,
    padding_share: float = PADDING_SHARE,
    ignore: tuple[str, ...] = (),
    ordering: OrderingReport | None = None,
) -> Findings:
    """:func:`lint` with the plan's accesses already analysed (see :func:`smemviz.analysis.analyse`),
    and ``ordering`` the check of its ordering model, when already run."""
    unknown = [r for r in ignore if r not in RULES]
    if unknown:
        raise ValueError(f"unknown lint rule {unknown[0]!r}; rules: {', '.join(RULES)}")
    if not 0 < padding_share <= 1:
        raise ValueError(f"padding_share must be in (0, 1], got {padding_share!r}")
    ordering_found: tuple[Finding, ...] = ()
    if plan.ordering is not None and not set(ORDERING_RULES) <= set(ignore):
        ordering_found = _ordering_findings(plan.ordering, ordering)
    ctx = _Context(plan, plan.resolved_arch(arch), padding_share, accesses, ordering_found)
    found: list[Finding] = []
    for rule_id, (_, check) in RULES.items():
        if rule_id not in ignore:
            found += check(ctx)
    found.sort(key=lambda f: _SEVERITIES.index(f.severity))
    a = ctx.arch
    return Findings(tuple(found), a.name if a is not None else None)
