"""The TMEM lifecycle over one run: accesses before alloc, dealloc by another warp,
columns never freed or over the arch's budget, and 2-CTA alloc/dealloc without the
cluster barrier between peers. (Accesses after or unordered with dealloc are found
with the races: dealloc counts as a write of every allocated column.)"""

from __future__ import annotations

from ...hardware import TMEM_ALLOC_MIN_COLUMNS, TMEM_COLUMNS, get_arch
from .._finding import Finding
from ._describe import role_text, who
from ._result import finding
from ._run import Run

__all__ = ["tmem_findings"]

Keyed = list[tuple[tuple[str, ...], Finding]]
RULE = "tmem-lifecycle"


def _budget(arch: str | None) -> int:
    if arch is None:
        return TMEM_COLUMNS
    a = get_arch(arch)
    return a.tmem_columns or TMEM_COLUMNS


def _columns(run: Run, arch: str | None) -> Keyed:
    out: Keyed = []
    budget = _budget(arch)
    for node, _, alloc in run.allocs:
        cols = alloc.columns
        power = cols >= TMEM_ALLOC_MIN_COLUMNS and cols & (cols - 1) == 0
        if cols > budget or not (power or cols == budget):
            msg = f"{who(run, node)} allocates {cols:,} TMEM columns; the arch allows a power of two from {TMEM_ALLOC_MIN_COLUMNS} to {budget:,}"
            out.append(
                (
                    (RULE, "columns", who(run, node)),
                    finding(RULE, "error", (), msg, "allocate a power of two of columns within the budget"),
                )
            )
    return out


def _accesses(run: Run) -> Keyed:
    out: Keyed = []
    tmem = [a for a in run.accesses if a.memory == "tmem" and a.kind != "tmem_dealloc"]
    if tmem and not run.allocs:
        msg = "the model records no TMEM allocation, so TMEM accesses are not checked against alloc"
        return [((RULE, "absent"), finding(RULE, "info", (), msg, "record tcgen05.alloc"))]
    for a in tmem:
        if not any(run.before(node, a.start) for node, _, _ in run.allocs):
            site = a.op.event.site
            msg = f"{a.region} is accessed ({a.kind} at {site}, {role_text(run, a.role)}) before TMEM is allocated"
            fix = "allocate TMEM and publish its address (barrier) before any tcgen05 access"
            out.append(((RULE, "before-alloc", str(site)), finding(RULE, "error", (a.region,), msg, fix)))
    return out


def _owners(run: Run) -> Keyed:
    out: Keyed = []
    everyone_done = all(r.done for r in run.roles)
    for node, role, _ in run.allocs:
        frees = [(d, r) for d, r, _ in run.deallocs]
        if not frees and everyone_done:
            msg = f"TMEM allocated by {who(run, node)} is not freed before the kernel exits"
            out.append(
                (
                    (RULE, "leak", who(run, node)),
                    finding(RULE, "error", (), msg, "tcgen05.dealloc the columns (same warp) before exit"),
                )
            )
        for d, r in frees:
            if role >= 0 and r != role:
                msg = f"TMEM allocated by {who(run, node)} is freed by {who(run, d)}, another warp"
                fix = "deallocate from the warp that allocated, after a barrier with every warp that used the columns"
                out.append(((RULE, "owner", who(run, node), who(run, d)), finding(RULE, "error", (), msg, fix)))
    return out


def _pairs(run: Run) -> Keyed:
    out: Keyed = []
    for node, _, alloc in run.allocs:
        if alloc.cta_group != 2:
            continue
        for d, _, _ in run.deallocs:
            if not any(run.before(node, c) and run.before(c, d) for c in run.cluster_syncs):
                msg = f"2-CTA TMEM allocated by {who(run, node)} is freed by {who(run, d)} with no cluster barrier between them"
                fix = "a cluster barrier (arrive + wait) between the alloc and the dealloc, so the peer CTA has allocated and finished"
                out.append(((RULE, "pair", who(run, node), who(run, d)), finding(RULE, "error", (), msg, fix)))
    return out


def tmem_findings(run: Run, arch: str | None) -> Keyed:
    """Every TMEM lifecycle finding of one run."""
    return _columns(run, arch) + _accesses(run) + _owners(run) + _pairs(run)
