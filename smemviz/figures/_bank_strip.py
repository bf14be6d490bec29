"""The conflict strip on the SMEM byte map: under each region that has an access, a thin bar
coloured by its worst access (green: conflict-free, to red: 8x the ideal wavefronts and more).

Drawn as layout shapes, so a map keeps the same traces with or without accesses (the
explorer moves one live figure between layouts) and nothing is computed for a plan without
accesses.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from ..analysis.banks._access import analyse_accesses
from ..analysis.banks._tables import StripSegment, conflict_strip

if TYPE_CHECKING:
    from ..analysis.banks._patterns import AccessReport
    from ..layout._plan import LayoutPlan

__all__ = ["strip_shapes", "strip_color", "STRIP_Y"]

STRIP_Y = (-0.075, -0.02)  # band units: just under the bars, above the barrier markers
WORST_RATIO = 8.0  # wavefronts over the ideal at which the strip is fully red


def strip_color(segment: StripSegment) -> str:
    """Green for a conflict-free access, through orange, to red at :data:`WORST_RATIO` x the ideal."""
    t = (min(segment.excess_ratio, WORST_RATIO) - 1) / (WORST_RATIO - 1)
    a, b, u = (_GREEN, _ORANGE, 2 * t) if t < 0.5 else (_ORANGE, _RED, 2 * t - 1)
    r, g, bl = (round(x + u * (y - x)) for x, y in zip(a, b))
    return f"rgb({r},{g},{bl})"


_GREEN, _ORANGE, _RED = (46, 125, 50), (239, 108, 0), (198, 40, 40)


def strip_segments(plan: LayoutPlan, reports: Sequence[AccessReport] | None = None) -> tuple[StripSegment, ...]:
    """One segment per region with an analysed access, its worst one (``reports``: the
    plan's accesses already analysed, see :class:`~smemviz.analysis.Analysed`)."""
    if not plan.accesses:
        return ()
    if reports is None:
        reports = [item.report for item in analyse_accesses(plan) if item.report is not None]
    return conflict_strip(plan, list(reports))


def strip_shapes(
    plan: LayoutPlan, reports: Sequence[AccessReport] | None = None, scale: float = 1.0
) -> list[dict[str, Any]]:
    """The strip's rectangles (empty for a plan without accesses)."""
    y0, y1 = STRIP_Y
    return [
        {
            "type": "rect",
            "xref": "x",
            "yref": "y",
            "x0": s.offset,
            "x1": s.end,
            "y0": y0 * scale,
            "y1": y1 * scale,
            "fillcolor": strip_color(s),
            "line": {"width": 0},
            "layer": "above",
            "name": f"banks: {s.region}",
        }
        for s in strip_segments(plan, reports)
    ]
