"""Usage tables of a :class:`LayoutPlan`: plain text (the seed's layout) and HTML."""

from __future__ import annotations

from html import escape
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ._plan import LayoutPlan

__all__ = ["text_report", "html_report", "markdown_report", "lifetime_summary"]

_KIND_MARK = {"data": "", "barrier": " [mbarrier]", "tmem_ptr": " [tmem ptr]"}


def _title(plan: LayoutPlan) -> tuple[str, str]:
    return ("smem-layout", "SMEM Usage Report") if plan.memory == "smem" else ("tmem-layout", "TMEM Usage Report")


def text_report(plan: LayoutPlan) -> str:
    """The usage table: one row per region in address order, alias groups, totals."""
    tag, title = _title(plan)
    unit = plan.unit
    with_align = plan.memory == "smem"
    labels = [r.name + (" *" if r.aliased else "") + _KIND_MARK[r.kind] for r in plan.regions]
    w = max([28, *map(len, labels)])  # the seed's 28, wider when a name needs it
    if with_align:
        hdr = f"  {'Name':<{w}} {'Size':>8}  {'Align':>5}  {'Offset':>8}  {'End':>8}"
    else:
        hdr = f"  {'Name':<{w}} {'Size':>8}  {'Offset':>8}  {'End':>8}"
    rule = f"  {'─' * (len(hdr) - 2)}"
    lines = [f"[{tag}] {title}", hdr, rule]
    for label, r in zip(labels, plan.regions):
        if with_align:
            lines.append(f"  {label:<{w}} {r.size:>8}  {r.alignment:>5}  {r.offset:>8}  {r.end:>8}")
        else:
            lines.append(f"  {label:<{w}} {r.size:>8}  {r.offset:>8}  {r.end:>8}")
    if plan.groups:
        lines.append(rule)
        for g in plan.groups:
            lines.append(f"  Alias group {g.index + 1} (offset {g.offset}, {g.size} {unit}):")
            for p in range(len(g.phase_sizes)):
                parts = ", ".join(f"{r.name} ({r.size} {unit})" for r in plan.phase_regions(g.index, p))
                lines.append(f"    Phase {p + 1}: {parts}")
    lines.append(rule)
    if plan.memory == "smem":
        lines.append(f"  Data SMEM:        {plan.data_total:>8} B")
        if plan.barrier_bytes:
            lines.append(f"  Barrier SMEM:     {plan.barrier_bytes:>8} B")
            lines.append(f"  Total SMEM:       {plan.unified_bytes:>8} B  (data + barriers)")
    lines.append(f"  Total:          {plan.data_total:>8} {unit}")
    if plan.alias_savings > 0:
        lines.append(f"  Alias savings:  {plan.alias_savings:>8} {unit}")
    if plan.padding > 0:
        lines.append(f"  Padding:        {plan.padding:>8} {unit}")
    if plan.memory == "tmem" and plan.data_total:
        lines.append(f"  tcgen05.alloc:  {plan.tmem_alloc_columns:>8} cols")
    if plan.steps:
        lines.append(f"  {lifetime_summary(plan)}")
    cap = plan.capacity()
    lines.append(f"  {cap.message()}")
    return "\n".join(lines) + "\n"


def lifetime_summary(plan: LayoutPlan) -> str:
    """One line on a layout solved from lifetimes: steps, bound, optimality."""
    proof = "optimal (proven)" if plan.optimal else f"within {plan.gap} {plan.unit} of optimal"
    return (
        f"Lifetimes over {len(plan.steps)} steps: lower bound {plan.lower_bound} {plan.unit}, "
        f"{proof} [{plan.solver}]"
    )


def markdown_report(plan: LayoutPlan) -> str:
    """The usage table as GitHub-flavoured Markdown."""
    unit = plan.unit

    def cell(text: object) -> str:
        # names are user text: no raw HTML (Markdown viewers render it), no table breaks
        return escape(str(text), quote=False).replace("|", "\\|").replace("\n", " ")

    title = "SMEM layout" if plan.memory == "smem" else "TMEM layout"
    out = [
        f"### {title}",
        "",
        f"| Name | Kind | Offset | Size ({unit}) | End | Align | Padding before | Group | Phase | Type |",
        "|---|---|---:|---:|---:|---:|---:|---:|---:|---|",
    ]
    for r in plan.regions:
        typed = f"{r.dtype} x {r.count}" if r.dtype else ""
        out.append(
            f"| {cell(r.name)} | {r.kind} | {r.offset} | {r.size} | {r.end} | {r.alignment} | "
            f"{r.padding_before} | {'' if r.group is None else r.group + 1} | "
            f"{'' if r.phase is None else r.phase + 1} | {cell(typed)} |"
        )
    out += ["", _summary(plan, html=False), ""]
    return "\n".join(out)


def _summary(plan: LayoutPlan, html: bool) -> str:
    unit = plan.unit
    parts = [f"total {plan.unified_bytes} {unit}"]
    if plan.memory == "smem" and plan.barrier_bytes:
        parts.append(f"data {plan.data_total} B + barriers {plan.barrier_bytes} B")
    if plan.alias_savings:
        parts.append(f"saved by aliasing {plan.alias_savings} {unit}")
    if plan.padding:
        parts.append(f"padding {plan.padding} {unit}")
    if plan.memory == "tmem" and plan.data_total:
        parts.append(f"tcgen05.alloc {plan.tmem_alloc_columns} cols")
    if plan.steps:
        parts.append(lifetime_summary(plan))
    parts.append(plan.capacity().message())
    text = "; ".join(parts)
    return escape(text) if html else text


def html_report(plan: LayoutPlan) -> str:
    """A compact HTML table for notebooks; every name is escaped."""
    unit = plan.unit
    rows = []
    for r in plan.regions:
        group = "" if r.group is None else f"G{r.group + 1}·P{(r.phase or 0) + 1}"
        typed = f"{r.dtype} × {r.count}" if r.dtype else ""
        rows.append(
            "<tr>"
            f"<td style='text-align:left'>{escape(r.name)}</td><td>{escape(r.kind)}</td>"
            f"<td>{r.offset}</td><td>{r.size}</td><td>{r.end}</td><td>{r.alignment}</td>"
            f"<td>{r.padding_before}</td><td>{group}</td><td>{escape(typed)}</td>"
            "</tr>"
        )
    title = "SMEM layout" if plan.memory == "smem" else "TMEM layout"
    cap = plan.capacity()
    color = "#2e7d32" if cap.fits else "#c62828"
    return (
        "<div class='smemviz-report'>"
        f"<b>{title}</b> <span style='color:{color}'>({cap.percent:.1f}% of {escape(cap.arch)})</span>"
        "<table style='border-collapse:collapse;font-family:monospace;font-size:12px'>"
        f"<thead><tr><th style='text-align:left'>Name</th><th>Kind</th><th>Offset</th><th>Size ({unit})</th>"
        "<th>End</th><th>Align</th><th>Pad before</th><th>Group</th><th>Type</th></tr></thead>"
        f"<tbody>{''.join(rows)}</tbody></table>"
        f"<div style='font-size:12px'>{_summary(plan, html=True)}</div>"
        "</div>"
    )
