"""What a :class:`LayoutPlan` says about itself, in words: the one-line
summary, the region table's cells, and the usage reports (plain text in the
seed's layout, Markdown, HTML). Views (figures, the explorer) take their
summary and table from here too."""

from __future__ import annotations

from collections.abc import Sequence
from html import escape
from typing import TYPE_CHECKING, Any

from .. import device
from .._names import shown
from .._units import fmt_units
from ..layout._build import byte_split
from ._analysed import Analysed, as_analysed

if TYPE_CHECKING:
    from ..layout._plan import LayoutPlan, Region

__all__ = [
    "text_report",
    "html_report",
    "markdown_report",
    "summary_parts",
    "REGION_COLUMNS",
    "region_columns",
    "region_cells",
    "table_columns",
    "region_rows",
    "live_steps",
    "lifetime_summary",
    "ordering_lines",
]

# the region table, as every view shows it: (heading, right-aligned?)
REGION_COLUMNS: tuple[tuple[str, bool], ...] = (
    ("name", False),
    ("kind", False),
    ("offset", True),
    ("hex", True),
    ("size", True),
    ("end", True),
    ("align", True),
    ("pad before", True),
    ("group·phase", False),
    ("type", False),
)
_KIND_WORD = {"data": "", "barrier": "mbarriers", "tmem_ptr": "TMEM ptr"}


SOURCE_COLUMN = ("declared at", False)  # shown when a region knows its kernel's source line (a captured kernel)
# shown for a layout solved from lifetimes: the steps each region is live in, so two
# regions at the same offset read as sharing bytes at different times, not as a mistake
LIVE_COLUMN = ("live", False)
EVERY_STEP = "every step"


def region_columns(plan: LayoutPlan) -> tuple[tuple[str, bool], ...]:
    """The columns of a table whose rows are built one by one with
    ``region_cells(r, with_source)``: :data:`REGION_COLUMNS`, and where its regions
    were read from a kernel, the line that declares each one. The whole table,
    with when each region is live, is :func:`table_columns` with :func:`region_rows`."""
    return REGION_COLUMNS + ((SOURCE_COLUMN,) if any(r.source for r in plan.regions) else ())


def table_columns(plan: LayoutPlan) -> tuple[tuple[str, bool], ...]:
    """The region table's columns for ``plan``, as every view shows it:
    :data:`REGION_COLUMNS`; for a layout solved from lifetimes, the steps each
    region is live in; where its regions were read from a kernel, the line that
    declares each one. :func:`region_rows` gives the rows to match."""
    return (
        REGION_COLUMNS
        + ((LIVE_COLUMN,) if plan.steps else ())
        + ((SOURCE_COLUMN,) if any(r.source for r in plan.regions) else ())
    )


def live_steps(r: Region, steps: Sequence[str]) -> str:
    """The steps ``r`` is live in, by name (``load, mma``); :data:`EVERY_STEP` for a
    region live throughout (barriers, the TMEM-pointer slot)."""
    if r.live is None or len(r.live) == len(steps):
        return EVERY_STEP
    return ", ".join(shown(steps[k]) for k in r.live)


def region_cells(r: Region, with_source: bool = False, steps: Sequence[str] | None = None) -> tuple[str, ...]:
    """One region's row of the table, raw text (escape it for HTML/Markdown): with
    ``steps`` (the plan's, when solved from lifetimes) the steps it is live in, with
    ``with_source`` the line that declares it. :func:`region_rows` decides both from the plan."""
    where = "" if r.group is None else f"G{r.group + 1}·P{(r.phase or 0) + 1}"
    typed = f"{shown(r.dtype)} × {r.count:,}" if r.dtype else ""
    cells: tuple[str, ...] = (
        shown(r.name),
        _KIND_WORD.get(r.kind, r.kind),
        f"{r.offset:,}",
        f"0x{r.offset:x}",
        f"{r.size:,}",
        f"{r.end:,}",
        str(r.alignment),
        f"{r.padding_before:,}",
        where,
        typed,
    )
    if steps:
        cells += (live_steps(r, steps),)
    return cells + ((shown(r.source or ""),) if with_source else ())


