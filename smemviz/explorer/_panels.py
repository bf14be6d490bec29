"""HTML for the explorer's text panels: totals and capacity, messages, tables.

Every user-supplied string (region names, exception text) is escaped here.
"""

from __future__ import annotations

from html import escape
from typing import TYPE_CHECKING

from .. import hardware
from .._names import shown
from .._units import fmt_units
from ..analysis._report import region_rows, summary_parts, table_columns
from ..figures._alias_marks import ALIAS_COLORS
from ..figures._style import FAMILY_HUES, KIND_COLORS, PALETTE, shade

if TYPE_CHECKING:
    from ..layout._plan import CapacityCheck, LayoutPlan
    from ._state import Analysis

__all__ = ["summary_html", "message_html", "tables_html", "TABLE_CSS", "usage_table_html", "key_html", "MAX_TABLE_ROWS"]

_BOX = "padding:6px 10px;border-radius:4px;margin:4px 0;font-size:13px;line-height:1.4;"
_STYLES = {
    "error": _BOX + "background:#fdecea;color:#8e1b1b;border:1px solid #f5c2c0;",
    "warning": _BOX + "background:#fff8e1;color:#6d4c00;border:1px solid #ffe08a;",
    "info": _BOX + "background:#e8f4fd;color:#0b4a6f;border:1px solid #b6dcf5;",
}


def message_html(text: str, level: str = "error", note: str = "") -> str:
    """A coloured box holding ``text`` (plain text, escaped) and a smaller
    secondary ``note`` under it; empty for no message."""
    if not text:
        return ""
    body = "<br>".join(escape(shown(line)) for line in text.split("\n"))
    if note:
        body += (
            f"<div class='smemviz-note' style='font-size:12px;opacity:0.8;margin-top:3px'>{escape(shown(note))}</div>"
        )
    return f"<div class='smemviz-message smemviz-{level}' style='{_STYLES[level]}'>{body}</div>"


_SWATCH = "display:inline-block;width:22px;height:12px;vertical-align:-1px;margin-right:5px;"
_GLYPH = "display:inline-block;width:22px;text-align:center;margin-right:5px;"


def _key_items(memory: str, plan: LayoutPlan | None = None) -> list[tuple[str, str]]:
    """(swatch HTML, meaning) pairs for one map, in the order they appear on it;
    with ``plan``, only what that map draws (stages, alias groups, padding,
    barriers and the TMEM-pointer slot when it has them)."""
    stripes = ", ".join(f"{shade(FAMILY_HUES[0], -0.28 + 0.18 * i)} {i * 25}% {(i + 1) * 25}%" for i in range(4))
    hatch = f"background:repeating-linear-gradient(45deg,#90a4ae 0 2px,{KIND_COLORS['padding']} 2px 6px)"
    lanes = (
        f"background:linear-gradient({PALETTE[7]} 0 50%, {PALETTE[4]} 50% 100%);"
        f"box-shadow:inset 0 0 0 1.5px {KIND_COLORS['group']}"
    )
    kinds = {r.kind for r in plan.regions} if plan is not None else {"barrier", "tmem_ptr"}
    items = []
    if plan is None or any((r.stages or 1) > 1 for r in plan.regions):
        items.append(
            (
                f"<span style='{_SWATCH}background:linear-gradient(90deg, {stripes})'></span>",
                "an operand's stages: one hue, darkest first",
            )
        )
    if plan is None or plan.groups:
        items.append((f"<span style='{_SWATCH}{lanes}'></span>", "alias group: one lane per phase"))
    if plan is None or plan.padding:
        items.append((f"<span style='{_SWATCH}{hatch}'></span>", "padding"))
    if plan is not None and plan.ordering is not None:  # a kernel's model: each alias over its shared bytes
        strip = (
            f"background:linear-gradient(90deg, {ALIAS_COLORS['ordered']} 0 50%, {ALIAS_COLORS['unordered']} 50% 100%)"
        )
        items.append(
            (
                f"<span style='{_SWATCH}height:4px;vertical-align:2px;{strip}'></span>",
                "alias over its shared bytes: ordered, unordered (hover: its edge; the Ordering tab)",
            )
        )
    if memory == "smem":
        if "barrier" in kinds:
            items.append((f"<span style='{_GLYPH}color:{KIND_COLORS['barrier']}'>&#9650;</span>", "pipeline mbarriers"))
        if "tmem_ptr" in kinds:
            items.append((f"<span style='{_GLYPH}color:{KIND_COLORS['tmem_ptr']}'>&#9670;</span>", "TMEM-pointer slot"))
        items.append(
            (
                f"<span style='{_SWATCH}height:0;border-top:2px dashed {KIND_COLORS['capacity']}'></span>",
                "capacity of the chosen arch",
            )
        )
    else:
        items += [
            (
                f"<span style='{_SWATCH}height:0;border-top:2px dashed {KIND_COLORS['alloc']}'></span>",
                "columns tcgen05.alloc asks for",
            ),
            (
                f"<span style='{_SWATCH}height:0;border-top:2px solid {KIND_COLORS['capacity']}'></span>",
                f"{hardware.TMEM_COLUMNS} columns",
            ),
        ]
    return items


