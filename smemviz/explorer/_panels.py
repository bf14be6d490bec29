"""HTML for the explorer's text panels: totals and capacity, messages, tables.

Every user-supplied string (region names, exception text) is escaped here.
"""

from __future__ import annotations

from html import escape
from typing import TYPE_CHECKING

from .._report import html_report
from ..figures._style import fmt_units

if TYPE_CHECKING:
    from .._plan import LayoutPlan

__all__ = ["summary_html", "message_html", "tables_html"]

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


def tables_html(smem: "LayoutPlan | None", tmem: "LayoutPlan | None") -> str:
    """The usage tables (names escaped by the report), SMEM first."""
    parts = [html_report(p) for p in (smem, tmem) if p is not None]
    return "<div class='smemviz-tables'>" + "<br>".join(parts) + "</div>"
