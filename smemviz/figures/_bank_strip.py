"""The conflict strip on the SMEM byte map: under each region that has an access, a thin bar
coloured by its worst access (green: conflict-free, to red: 8x the ideal wavefronts and more).
With Nsight Compute's counts of a profiled launch (``Analysed.measured``), the strip splits: the
prediction in its upper half, what was measured in its lower half, each region labelled with
the verdict ("predicted 4-way, measured 4-way"; a disagreement in red: "look here").

Drawn as layout shapes, so a map keeps the same traces with or without accesses (the
explorer moves one live figure between layouts) and nothing is computed for a plan without
accesses.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from ..analysis.banks._access import analyse_accesses
from ..analysis.banks._tables import StripSegment, conflict_strip
from ._style import plain

if TYPE_CHECKING:
    from ..analysis.banks._patterns import AccessReport
    from ..analysis.ncu._overlay import MeasuredSegment
    from ..layout._plan import LayoutPlan

__all__ = ["strip_shapes", "strip_color", "measured_annotations", "STRIP_Y", "MEASURED_Y"]

STRIP_Y = (-0.075, -0.02)  # band units: just under the bars, above the barrier markers
MEASURED_Y = (STRIP_Y[0], (STRIP_Y[0] + STRIP_Y[1]) / 2)  # the strip's lower half, with measured counts
WORST_RATIO = 8.0  # wavefronts over the ideal at which the strip is fully red
LOOK_HERE = "#c62828"
AGREES = "#2e7d32"


def strip_color(segment: StripSegment) -> str:
    """Green for a conflict-free access, through orange, to red at :data:`WORST_RATIO` x the ideal."""
    return ratio_color(segment.excess_ratio)


def ratio_color(ratio: float) -> str:
    """The colour of wavefronts at ``ratio`` x the ideal (see :func:`strip_color`)."""
    t = (min(ratio, WORST_RATIO) - 1) / (WORST_RATIO - 1)
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
    plan: LayoutPlan,
    reports: Sequence[AccessReport] | None = None,
    scale: float = 1.0,
    measured: Sequence[MeasuredSegment] = (),
) -> list[dict[str, Any]]:
    """The strip's rectangles (empty for a plan without accesses or measured counts): the
    prediction, over what was measured where ``measured`` holds any."""
    y0, y1 = (MEASURED_Y[1], STRIP_Y[1]) if measured else STRIP_Y
    m0, m1 = MEASURED_Y
    measured_bars = [
        {
            "type": "rect",
            "xref": "x",
            "yref": "y",
            "x0": s.offset,
            "x1": s.end,
            "y0": m0 * scale,
            "y1": m1 * scale,
            "fillcolor": ratio_color(s.ratio),
            "line": {"width": 1.5, "color": LOOK_HERE} if s.look_here else {"width": 0},
            "layer": "above",
            "name": f"measured: {s.region}",
        }
        for s in measured
    ]
    return measured_bars + [
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


LABEL_CHAR_PX = 5.6  # a character of a verdict (10 px)
LABEL_PLOT_PX = 700  # the map width the labels are spread for (narrower maps may still overlap)
LABEL_ROW = 0.07  # band units between two rows of labels
LABEL_ROWS = 4  # labels that would overlap stack this many rows deep (more go where they overlap least)


def measured_annotations(
    measured: Sequence[MeasuredSegment], span: float = 0.0, scale: float = 1.0
) -> list[dict[str, Any]]:
    """Each measured region's verdict under its strip, a label that would overlap its neighbour a
    row lower; hovering a label gives the numbers. ``span``: the bytes the axis shows."""
    out = []
    ends: list[float] = []  # per row, where its last label ends (axis units)
    used: list[int] = [0] * LABEL_ROWS  # per row, how many labels it holds
    for s in sorted(measured, key=lambda m: ((m.offset + m.end) / 2, m.region)):
        text = f"{plain(s.region)} · " + ("ncu: " if not s.look_here else "<b>ncu</b>: ") + s.label
        width = len(text) * LABEL_CHAR_PX * max(span, s.end) / LABEL_PLOT_PX
        x = (s.offset + s.end) / 2
        left = max(0.0, x - width / 2)  # a label never starts left of the axis
        row = next((k for k, end in enumerate(ends) if end <= left), None)
        if row is None and len(ends) < LABEL_ROWS:
            row = len(ends)
            ends.append(0.0)
        elif row is None:  # every row taken here: the one whose last label ends first, then the emptiest
            row = min(range(len(ends)), key=lambda k: (ends[k], used[k]))
        ends[row] = max(ends[row], left + width)
        used[row] += 1
        out.append(
            {
                "xref": "x",
                "yref": "y",
                "x": left,
                "xanchor": "left",
                "y": (MEASURED_Y[0] - row * LABEL_ROW) * scale,
                "yanchor": "top",
                "showarrow": False,
                "text": text,
                "hovertext": plain(s.line()),
                "font": {
                    "size": 10,
                    "color": LOOK_HERE if s.look_here else AGREES if s.verdict == "agrees" else "#546e7a",
                },
                "bgcolor": "rgba(255,255,255,0.85)",
                "name": f"measured: {s.region}",
            }
        )
    return out