def key_html(memory: str, plan: LayoutPlan | None = None) -> str:
    """The key under a map (the live maps have no plotly legend): what ``plan``'s
    map draws, or every item without a plan."""
    cells = "".join(
        f"<span style='margin-right:18px;white-space:nowrap'>{sw}{text}</span>" for sw, text in _key_items(memory, plan)
    )
    return (
        f"<div class='smemviz-key smemviz-key-{memory}' "
        f"style='font-size:12px;color:#37474f;margin:0 0 6px 12px;line-height:1.8'>{cells}</div>"
    )


def _line(plan: LayoutPlan, cap: CapacityCheck) -> str:
    color = "#2e7d32" if cap.fits else "#c62828"
    # "of sm_90's 232,448 B (227 KiB)": the limit's own KiB is the only bracket
    limit = fmt_units(cap.limit, plan.unit) if plan.memory == "smem" else f"{cap.limit:,} columns"
    over = "" if cap.fits else f", over by {fmt_units(cap.overshoot, plan.unit)}"
    verdict = (
        f"<span class='smemviz-{'fits' if cap.fits else 'over'}' style='color:{color}'>"
        f"{cap.percent:.1f}% of {escape(cap.arch)}'s {limit}{over}</span>"
        if cap.arch
        else "no arch given"
    )
    facts = [escape(p) for p in summary_parts(plan)]
    return " · ".join([f"<b>{plan.memory.upper()}</b> {facts[0]}", verdict, *facts[1:]])


def summary_html(analysis: Analysis) -> str:
    """Totals and capacity, one line per memory; then the occupancy and lint findings,
    all read from the one ``analysis`` of the layout on screen."""
    lines = [_line(a.plan, a.capacity) for a in (analysis.smem, analysis.tmem) if a is not None]
    if analysis.occupancy is not None:
        lines.append(f"occupancy {escape(analysis.occupancy.message())}")
    findings = analysis.findings
    items = "".join(
        f"<li class='smemviz-finding smemviz-{f.severity}' style='color:{_FINDING_COLORS[f.severity]}'>"
        f"<b>{f.severity}</b> {escape(f.rule)}: {escape(f.message)}; fix: {escape(f.fix)}</li>"
        for f in findings[:MAX_FINDINGS]
    )
    if len(findings) > MAX_FINDINGS:
        items += f"<li>... and {len(findings) - MAX_FINDINGS} more (smemviz.analysis.lint(plan) lists them all)</li>"
    listing = f"<ul class='smemviz-findings' style='margin:2px 0;padding-left:18px'>{items}</ul>" if items else ""
    return (
        "<div class='smemviz-summary' style='font-size:13px;line-height:1.6'>" + "<br>".join(lines) + listing + "</div>"
    )


MAX_FINDINGS = 20  # the panel lists this many; reports and exports list every one
_FINDING_COLORS = {"error": "#c62828", "warning": "#ef6c00", "info": "#546e7a"}


