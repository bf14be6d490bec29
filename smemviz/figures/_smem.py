"""The SMEM byte map: every region a labelled block along the address axis,
alias phases in lanes, padding hatched, barriers and the TMEM-pointer slot in
their own colours, and the chosen architecture's capacity as a line."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..analysis._analysed import Analysed, analyse
from ..analysis._report import summary_parts
from ..sources._inputs import as_plan
from ._bank_strip import strip_shapes
from ._bars import LABEL_Y, MIN_BAR_FRACTION, SLOT_Y, region_traces, widened
from ._spec import FigureSpec
from ._style import KIND_COLORS, fmt_units, kib_ticks, map_layout

if TYPE_CHECKING:
    from ..analysis._occupancy import Occupancy
    from ..layout._plan import LayoutPlan

__all__ = ["smem_spec", "smem_figure"]


def _smem_plan(obj: Any, arch: Any = None) -> LayoutPlan:
    plan = as_plan(obj, arch=arch)
    if plan.memory != "smem":
        raise ValueError(f"smem_figure needs an SMEM layout, got a {plan.memory.upper()} one: {plan!r}")
    return plan


def smem_spec(
    plan: LayoutPlan | Analysed,
    arch: Any = None,
    highlight: tuple[int, int] | None = None,
    colors: dict[str, str] | None = None,
) -> FigureSpec:
    """The SMEM map of ``plan`` as plain data (see :class:`FigureSpec`), read from its
    analysis (given, or made once here); ``colors`` by region name, where the regions
    are part of a larger layout."""
    if isinstance(plan, Analysed):
        an = plan if arch is None else analyse(plan.plan, arch)
    else:
        an = analyse(plan, arch)
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
    subtitle = _subtitle(plan, span)
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
        _mark_next_occupancy(an.occupancy, shapes, annotations)
    shapes += strip_shapes(plan, an.bank_reports)  # the conflict strip, where the plan carries accesses
    layout: dict[str, Any] = {
        **map_layout(title, subtitle, margin_left=30, color=None if cap.fits else KIND_COLORS["capacity"]),
        "xaxis": {
            "title": {"text": "SMEM address (ticks in KiB)"},
            "range": [0, span * 1.01],
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
    short = f"SMEM {_kib(cap.used)} of {_kib(cap.limit)} · {cap.arch} · {cap.percent:.0f}%" + (
        " · OVER" if not cap.fits else ""
    )
    meta: dict[str, Any] = {
        "capacity": cap,
        "span": span,
        "narrow": {
            "title.text": short,
            "title.subtitle.text": f"{len(plan.regions)} regions"
            + (f" · {widened(plan, span)} not to scale" if widened(plan, span) else ""),
            "annotations[0].text": f"{cap.arch} {cap.percent:.0f}%"
            + (f", +{_kib(cap.overshoot)}" if not cap.fits else ""),
        },
    }
    if cap.arch is None:  # no capacity line or label to shorten
        meta["narrow"] = {"title.subtitle.text": meta["narrow"]["title.subtitle.text"]}
    elif len(annotations) > 1:  # the occupancy label, short
        occ = an.occupancy
        if occ is not None and occ.next_smem_per_cta is not None:
            meta["narrow"]["annotations[1].text"] = f"{occ.ctas + 1} CTAs: {_kib(occ.next_smem_per_cta)}"
    findings = an.beyond_capacity  # capacity has its own line
    return FigureSpec(region_traces(plan, 1.0, highlight, span, findings, colors), layout, meta)


def _mark_next_occupancy(occ: Occupancy | None, shapes: list, annotations: list) -> None:
    """A dotted line where the layout would have to end for one more CTA per SM."""
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
    # inside the plot, at the top beside the line: under the axis it would sit on the tick labels
    annotations.append(
        {
            "xref": "x",
            "yref": "y domain",
            "x": x,
            "y": 1.0,
            "yanchor": "top",
            "xanchor": "left",
            "xshift": 3,
            "showarrow": False,
            "font": {"color": KIND_COLORS["occupancy"], "size": 11},
            "bgcolor": "rgba(255,255,255,0.8)",
            "text": f"{occ.ctas + 1} CTAs/SM: <= {fmt_units(x, 'B')}",
        }
    )


def _kib(nbytes: int) -> str:
    return f"{nbytes / 1024:.1f} KiB" if nbytes % 1024 else f"{nbytes // 1024} KiB"


def _subtitle(plan: LayoutPlan, span: float) -> str:
    parts = summary_parts(plan)[1:]  # the title already gives the total
    tiny = widened(plan, span)
    if tiny:
        parts.append(f"{tiny} tiny {'region' if tiny == 1 else 'regions'} drawn wider (not to scale)")
    return " · ".join(parts)


def smem_figure(obj: Any, arch: Any = None, *, highlight: tuple[int, int] | None = None) -> Any:
    """The SMEM byte map of an allocator, a plan or a computed CUTLASS allocator.

    ``arch`` picks the capacity line (default: the plan's own arch, else sm_90);
    ``highlight=(group, phase)`` (0-based) dims everything but that phase.
    Returns a ``plotly.graph_objects.Figure``.
    """
    return smem_spec(_smem_plan(obj, arch), arch, highlight).to_figure()
