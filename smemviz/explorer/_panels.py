"""HTML for the explorer's text panels: totals and capacity, messages, tables.

Every user-supplied string (region names, exception text) is escaped here.
"""

from __future__ import annotations

from html import escape
from typing import TYPE_CHECKING

from .. import hardware
from .._names import shown
from .._report import REGION_COLUMNS, region_cells, summary_parts
from .._units import fmt_units
from ..figures._style import KIND_COLORS, PALETTE

if TYPE_CHECKING:
    from .._plan import LayoutPlan

__all__ = ["summary_html", "message_html", "tables_html", "usage_table_html", "key_html", "MAX_TABLE_ROWS"]

_BOX = "padding:6px 10px;border-radius:4px;margin:4px 0;font-size:13px;line-height:1.4;"
_STYLES = {
    "error": _BOX + "background:#fdecea;color:#8e1b1b;border:1px solid #f5c2c0;",
    "warning": _BOX + "background:#fff8e1;color:#6d4c00;border:1px solid #ffe08a;",
    "info": _BOX + "background:#e8f4fd;color:#0b4a6f;border:1px solid #b6dcf5;",
}


def message_html(text: str, level: str = "error") -> str:
    """A coloured box holding ``text`` (plain text, escaped); empty for no message."""
    if not text:
        return ""
    body = "<br>".join(escape(shown(line)) for line in text.split("\n"))
    return f"<div class='smemviz-message smemviz-{level}' style='{_STYLES[level]}'>{body}</div>"


_SWATCH = "display:inline-block;width:22px;height:12px;vertical-align:-1px;margin-right:5px;"
_GLYPH = "display:inline-block;width:22px;text-align:center;margin-right:5px;"


def _key_items(memory: str) -> list[tuple[str, str]]:
    """(swatch HTML, meaning) pairs for one map, in the order they appear on it."""
    stripes = ", ".join(f"{c} {i * 33}% {(i + 1) * 33}%" for i, c in enumerate(PALETTE[:3]))
    hatch = (f"background:repeating-linear-gradient(45deg,#90a4ae 0 2px,{KIND_COLORS['padding']} 2px 6px)")
    lanes = (f"background:linear-gradient({PALETTE[7]} 0 50%, {PALETTE[4]} 50% 100%);"
             f"box-shadow:inset 0 0 0 1.5px {KIND_COLORS['group']}")
    items = [
        (f"<span style='{_SWATCH}background:linear-gradient(90deg, {stripes})'></span>", "regions, a colour each"),
        (f"<span style='{_SWATCH}{lanes}'></span>", "alias group: one lane per phase"),
        (f"<span style='{_SWATCH}{hatch}'></span>", "padding"),
    ]
    if memory == "smem":
        items += [
            (f"<span style='{_GLYPH}color:{KIND_COLORS['barrier']}'>&#9650;</span>", "pipeline mbarriers"),
            (f"<span style='{_GLYPH}color:{KIND_COLORS['tmem_ptr']}'>&#9670;</span>", "TMEM-pointer slot"),
            (f"<span style='{_SWATCH}height:0;border-top:2px dashed {KIND_COLORS['capacity']}'></span>",
             "capacity of the chosen arch"),
        ]
    else:
        items += [
            (f"<span style='{_SWATCH}height:0;border-top:2px dashed {KIND_COLORS['alloc']}'></span>",
             "columns tcgen05.alloc asks for"),
            (f"<span style='{_SWATCH}height:0;border-top:2px solid {KIND_COLORS['capacity']}'></span>",
             f"{hardware.TMEM_COLUMNS} columns"),
        ]
    return items


def key_html(memory: str) -> str:
    """The fixed key under a map (the live maps have no plotly legend)."""
    cells = "".join(f"<span style='margin-right:18px;white-space:nowrap'>{sw}{text}</span>"
                    for sw, text in _key_items(memory))
    return (f"<div class='smemviz-key smemviz-key-{memory}' "
            f"style='font-size:12px;color:#37474f;margin:0 0 6px 12px;line-height:1.8'>{cells}</div>")


def _line(plan: LayoutPlan) -> str:
    cap = plan.capacity()
    color = "#2e7d32" if cap.fits else "#c62828"
    limit = fmt_units(cap.limit, plan.unit) if plan.memory == "smem" else f"{cap.limit} columns"
    verdict = (f"<span style='color:{color}'>{cap.percent:.1f}% of {escape(cap.arch)} ({limit})</span>"
               if cap.arch else "no arch given")
    facts = [escape(p) for p in summary_parts(plan)]
    return " · ".join([f"<b>{plan.memory.upper()}</b> {facts[0]}", verdict, *facts[1:]])