def region_rows(plan: LayoutPlan, regions: Sequence[Region] | None = None) -> list[tuple[str, ...]]:
    """The rows of ``regions`` (default: all of ``plan``'s), one cell per column of
    :func:`table_columns` ``(plan)``."""
    sourced = any(r.source for r in plan.regions)
    return [region_cells(r, sourced, plan.steps) for r in (plan.regions if regions is None else regions)]


def summary_parts(plan: LayoutPlan) -> list[str]:
    """The plan's one-line summary as its facts, most important first (no capacity verdict)."""
    unit = plan.unit
    if plan.memory == "smem":
        data, barriers, _ = byte_split(plan)  # data + barriers + padding = total, whatever made the plan
        parts = [f"total {fmt_units(plan.unified_bytes, unit)}", f"data {fmt_units(data, unit)}"]
        if barriers:
            parts.append(f"barriers {barriers:,} B")
    else:
        parts = [f"{plan.data_total:,} columns"]
        if plan.data_total:
            parts.append(f"tcgen05.alloc {plan.tmem_alloc_columns} columns")
    if plan.padding:
        parts.append(f"padding {fmt_units(plan.padding, unit)}")
    if plan.alias_savings:
        parts.append(f"aliasing saves {fmt_units(plan.alias_savings, unit)}")
    parts.append(f"{len(plan.regions):,} regions")
    if plan.steps:
        parts.append(lifetime_summary(plan))
    return parts


def some_names(names: Sequence[str], most: int = 6) -> str:
    """``a, b, c`` (as shown), the first ``most`` of them, then how many more."""
    more = f" and {len(names) - most} more" if len(names) > most else ""
    return ", ".join(shown(n) for n in names[:most]) + more


def lifetime_summary(plan: LayoutPlan) -> str:
    """One line on a layout solved from lifetimes: steps, bound, optimality."""
    proof = "optimal (proven)" if plan.optimal else f"within {fmt_units(plan.gap or 0, plan.unit)} of optimal"
    _, stacked = plan.pairwise_bound
    why = f" ({some_names(stacked)} stack: they meet pairwise at different steps)" if stacked else ""
    return (
        f"Lifetimes over {len(plan.steps)} steps: lower bound {fmt_units(plan.lower_bound or 0, plan.unit)}{why}, "
        f"{proof} [{plan.solver}]"
    )


_KIND_MARK = {"data": "", "barrier": " [mbarrier]", "tmem_ptr": " [tmem ptr]"}


def _title(plan: LayoutPlan) -> tuple[str, str]:
    return ("smem-layout", "SMEM Usage Report") if plan.memory == "smem" else ("tmem-layout", "TMEM Usage Report")


def text_report(plan: LayoutPlan | Analysed) -> str:
    """The usage table: one row per region in address order, alias groups, totals
    (of a plan, or of its :class:`~smemviz.analysis.Analysed` read as it is)."""
    an = as_analysed(plan)
    plan = an.plan
    tag, title = _title(plan)
    rows, rule = _text_rows(plan)
    lines = [f"[{tag}] {title}", *rows]
    if plan.groups:
        lines += [rule, *_text_groups(plan)]
    lines += [rule, *_text_totals(plan), *_text_verdicts(an)]
    if plan.accesses:
        lines += [rule, *_banks().bank_text(an)]
    if an.has_ordering:
        head, items = ordering_lines(an)
        lines += [rule, f"  {head}", *(f"    {item}" for item in items)]
    if an.measured:
        lines += [rule, f"  {measured_head(an)}", *(f"    {shown(seg.line())}" for seg in an.measured)]
    findings = an.beyond_capacity
    if findings:
        lines += [rule, *(f"  {f.line()}" for f in findings)]
    return "\n".join(lines) + "\n"


