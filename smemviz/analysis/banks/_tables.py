"""Per-region conflict strips and the table of accesses: plain data, text and HTML (no plotly).

A strip segment covers a region's bytes on the byte map and carries the worst of
its accesses; the table has one row per region and access.
"""

from __future__ import annotations

import html
from collections.abc import Iterable
from dataclasses import dataclass

from ._advice import Advice
from ._patterns import AccessReport

__all__ = ["StripSegment", "conflict_strip", "bank_table", "bank_report_text", "bank_report_html"]


@dataclass(frozen=True)
class StripSegment:
    """One region on the byte map's conflict strip: its span and its worst access."""

    region: str
    offset: int
    end: int
    instruction: str
    n_way: int
    wavefronts: int
    ideal: int

    @property
    def excess_ratio(self) -> float:
        """Wavefronts over the ideal (1.0: conflict-free): what the strip's colour shows."""
        return self.wavefronts / self.ideal if self.ideal else 1.0


def conflict_strip(plan: object, reports: Iterable[AccessReport]) -> tuple[StripSegment, ...]:
    """One segment per region that has an access, in address order, from its worst access
    (most wavefronts over the ideal)."""
    worst: dict[str, AccessReport] = {}
    for rep in reports:
        cur = worst.get(rep.region)
        if cur is None or rep.wavefronts * cur.ideal > cur.wavefronts * rep.ideal:
            worst[rep.region] = rep
    segments = []
    for name, rep in worst.items():
        region = plan.region(name)  # type: ignore[attr-defined]
        segments.append(
            StripSegment(name, region.offset, region.end, rep.instruction, rep.n_way, rep.wavefronts, rep.ideal)
        )
    return tuple(sorted(segments, key=lambda s: (s.offset, s.region)))


COLUMNS = (
    "region",
    "access",
    "swizzle",
    "base",
    "warps",
    "instructions",
    "wavefronts",
    "ideal",
    "conflicts",
    "n-way",
    "fix",
)


def bank_table(reports: Iterable[AccessReport], advice: Iterable[Advice] = ()) -> list[dict[str, object]]:
    """One row per region and access, with the advice's swizzle and alignment where given."""
    fixes = {(a.region, a.current.instruction): a for a in advice}
    rows: list[dict[str, object]] = []
    for rep in reports:
        adv = fixes.get((rep.region, rep.instruction))
        fix = ""
        if adv is not None and not rep.conflict_free:
            fix = (
                f"{adv.swizzle} swizzle, align {adv.alignment}" if adv.swizzle else "none: the access itself conflicts"
            )
        rows.append(
            {
                "region": rep.region,
                "access": rep.instruction,
                "swizzle": rep.swizzle or "none",
                "base": rep.base,
                "warps": rep.warps,
                "instructions": rep.instructions,
                "wavefronts": rep.wavefronts,
                "ideal": rep.ideal,
                "conflicts": rep.conflicts,
                "n-way": rep.n_way if not rep.conflict_free else 1,
                "fix": fix,
            }
        )
    return rows


def bank_report_text(reports: Iterable[AccessReport], advice: Iterable[Advice] = ()) -> str:
    """The table as aligned text, then each advice in full."""
    advice = list(advice)
    rows = bank_table(reports, advice)
    if not rows:
        return "no accesses analysed"
    widths = {c: max(len(c), *(len(str(r[c])) for r in rows)) for c in COLUMNS}
    lines = ["  ".join(c.ljust(widths[c]) for c in COLUMNS)]
    lines += ["  ".join(str(r[c]).ljust(widths[c]) for c in COLUMNS) for r in rows]
    for adv in advice:
        if not adv.current.conflict_free:
            lines += ["", str(adv)]
    return "\n".join(lines)


def bank_report_html(reports: Iterable[AccessReport], advice: Iterable[Advice] = ()) -> str:
    """The table as an HTML fragment (every name escaped), conflicting rows marked."""
    advice = list(advice)
    rows = bank_table(reports, advice)
    head = "".join(f"<th>{html.escape(c)}</th>" for c in COLUMNS)
    body = []
    for r in rows:
        cls = ' class="conflict"' if r["wavefronts"] != r["ideal"] else ""
        cells = "".join(f"<td>{html.escape(str(r[c]))}</td>" for c in COLUMNS)
        body.append(f"<tr{cls}>{cells}</tr>")
    notes = "".join(
        f"<p>{html.escape(str(a))}</p>".replace("\n", "<br>") for a in advice if not a.current.conflict_free
    )
    return f'<table class="smemviz-banks"><thead><tr>{head}</tr></thead><tbody>{"".join(body)}</tbody></table>{notes}'
