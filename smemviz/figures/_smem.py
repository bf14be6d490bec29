"""The SMEM byte map: every region a labelled block along the address axis,
alias phases in lanes, padding hatched, barriers and the TMEM-pointer slot in
their own colours, and the chosen architecture's capacity as a line."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .._units import kib_label
from ..analysis._analysed import Analysed, as_analysed
from ..analysis._report import summary_parts
from ..sources._inputs import as_plan
from ._alias_marks import alias_marks, ordering_source
from ._bank_strip import measured_annotations, strip_shapes
from ._bars import (
    AXIS_END,
    LABEL_Y,
    MARKER_GAP,
    MIN_BAR_FRACTION,
    SLOT_Y,
    marker_xs,
    moved_markers,
    region_traces,
    widened,
)
from ._spec import FigureSpec
from ._style import KIND_COLORS, fmt_units, kib_ticks, map_layout

if TYPE_CHECKING:
    from collections.abc import Sequence

    from ..analysis._occupancy import Occupancy
    from ..analysis.ncu._overlay import MeasuredSegment
    from ..layout._plan import LayoutPlan

__all__ = ["smem_spec", "smem_figure"]


def _smem_plan(obj: Any, arch: Any = None) -> LayoutPlan:
    plan = obj.plan if isinstance(obj, Analysed) else as_plan(obj, arch=arch)
    if plan.memory != "smem":
        raise ValueError(f"smem_figure needs an SMEM layout, got a {plan.memory.upper()} one: {plan!r}")
    return plan


def smem_spec(
    plan: LayoutPlan | Analysed,
    arch: Any = None,
    highlight: tuple[int, int] | None = None,
    colors: dict[str, str] | None = None,
    ordering_from: Analysed | None = None,
) -> FigureSpec:
    """The SMEM map of ``plan`` as plain data (see :class:`FigureSpec`), read from its
    analysis (given, or made once here); ``colors`` by region name, where the regions
    are part of a larger layout; ``ordering_from``: the TMEM plan's analysis of the same
    kernel, whose ordering model places its SMEM aliases here when this plan has none."""
    an = as_analysed(plan, arch)
    plan = an.plan
    cap = an.capacity
    span = max(plan.total, cap.limit, 1)
    tickvals, ticktext = kib_ticks(span)
    color = KIND_COLORS["fits"] if cap.fits else KIND_COLORS["capacity"]
    if cap.arch is None:
        title = f"SMEM layout: {fmt_units(cap.used, 'B')} (no arch given)"
    elif cap.limit:
        title = (
            f"SMEM layout: {fmt_units(cap.used, 'B')} of {fmt_units(cap.limit, 'B')} on {cap.arch} ({cap.percent:.1f}%)"
        )
    else:
        title = f"SMEM layout: {fmt_units(cap.used, 'B')}; {cap.arch} has no SMEM"
    # for a map drawn beside or under another (layout_figure, compare_figure): no KiB asides
    short = (
        f"SMEM {cap.used:,} B of {cap.limit:,} B on {cap.arch} ({cap.percent:.1f}%)"
        if cap.arch is not None and cap.limit
        else f"SMEM {cap.used:,} B" + (" (no arch given)" if cap.arch is None else f"; {cap.arch} has no SMEM")
    )
    subtitle = _subtitle(plan, span, an.measured)
    shapes = [
        {  # the capacity line
            "type": "line",
            "xref": "x",
            "yref": "y domain",
            "x0": cap.limit,
            "x1": cap.limit,
            "y0": 0,
            "y1": 1,
            "line": {"color": KIND_COLORS["capacity"], "width": 2, "dash": "dash"},
        },
        {  # the part of the layout beyond capacity, if any
            "type": "rect",
            "xref": "x",
            "yref": "y domain",
            "x0": cap.limit,
            "x1": max(cap.limit, cap.used),
            "y0": 0,
            "y1": 1,
            "fillcolor": "rgba(198,40,40,0.12)",
            "line": {"width": 0},
            "layer": "below",
        },
    ]
    over = f", over by {fmt_units(cap.overshoot, 'B')}" if not cap.fits else ""
    annotations = [
        {
            "xref": "x",
            "yref": "y domain",
            "x": cap.limit,
            "y": 1.0,
            "yanchor": "bottom",
            "xanchor": "right" if cap.limit > 0.6 * span else "left",
            "showarrow": False,
            "text": f"{cap.arch} limit {fmt_units(cap.limit, 'B')} · {cap.percent:.1f}% used{over}",
            "font": {"color": color, "size": 12},
        },
    ]
    if cap.arch is None:  # nothing to draw a limit line for
        shapes, annotations = [], []
    else:
        _mark_next_occupancy(an.occupancy, shapes, annotations, plan, span)
    # the conflict strip, where the plan carries accesses, over what ncu measured where it was given
    shapes += strip_shapes(plan, an.bank_reports, measured=an.measured)
    annotations += measured_annotations(an.measured, span)
    layout: dict[str, Any] = {
        **map_layout(title, subtitle, margin_left=30, color=None if cap.fits else KIND_COLORS["capacity"]),
        "xaxis": {
            "title": {"text": "SMEM address (ticks in KiB)"},
            "range": [0, span * AXIS_END],
            "tickvals": tickvals,
            "ticktext": ticktext,
            "showgrid": True,
            "gridcolor": "#eceff1",
            "zeroline": False,
            "showline": True,
            "linecolor": "#90a4ae",
        },
        "yaxis": {
            "range": [SLOT_Y - 0.1, LABEL_Y + 0.13],
            "showticklabels": False,
            "showgrid": False,
            "zeroline": False,
            "fixedrange": True,
        },
        "shapes": shapes,
        "annotations": annotations,
        # for the live map when zoomed: its ticks (bytes and hex) and the minimum bar width
        "meta": {"smemviz_unit": "B", "smemviz_min_bar": MIN_BAR_FRACTION},
    }
    narrow_title = f"SMEM {kib_label(cap.used)} of {kib_label(cap.limit)} · {cap.arch} · {cap.percent:.0f}%" + (
        " · OVER" if not cap.fits else ""
    )
    meta: dict[str, Any] = {
        "capacity": cap,
        "span": span,
        "short_title": short,
        "narrow": {
            "title.text": narrow_title,
            "title.subtitle.text": f"{len(plan.regions)} regions"
            + (f" · {widened(plan, span)} not to scale" if widened(plan, span) else ""),
            "annotations[0].text": f"{cap.arch} {cap.percent:.0f}%"
            + (f", +{kib_label(cap.overshoot)}" if not cap.fits else ""),
        },
    }
    if cap.arch is None:  # no capacity line or label to shorten
        meta["narrow"] = {"title.subtitle.text": meta["narrow"]["title.subtitle.text"]}
    elif len(annotations) > 1:  # the occupancy label, short
        occ = an.occupancy
        if occ is not None and occ.next_smem_per_cta is not None:
            meta["narrow"]["annotations[1].text"] = f"{occ.ctas + 1} CTAs: {kib_label(occ.next_smem_per_cta)}"
    if an.measured:  # Nsight Compute's counts as drawn: for readers of the figure's data
        meta["measured"] = [seg.to_dict() for seg in an.measured]
    findings = an.beyond_capacity  # capacity has its own line
    marks = alias_marks(an, ordering_source(an, ordering_from))
    traces = region_traces(plan, 1.0, highlight, span, findings, colors, marks)
    return FigureSpec(traces, layout, meta)


OCCUPANCY_CHAR_PX = 6.5  # a character of the occupancy label (11 px)
OCCUPANCY_PLOT_PX = 520  # the narrowest map its full text is drawn on (560 px wide, as side by side)


def _mark_next_occupancy(occ: Occupancy | None, shapes: list, annotations: list, plan: LayoutPlan, span: float) -> None:
    """A dotted line where the layout would have to end for one more CTA per SM,
    labelled at the foot of the plot, under the band: above it sit the alias
    group labels and the capacity label, under the axis the tick labels. The
    label reads leftwards from its line, or rightwards where a barrier or
    TMEM-pointer marker is in the way on that side."""
    if occ is None or occ.ctas == 0 or occ.next_smem_per_cta is None:
        return
    x = occ.next_smem_per_cta
    shapes.append(
        {
            "type": "line",
            "xref": "x",
            "yref": "y domain",
            "x0": x,
            "x1": x,
            "y0": 0,
            "y1": 1,
            "line": {"color": KIND_COLORS["occupancy"], "width": 1, "dash": "dot"},
        }
    )
    text = f"{occ.ctas + 1} CTAs/SM: <= {fmt_units(x, 'B')}"
    reach = (len(text) * OCCUPANCY_CHAR_PX + 6) * span * AXIS_END / OCCUPANCY_PLOT_PX
    half = MARKER_GAP * span / 2  # half a marker and a little
    small = [r for r in plan.regions if r.kind in ("barrier", "tmem_ptr")]
    # each marker and its leader: from where it is drawn to its bytes
    spans = [(min(d, r.offset) - half, max(d, r.offset + r.size) + half) for r, d in zip(small, marker_xs(small, span))]
    left_blocked = x - reach < 0 or any(a < x and b > x - reach for a, b in spans)
    right = left_blocked and not any(a < x + reach and b > x for a, b in spans)
    annotations.append(
        {
            "xref": "x",
            "yref": "y domain",
            "x": x,
            "y": 0.0,
            "yanchor": "bottom",
            "xanchor": "left" if right else "right",
            "xshift": 3 if right else -3,
            "showarrow": False,
            "font": {"color": KIND_COLORS["occupancy"], "size": 11},
            "bgcolor": "rgba(255,255,255,0.8)",
            "text": text,
        }
    )


def _subtitle(plan: LayoutPlan, span: float, measured: Sequence[MeasuredSegment] = ()) -> str:
    parts = summary_parts(plan)[1:]  # the title already gives the total
    if measured:
        look = sum(s.look_here for s in measured)
        parts.append(
            f"Nsight Compute: {len(measured)} region{'' if len(measured) == 1 else 's'} measured, "
            + (
                f"{look} to look at"
                if look
                else "as predicted"
                if all(s.modelled for s in measured)
                else "none conflicting"
            )
        )
    tiny = widened(plan, span)
    if tiny:
        parts.append(f"{tiny} tiny {'region' if tiny == 1 else 'regions'} drawn wider (not to scale)")
    moved = moved_markers(plan, span)
    if moved:
        parts.append(
            f"{moved} {'marker' if moved == 1 else 'markers'} drawn apart from {'its' if moved == 1 else 'their'} "
            "bytes (a line leads to them)"
        )
    return " · ".join(parts)


def smem_figure(obj: Any, arch: Any = None, *, highlight: tuple[int, int] | None = None) -> Any:
    """The SMEM byte map of an allocator, a plan, its analysis or a computed CUTLASS allocator.

    ``arch`` picks the capacity line (default: the plan's own arch, else sm_90);
    ``highlight=(group, phase)`` (0-based) dims everything but that phase.
    Returns a ``plotly.graph_objects.Figure``.
    """
    plan = _smem_plan(obj, arch)
    return smem_spec(obj if isinstance(obj, Analysed) else plan, arch, highlight).to_figure()