def measured_head(an: Analysed) -> str:
    """The heading of the measured section: how many regions ncu counted, how many to look at."""
    look = sum(seg.look_here for seg in an.measured)
    n = len(an.measured)
    verdict = f"{look} to look at" if look else "every modelled one as predicted"
    return f"Nsight Compute, measured / predicted: {n} region{'' if n == 1 else 's'}, {verdict}"


def measured_html(an: Analysed) -> str:
    """The measured table as HTML: a row to look at in red."""
    columns, rows = _measured_table()
    head = "".join(f"<th style='text-align:left'>{escape(c)}</th>" for c in columns)
    body = "".join(
        f"<tr class='smemviz-measured{' smemviz-look-here' if seg.look_here else ''}'"
        + (" style='color:#c62828'" if seg.look_here else "")
        + ">"
        + "".join(f"<td style='white-space:nowrap'>{escape(shown(c))}</td>" for c in row)
        + "</tr>"
        for seg, row in zip(an.measured, rows(an.measured))
    )
    return (
        f"<div class='smemviz-ncu' style='font-size:12px'><b>{escape(measured_head(an))}</b>"
        "<table style='border-collapse:collapse;font-family:monospace;font-size:12px'>"
        f"<thead><tr>{head}</tr></thead><tbody>{body}</tbody></table></div>"
    )


def _measured_table() -> tuple[tuple[str, ...], Any]:
    from .ncu._overlay import MEASURED_COLUMNS, measured_rows

    return MEASURED_COLUMNS, measured_rows


def _text_rows(plan: LayoutPlan) -> tuple[list[str], str]:
    """The header, its rule and one row per region (alignment for SMEM only), and the rule."""
    with_align = plan.memory == "smem"
    labels = [shown(r.name) + (" *" if r.aliased else "") + _KIND_MARK[r.kind] for r in plan.regions]
    w = max([28, *map(len, labels)])  # the seed's 28, wider when a name needs it
    align_head = f"  {'Align':>5}" if with_align else ""
    # a layout solved from lifetimes: when each region is live, so regions at one offset read as taking turns
    lives = [live_steps(r, plan.steps) for r in plan.regions] if plan.steps else []
    live_w = max([4, *map(len, lives)])
    live_head = f"  {'Live':<{live_w}}" if lives else ""
    hdr = f"  {'Name':<{w}} {'Size':>9}{align_head}  {'Offset':>9}  {'End':>9}{live_head}"
    rule = f"  {'─' * (len(hdr) - 2)}"
    rows = [hdr.rstrip(), rule]
    for k, (label, r) in enumerate(zip(labels, plan.regions)):
        align = f"  {r.alignment:>5,}" if with_align else ""
        live = f"  {lives[k]}" if lives else ""
        rows.append(f"  {label:<{w}} {r.size:>9,}{align}  {r.offset:>9,}  {r.end:>9,}{live}")
    return rows, rule


def _text_groups(plan: LayoutPlan) -> list[str]:
    unit = plan.unit
    lines = []
    for g in plan.groups:
        lines.append(f"  Alias group {g.index + 1} (offset {g.offset:,}, {g.size:,} {unit}):")
        for p in range(len(g.phase_sizes)):
            parts = ", ".join(f"{shown(r.name)} ({r.size:,} {unit})" for r in plan.phase_regions(g.index, p))
            lines.append(f"    Phase {p + 1}: {parts}")
    return lines


