"""HTML for the explorer's text panels: totals and capacity, messages, tables.

Every user-supplied string (region names, exception text) is escaped here.
"""

from __future__ import annotations

from html import escape
from typing import TYPE_CHECKING

from ..figures._style import fmt_units

if TYPE_CHECKING:
    from .._plan import LayoutPlan

__all__ = ["summary_html", "message_html", "tables_html", "usage_table_html", "MAX_TABLE_ROWS"]

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
    body = escape(text).replace("\n", "<br>")
    return f"<div class='smemviz-message smemviz-{level}' style='{_STYLES[level]}'>{body}</div>"


def _line(plan: "LayoutPlan") -> str:
    cap = plan.capacity()
    color = "#2e7d32" if cap.fits else "#c62828"
    if plan.memory == "smem":
        parts = [f"<b>SMEM</b> {fmt_units(plan.total, 'B')}"]
        parts.append(f"<span style='color:{color}'>{cap.percent:.1f}% of {escape(cap.arch)} "
                     f"({fmt_units(cap.limit, 'B')})</span>")
        parts.append(f"data {plan.data_total:,} B")
        if plan.barrier_bytes:
            parts.append(f"barriers {plan.barrier_bytes:,} B")
    else:
        parts = [f"<b>TMEM</b> {plan.data_total:,} of {cap.limit or 512} columns"]
        if plan.data_total:
            parts.append(f"tcgen05.alloc {plan.tmem_alloc_columns} cols")
    if plan.padding:
        parts.append(f"padding {fmt_units(plan.padding, plan.unit)}")
    if plan.alias_savings:
        parts.append(f"aliasing saves {fmt_units(plan.alias_savings, plan.unit)}")
    parts.append(f"{len(plan.regions)} regions")
    return " · ".join(parts)


def summary_html(smem: "LayoutPlan | None", tmem: "LayoutPlan | None") -> str:
    """Totals and capacity, one line per memory."""
    lines = [_line(p) for p in (smem, tmem) if p is not None]
    return "<div class='smemviz-summary' style='font-size:13px;line-height:1.6'>" + "<br>".join(lines) + "</div>"


MAX_TABLE_ROWS = 300  # beyond this the table lists the first rows; exports hold them all

_TH = "<th style='text-align:right;padding:2px 8px'>"
_CELL = "<td style='text-align:right;padding:1px 8px'>"


def usage_table_html(plan: "LayoutPlan", max_rows: int = MAX_TABLE_ROWS) -> str:
    """One row per region in address order (names escaped), at most ``max_rows``."""
    unit = plan.unit
    rows = []
    for r in plan.regions[:max_rows]:
        where = "" if r.group is None else f"G{r.group + 1}·P{(r.phase or 0) + 1}"
        typed = f"{escape(r.dtype)} × {r.count:,}" if r.dtype else ""
        kind = "" if r.kind == "data" else ("mbarriers" if r.kind == "barrier" else "TMEM ptr")
        rows.append(
            f"<tr><td style='text-align:left;padding:1px 8px'>{escape(r.name)}</td>{_CELL}{kind}</td>"
            f"{_CELL}{r.offset:,}</td>{_CELL}0x{r.offset:x}</td>{_CELL}{r.size:,}</td>{_CELL}{r.end:,}</td>"
            f"{_CELL}{r.alignment}</td>{_CELL}{r.padding_before:,}</td>{_CELL}{where}</td>{_CELL}{typed}</td></tr>"
        )
    more = len(plan.regions) - max_rows
    tail = (f"<div style='font-size:12px;color:#546e7a'>… and {more:,} more regions "
            "(the JSON and HTML exports list them all)</div>") if more > 0 else ""
    title = "SMEM regions" if plan.memory == "smem" else "TMEM allocations"
    head = "".join(f"{_TH}{h}</th>" for h in
                   ("kind", "offset", "hex", f"size ({unit})", "end", "align", "pad before", "group·phase", "type"))
    return (
        f"<div class='smemviz-table'><b>{title}</b>"
        "<table style='border-collapse:collapse;font-family:monospace;font-size:12px'>"
        f"<thead><tr><th style='text-align:left;padding:2px 8px'>name</th>{head}</tr></thead>"
        f"<tbody>{''.join(rows)}</tbody></table>{tail}</div>"
    )


def tables_html(smem: "LayoutPlan | None", tmem: "LayoutPlan | None") -> str:
    """The usage tables, SMEM first."""
    parts = [usage_table_html(p) for p in (smem, tmem) if p is not None]
    return "<div class='smemviz-tables'>" + "<br>".join(parts) + "</div>"