def summary_html(smem: LayoutPlan | None, tmem: LayoutPlan | None) -> str:
    """Totals and capacity, one line per memory; then the occupancy and lint findings."""
    lines = [_line(p) for p in (smem, tmem) if p is not None]
    if smem is not None and (occ := smem.occupancy()) is not None:
        lines.append(f"occupancy {escape(occ.message())}")
    findings = [f for p in (smem, tmem) if p is not None for f in p.lint() if f.rule != "capacity"]
    items = "".join(
        f"<li class='smemviz-finding smemviz-{f.severity}' style='color:{_FINDING_COLORS[f.severity]}'>"
        f"<b>{f.severity}</b> {escape(f.rule)}: {escape(f.message)}; fix: {escape(f.fix)}</li>"
        for f in findings[:MAX_FINDINGS]
    )
    if len(findings) > MAX_FINDINGS:
        items += f"<li>... and {len(findings) - MAX_FINDINGS} more (plan.lint() lists them all)</li>"
    listing = f"<ul class='smemviz-findings' style='margin:2px 0;padding-left:18px'>{items}</ul>" if items else ""
    return ("<div class='smemviz-summary' style='font-size:13px;line-height:1.6'>" + "<br>".join(lines)
            + listing + "</div>")


MAX_FINDINGS = 20  # the panel lists this many; reports and exports list every one
_FINDING_COLORS = {"error": "#c62828", "warning": "#ef6c00", "info": "#546e7a"}


MAX_TABLE_ROWS = 300  # beyond this the table lists the first rows; exports hold them all

# The usage tables are preformatted text, not <table> elements: the browser
# parses and lays out a 200-row HTML table in ~60 ms on every change, a block
# of aligned monospace text in a few ms. Columns are padded on the raw text
# and escaped afterwards, so an escaped name still takes its visible width.
_HEAD_STYLE = "font-weight:bold;color:#37474f"
_PRE_STYLE = ("margin:2px 0 0 0;font-family:monospace;font-size:12px;line-height:1.45;"
              "max-height:320px;overflow:auto;background:#fafbfc;padding:4px 8px;border:1px solid #eceff1")


def usage_table_html(plan: LayoutPlan, max_rows: int = MAX_TABLE_ROWS) -> str:
    """One line per region in address order (names escaped), at most ``max_rows``."""
    head = tuple(h if h != "size" else f"size ({plan.unit})" for h, _ in REGION_COLUMNS)
    rows = [region_cells(r) for r in plan.regions[:max_rows]]
    widths = [max(len(h), *(len(row[i]) for row in rows)) if rows else len(h) for i, h in enumerate(head)]
    right = [r for _, r in REGION_COLUMNS]

    def line(cells: tuple[str, ...]) -> str:
        return "  ".join(c.rjust(w) if r else c.ljust(w) for c, w, r in zip(cells, widths, right)).rstrip()

    body = "\n".join(escape(line(row)) for row in rows)
    more = len(plan.regions) - max_rows
    tail = (f"<div style='font-size:12px;color:#546e7a'>… and {more:,} more regions "
            "(the JSON and HTML exports list them all)</div>") if more > 0 else ""
    title = "SMEM regions" if plan.memory == "smem" else "TMEM allocations"
    return (
        f"<div class='smemviz-table'><b>{title}</b> <span style='color:#546e7a'>({len(plan.regions):,})</span>"
        f"<pre style='{_PRE_STYLE}'><span style='{_HEAD_STYLE}'>{escape(line(head))}</span>\n{body}</pre>"
        f"{tail}</div>"
    )


def tables_html(smem: LayoutPlan | None, tmem: LayoutPlan | None) -> str:
    """The usage tables side by side (SMEM first), each scrolling on its own,
    so a short TMEM table is never pushed out of sight by a long SMEM one."""
    parts = [f"<div style='flex:0 1 auto;min-width:0'>{usage_table_html(p)}</div>" for p in (smem, tmem) if p is not None]
    return ("<div class='smemviz-tables' style='display:flex;flex-wrap:wrap;gap:8px 28px;align-items:flex-start'>"
            + "".join(parts) + "</div>")