def _text_totals(plan: LayoutPlan) -> list[str]:
    """One total and what it is made of (for SMEM data, barriers and padding, which add up to
    it whatever made the plan), and what aliasing saves."""
    unit = plan.unit
    data, barriers, padding = byte_split(plan) if plan.memory == "smem" else (plan.total, 0, plan.padding)
    if plan.memory == "smem" and (barriers or padding):
        parts = [(name, n) for name, n in (("data", data), ("barriers", barriers), ("padding", padding)) if n]
        lines = [f"  {name.capitalize() + ':':<15} {n:>9,} B" for name, n in parts]
        lines.append(f"  Total:          {plan.unified_bytes:>9,} B  ({' + '.join(name for name, _ in parts)})")
    else:
        lines = [f"  Total:          {plan.total:>9,} {unit}"]
        if padding > 0:
            lines.append(f"  Padding:        {padding:>9,} {unit}")
    if plan.alias_savings > 0:
        lines.append(f"  Alias savings:  {plan.alias_savings:>9,} {unit}")
    if plan.memory == "tmem" and plan.data_total:
        lines.append(f"  tcgen05.alloc:  {plan.tmem_alloc_columns:>9,} cols")
    if plan.steps:
        lines.append(f"  {lifetime_summary(plan)}")
    return lines


def _text_verdicts(an: Analysed) -> list[str]:
    """Capacity (and where an assumed arch came from) and occupancy."""
    plan, cap = an.plan, an.capacity
    lines = [f"  {cap.message()}"]
    if plan.arch is None and cap.arch is not None:
        found = device.detect_arch()
        if found is not None and found[0].name == cap.arch:
            lines.append(f"  (arch {cap.arch} assumed from {found[1]})")
    if an.occupancy is not None:
        lines.append(f"  Occupancy {an.occupancy.message()}")
    return lines


def _banks() -> Any:
    """The bank table's module, imported when a plan carries accesses (the analysis is the heavy part)."""
    from .banks import _plan_tables

    return _plan_tables


def markdown_report(plan: LayoutPlan | Analysed) -> str:
    """The usage table as GitHub-flavoured Markdown (of a plan, or of its analysis)."""
    an = as_analysed(plan)
    plan = an.plan
    unit = plan.unit

    def cell(text: object) -> str:
        # names are user text: no raw HTML (Markdown viewers render it), no table breaks
        return escape(shown(text), quote=False).replace("|", "\\|").replace("\n", " ")

    title = "SMEM layout" if plan.memory == "smem" else "TMEM layout"
    columns = table_columns(plan)
    heads = [h if h != "size" else f"size ({unit})" for h, _ in columns]
    out = [
        f"### {title}",
        "",
        "| " + " | ".join(heads) + " |",
        "|" + "|".join("---:" if right else "---" for _, right in columns) + "|",
    ]
    for row in region_rows(plan):
        out.append("| " + " | ".join(cell(c) for c in row) + " |")
    out += ["", _summary(an), ""]
    if plan.accesses:
        out += _banks().bank_markdown(an)
    if an.has_ordering:
        head, items = ordering_lines(an)
        out += [f"{cell(head)}", "", *(f"- {cell(item)}" for item in items), ""]
    if an.measured:
        ncu_columns, ncu_rows = _measured_table()
        out += [
            cell(measured_head(an)),
            "",
            "| " + " | ".join(ncu_columns) + " |",
            "|" + "|".join("---" for _ in ncu_columns) + "|",
        ]
        out += ["| " + " | ".join(cell(c) for c in row) + " |" for row in ncu_rows(an.measured)]
        out.append("")
    findings = an.beyond_capacity
    if findings:
        out += ["Lint findings:", ""]
        out += [f"- **{f.severity}** `{f.rule}`: {cell(f.message)}; fix: {cell(f.fix)}" for f in findings]
        out.append("")
    return "\n".join(out)


