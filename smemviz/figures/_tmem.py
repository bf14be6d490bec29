"""The TMEM column map: 128 lanes x 512 columns, each allocation a column
span across all lanes, alias phases in lanes of the group's span, and the
power-of-two column count passed to ``tcgen05.alloc`` marked."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .. import hardware
from ..analysis._analysed import Analysed, as_analysed
from ..analysis._report import summary_parts
from ..sources._inputs import as_plan
from ._alias_marks import alias_marks, ordering_source
from ._bars import AXIS_END, LABEL_Y, MIN_BAR_FRACTION, SLOT_Y, region_traces, widened
from ._spec import FigureSpec
from ._style import KIND_COLORS, map_layout

if TYPE_CHECKING:
    from ..layout._plan import LayoutPlan

__all__ = ["tmem_spec", "tmem_figure"]

LANES = hardware.TMEM_LANES
TMEM_HEIGHT_PX = 250  # one band of columns: shorter than the SMEM map's 320


def _tmem_plan(obj: Any) -> LayoutPlan | Analysed:
    """The plan ``obj`` is or holds; an analysis is kept as it is (the map reads it)."""
    plan = obj.plan if isinstance(obj, Analysed) else as_plan(obj)
    if plan.memory != "tmem":
        raise ValueError(f"tmem_figure needs a TMEM layout, got an {plan.memory.upper()} one: {plan!r}")
    return obj if isinstance(obj, Analysed) else plan


def tmem_spec(
    plan: LayoutPlan | Analysed,
    highlight: tuple[int, int] | None = None,
    colors: dict[str, str] | None = None,
    ordering_from: Analysed | None = None,
) -> FigureSpec:
    """The TMEM map of ``plan`` as plain data (see :class:`FigureSpec`), read from its
    analysis (given, or made once here); ``ordering_from``: the SMEM plan's analysis of the
    same kernel, whose ordering model places its TMEM aliases here when this plan has none."""
    an = as_analysed(plan)
    plan = an.plan
    used = plan.data_total
    columns = hardware.TMEM_COLUMNS
    span = max(used, columns)
    over = used > columns
    alloc = plan.tmem_alloc_columns if not over else 0
    state = (
        f"over the {columns} columns of a CTA by {used - columns}"
        if over
        else f"tcgen05.alloc({alloc})"
        if alloc
        else "nothing allocated"
    )
    title = f"TMEM layout: {used:,} of {columns} columns ({100.0 * used / columns:.1f}%) · {state}"
    shapes = [
        {  # columns that tcgen05.alloc reserves beyond those used
            "type": "rect",
            "xref": "x",
            "yref": "y",
            "x0": used,
            "x1": max(used, alloc),
            "y0": 0,
            "y1": LANES,
            "fillcolor": "rgba(21,101,192,0.08)",
            "line": {"width": 0},
            "layer": "below",
        },
        {  # the tcgen05.alloc column count
            "type": "line",
            "xref": "x",
            "yref": "y",
            "x0": alloc,
            "x1": alloc,
            "y0": 0,
            "y1": LANES,
            "line": {"color": KIND_COLORS["alloc"], "width": 2, "dash": "dash"},
            "visible": bool(alloc),
        },
        {  # the physical edge: 512 columns
            "type": "line",
            "xref": "x",
            "yref": "y domain",
            "x0": columns,
            "x1": columns,
            "y0": 0,
            "y1": 1,
            "line": {"color": KIND_COLORS["capacity"], "width": 2},
        },
    ]
    annotations = [
        {  # above the plot area, clear of the group labels that sit over the band,
            # and on the side of the line where it fits
            "xref": "x",
            "yref": "y domain",
            "x": alloc,
            "y": 1.0,
            "yanchor": "bottom",
            "xanchor": "right" if alloc > 0.6 * span else "left",
            "showarrow": False,
            "text": f"tcgen05.alloc {alloc} cols",
            "visible": bool(alloc),
            "font": {"color": KIND_COLORS["alloc"], "size": 12},
        },
    ]
    layout: dict[str, Any] = {
        **map_layout(title, _subtitle(plan, span), margin_left=50),
        "height": TMEM_HEIGHT_PX,
        "xaxis": {
            "title": {"text": "TMEM column"},
            "range": [0, span * AXIS_END],
            "tickvals": list(range(0, span + 1, 32 if span <= 512 else 64)),
            "showgrid": True,
            "gridcolor": "#eceff1",
            "zeroline": False,
            "showline": True,
            "linecolor": "#90a4ae",
        },
        "yaxis": {
            "title": {"text": "lane"},
            "range": [(SLOT_Y - 0.06) * LANES, (LABEL_Y + 0.13) * LANES],
            "tickvals": [0, 32, 64, 96, 128],
            "showgrid": False,
            "zeroline": False,
            "fixedrange": True,
        },
        "shapes": shapes,
        "annotations": annotations,
        "meta": {"smemviz_unit": "cols", "smemviz_min_bar": MIN_BAR_FRACTION},
    }
    short = f"TMEM {used:,} of {columns} cols ({100.0 * used / columns:.0f}%) · {state}"
    narrow = {
        "title.text": f"TMEM {used:,}/{columns} cols" + (f" · alloc {alloc}" if alloc else " · OVER" if over else ""),
        "title.subtitle.text": f"{len(plan.regions)} allocations",
    }
    findings = an.beyond_capacity  # capacity has its own line
    return FigureSpec(
        region_traces(
            plan, float(LANES), highlight, span, findings, colors, alias_marks(an, ordering_source(an, ordering_from))
        ),
        layout,
        {"alloc_columns": alloc, "span": span, "narrow": narrow, "short_title": short},
    )


def _subtitle(plan: LayoutPlan, span: float) -> str:
    parts = [f"each allocation across all {LANES} lanes", *summary_parts(plan)[1:]]
    tiny = widened(plan, span)
    if tiny:
        parts.append(f"{tiny} drawn wider (not to scale)")
    return " · ".join(parts)


def tmem_figure(obj: Any, *, highlight: tuple[int, int] | None = None) -> Any:
    """The TMEM column map of a TMEM allocator, a plan, its analysis or a computed
    CUTLASS ``TmemAllocator``. Returns a ``plotly.graph_objects.Figure``."""
    return tmem_spec(_tmem_plan(obj), highlight).to_figure()