# beyond this the table lists the first rows (the box shows ~18 at a time);
# exports hold them all. A row costs the browser about 0.2 ms per update.
MAX_TABLE_ROWS = 64

# The usage tables are HTML tables whose cells never wrap (a number stays on
# one line at any width; a narrow explorer scrolls the table sideways). The
# browser lays out every row on each change, so the rows are capped and the
# styling sits in one stylesheet, put on the page once per explorer
# (TABLE_CSS): a <style> inside each update would restyle the whole page.
TABLE_CSS = (
    "<style>.smemviz-utable{border-collapse:collapse;font-family:monospace;font-size:12px;line-height:1.45}"
    ".smemviz-utable th,.smemviz-utable td{white-space:nowrap;padding:0 7px;text-align:left}"
    ".smemviz-utable th{color:#37474f;border-bottom:1px solid #cfd8dc}"
    ".smemviz-utable .n{text-align:right}"
    ".smemviz-tscroll{max-height:320px;max-width:100%;overflow:auto;background:#fafbfc;"
    "border:1px solid #eceff1;margin-top:2px}"
    # a selection slider's readout as long as its label ("most that fit", not "most that f")
    ".smemviz-explorer .widget-readout,.smemviz-explorer .jupyter-widget-readout{max-width:none;flex-shrink:0;overflow:visible}"
    "</style>"
)


def usage_table_html(plan: LayoutPlan, max_rows: int = MAX_TABLE_ROWS) -> str:
    """One row per region in address order (names escaped), at most ``max_rows``;
    for a layout solved from lifetimes a ``live`` column says when each is live.

    The column widths are set from the longest text of each column (in ``ch``
    of the monospace font), with a fixed table layout: the browser then lays
    the table out without measuring every cell.
    """
    columns = table_columns(plan)  # with when each region is live, for a layout solved from lifetimes
    head = tuple(h if h != "size" else f"size ({plan.unit})" for h, _ in columns)
    rows = region_rows(plan, plan.regions[:max_rows])
    widths = [max([len(h), *(len(row[i]) for row in rows)]) for i, h in enumerate(head)]
    numeric = [right for _, right in columns]
    cols = "".join(f"<col style='width:calc({w}ch + 14px)'>" for w in widths)
    total = f"calc({sum(widths)}ch + {14 * len(widths)}px)"
    open_cell = ["<td class=n>" if n else "<td>" for n in numeric]
    header = "".join(f"<th class=n>{escape(h)}</th>" if n else f"<th>{escape(h)}</th>" for h, n in zip(head, numeric))
    body = "".join("<tr>" + "".join(o + escape(c) for o, c in zip(open_cell, row)) + "</tr>" for row in rows)
    more = len(plan.regions) - max_rows
    tail = (
        (
            f"<div style='font-size:12px;color:#546e7a'>… and {more:,} more regions "
            "(the JSON and HTML exports list them all)</div>"
        )
        if more > 0
        else ""
    )
    title = "SMEM regions" if plan.memory == "smem" else "TMEM allocations"
    return (
        f"<div class='smemviz-table'><b>{title}</b> <span style='color:#546e7a'>({len(plan.regions):,})</span>"
        f"<div class='smemviz-tscroll'><table class='smemviz-utable' style='table-layout:fixed;width:{total}'>"
        f"<colgroup>{cols}</colgroup><thead><tr>{header}</tr></thead><tbody>{body}</tbody></table></div>{tail}</div>"
    )


def tables_html(smem: LayoutPlan | None, tmem: LayoutPlan | None) -> str:
    """The usage tables side by side (SMEM first), each scrolling on its own,
    so a short TMEM table is never pushed out of sight by a long SMEM one."""
    parts = [
        f"<div style='flex:0 1 auto;min-width:0;max-width:100%'>{usage_table_html(p)}</div>"
        for p in (smem, tmem)
        if p is not None
    ]
    return (
        "<div class='smemviz-tables' style='display:flex;flex-wrap:wrap;gap:8px 28px;align-items:flex-start'>"
        + "".join(parts)
        + "</div>"
    )