def ordering_lines(an: Analysed) -> tuple[str, list[str]]:
    """The ordering section of every report: a heading (what was checked, how many aliases,
    the ordering findings in brief) and one line per alias with the edge that orders it
    (``unordered`` where none does), or per hand-over of a declared plan with the edge it
    needs. The findings themselves are listed with the lint findings."""
    found = [f for f in an.findings if f.rule in _ordering_rules()]
    counts = ", ".join(
        f"{n} {s}{'' if n == 1 else 's'}"
        for s in ("error", "warning", "info")
        if (n := sum(f.severity == s for f in found))
    )
    brief = f"ordering findings: {counts} (listed with the findings)" if found else "no ordering findings"
    if an.ordering is not None and an.plan.ordering is not None:
        aliases = an.ordering.aliases
        unordered = sum(not a.ordered for a in aliases)
        bad = f", {unordered} unordered" if unordered else ""
        head = f"Ordering of {shown(an.plan.ordering.name)}: {len(aliases)} alias{'' if len(aliases) == 1 else 'es'}{bad}; {brief}"
        return head, [f"alias {a.line()}" for a in aliases]
    needs = an.needs
    items = needs.lines() if needs is not None else []
    return (
        f"Ordering a declared plan needs (no kernel yet): {len(items)} hand-over{'' if len(items) == 1 else 's'}",
        items,
    )


def _ordering_rules() -> tuple[str, ...]:
    from ._lint import ORDERING_RULES

    return ORDERING_RULES


def _ordering_html(an: Analysed) -> str:
    head, items = ordering_lines(an)
    rows = "".join(
        f"<li class='smemviz-alias{' smemviz-error' if item.endswith(': unordered') else ''}'>{escape(item)}</li>"
        for item in items
    )
    return (
        f"<div class='smemviz-ordering' style='font-size:12px'><b>{escape(head)}</b>"
        f"<ul style='margin:2px 0'>{rows}</ul></div>"
    )


def _summary(an: Analysed) -> str:
    """The summary line, the capacity verdict and the occupancy, plain text."""
    text = " · ".join(summary_parts(an.plan)) + "; " + an.capacity.message()
    occ = an.occupancy
    return text + (f"; occupancy {occ.message()}" if occ is not None else "")


def html_report(plan: LayoutPlan | Analysed) -> str:
    """A compact HTML table for notebooks (of a plan, or of its analysis); every name is escaped."""
    an = as_analysed(plan)
    plan = an.plan
    unit = plan.unit
    columns = table_columns(plan)
    align = ["right" if right else "left" for _, right in columns]
    rows = [
        "<tr>"
        + "".join(f"<td style='text-align:{a};white-space:nowrap'>{escape(c)}</td>" for c, a in zip(row, align))
        + "</tr>"
        for row in region_rows(plan)
    ]
    heads = "".join(
        f"<th style='text-align:{a}'>{escape(h if h != 'size' else f'size ({unit})')}</th>"
        for (h, _), a in zip(columns, align)
    )
    title = "SMEM layout" if plan.memory == "smem" else "TMEM layout"
    cap = an.capacity
    color = "#2e7d32" if cap.fits else "#c62828"
    share = f"{cap.percent:.1f}% of {escape(cap.arch)}" if cap.arch else "no arch given"
    findings = "".join(
        f"<li class='smemviz-finding smemviz-{f.severity}'><b>{f.severity}</b> <code>{escape(f.rule)}</code>: "
        f"{escape(f.message)}; fix: {escape(f.fix)}</li>"
        for f in an.beyond_capacity
    )
    return (
        "<div class='smemviz-report'>"
        f"<b>{title}</b> <span style='color:{color}'>({share})</span>"
        "<table style='border-collapse:collapse;font-family:monospace;font-size:12px'>"
        f"<thead><tr>{heads}</tr></thead>"
        f"<tbody>{''.join(rows)}</tbody></table>"
        f"<div style='font-size:12px'>{escape(_summary(an))}</div>"
        + (_banks().bank_html(an) if plan.accesses else "")
        + (_ordering_html(an) if an.has_ordering else "")
        + (measured_html(an) if an.measured else "")
        + (f"<ul class='smemviz-findings' style='font-size:12px'>{findings}</ul>" if findings else "")
        + "</div>"
    )
