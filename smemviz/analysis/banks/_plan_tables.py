"""The bank table of a plan that carries accesses, for its usage reports: one row per region and
access (instructions, wavefronts, ideal, conflicts, n-way), as text, Markdown and HTML.

An access the analysis cannot take gets a row saying so; its lint finding (``bank-access``)
says why.
"""

from __future__ import annotations

from html import escape
from typing import Any

from ..._names import shown
from ._access import AnalysedAccess, analyse_plan

__all__ = ["BANK_COLUMNS", "bank_rows", "bank_text", "bank_markdown", "bank_html"]

# (heading, right-aligned?)
BANK_COLUMNS: tuple[tuple[str, bool], ...] = (
    ("region", False),
    ("access", False),
    ("swizzle", False),
    ("warps", True),
    ("instructions", True),
    ("wavefronts", True),
    ("ideal", True),
    ("conflicts", True),
    ("n-way", True),
)
TITLE = "Bank accesses"


def _row(item: AnalysedAccess) -> dict[str, str]:
    acc, rep = item.access, item.report
    warps = f"{acc.warps[0]}x{acc.warps[1]}"
    if rep is None:
        return {
            "region": shown(acc.region),
            "access": acc.short_instruction,
            "swizzle": acc.swizzle,
            "warps": warps,
            "instructions": "-",
            "wavefronts": "-",
            "ideal": "-",
            "conflicts": "-",
            "n-way": "not analysed",
        }
    return {
        "region": shown(acc.region),
        "access": acc.short_instruction,
        "swizzle": rep.swizzle or "none",
        "warps": warps,
        "instructions": f"{rep.instructions:,}",
        "wavefronts": f"{rep.wavefronts:,}",
        "ideal": f"{rep.ideal:,}",
        "conflicts": f"{rep.conflicts:,}",
        "n-way": "1 (conflict-free)" if rep.conflict_free else f"{rep.n_way}",
    }


def analysed_items(source: Any) -> tuple[AnalysedAccess, ...]:
    """The analysed accesses of ``source``: an :class:`~smemviz.analysis.Analysed` carries
    them (``banks``); a plan is analysed here."""
    banks = getattr(source, "banks", None)
    return tuple(banks) if banks is not None else analyse_plan(source)


def bank_rows(source: Any) -> list[dict[str, str]]:
    """The table's rows, as text cells, in the order the accesses were declared
    (``source``: a plan, or its analysis)."""
    return [_row(item) for item in analysed_items(source)]


def bank_text(plan: Any, indent: str = "  ") -> list[str]:
    """The table as aligned text lines (none when the plan has no accesses)."""
    rows = bank_rows(plan)
    if not rows:
        return []
    widths = {h: max(len(h), *(len(r[h]) for r in rows)) for h, _ in BANK_COLUMNS}

    def line(cells: dict[str, str]) -> str:
        return (
            indent
            + "  ".join(
                cells[h].rjust(widths[h]) if right else cells[h].ljust(widths[h]) for h, right in BANK_COLUMNS
            ).rstrip()
        )

    return [
        f"{indent}{TITLE} (per warp instruction as ncu counts them, summed over the CTA):",
        line({h: h for h, _ in BANK_COLUMNS}),
        *(line(r) for r in rows),
    ]


def bank_markdown(plan: Any) -> list[str]:
    """The table as Markdown lines (none when the plan has no accesses)."""
    rows = bank_rows(plan)
    if not rows:
        return []

    def cell(text: str) -> str:
        return escape(text, quote=False).replace("|", "\\|").replace("\n", " ")

    out = [
        f"{TITLE}:",
        "",
        "| " + " | ".join(h for h, _ in BANK_COLUMNS) + " |",
        "|" + "|".join("---:" if right else "---" for _, right in BANK_COLUMNS) + "|",
    ]
    out += ["| " + " | ".join(cell(r[h]) for h, _ in BANK_COLUMNS) + " |" for r in rows]
    return out + [""]


def bank_html(plan: Any) -> str:
    """The table as an HTML fragment, conflicting rows marked (every name escaped); '' without accesses."""
    items = analysed_items(plan)
    if not items:
        return ""
    align = ["right" if right else "left" for _, right in BANK_COLUMNS]
    heads = "".join(f"<th style='text-align:{a}'>{escape(h)}</th>" for (h, _), a in zip(BANK_COLUMNS, align))
    body = []
    for item in items:
        row = _row(item)
        bad = item.report is None or not item.report.conflict_free
        style = " class='smemviz-bank-conflict' style='color:#c62828'" if bad else ""
        cells = "".join(
            f"<td style='text-align:{a};white-space:nowrap'>{escape(row[h])}</td>"
            for (h, _), a in zip(BANK_COLUMNS, align)
        )
        body.append(f"<tr{style}>{cells}</tr>")
    return (
        f"<div class='smemviz-banks' style='font-size:12px'><b>{TITLE}</b>"
        "<table style='border-collapse:collapse;font-family:monospace;font-size:12px'>"
        f"<thead><tr>{heads}</tr></thead><tbody>{''.join(body)}</tbody></table></div>"
    )
