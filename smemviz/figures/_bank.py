"""The bank view: where each SMEM region starts among the 32 four-byte banks.

Regions that start on the same bank and are read together by one warp
conflict; 128-byte-aligned regions all start at bank 0.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .. import hardware
from ._smem import _smem_plan
from ._spec import FigureSpec
from ._style import FONT, KIND_COLORS, plain, region_colors

if TYPE_CHECKING:
    from ..layout._plan import LayoutPlan

__all__ = ["bank_spec", "bank_figure"]

MAX_NAMED_ROWS = 48  # beyond this, names only on hover


def bank_spec(plan: LayoutPlan) -> FigureSpec:
    banks = hardware.SMEM_BANKS
    row_bytes = banks * hardware.SMEM_BANK_BYTES
    regions = [r for r in plan.regions if r.size]
    n = len(regions)
    starts = [hardware.bank_of(r.offset) for r in regions]
    rows = list(range(n))
    hover = [
        f"<b>{plain(r.name)}</b><br>offset {r.offset:,} (0x{r.offset:x})<br>starts in bank {b}, "
        f"byte {r.offset % hardware.SMEM_BANK_BYTES} of it<br>offset mod {row_bytes} = {r.offset % row_bytes}"
        for r, b in zip(regions, starts)
    ]
    same_as_map = region_colors(r.name for r in plan.regions if r.kind == "data")
    colors = [KIND_COLORS[r.kind] if r.kind != "data" else same_as_map[r.name] for r in regions]
    trace = {
        "type": "scatter",
        "mode": "markers",
        "name": "region start",
        "meta": "starts",
        "x": starts,
        "y": rows,
        "hovertext": hover,
        "hovertemplate": "%{hovertext}<extra></extra>",
        "marker": {"color": colors, "size": 11, "symbol": "square", "line": {"width": 1, "color": "white"}},
        "showlegend": False,
    }
    at_zero = sum(1 for b in starts if b == 0)
    named = n <= MAX_NAMED_ROWS
    layout: dict[str, Any] = {
        "title": {
            "text": f"Starting bank of each region ({banks} banks of {hardware.SMEM_BANK_BYTES} B)",
            "subtitle": {"text": f"{at_zero} of {n} regions start at bank 0", "font": {"size": 12, "color": "#546e7a"}},
            "x": 0.01,
            "xanchor": "left",
        },
        "height": int(min(900, max(260, 120 + 18 * n))),
        "margin": {"l": 160 if named else 50, "r": 20, "t": 80, "b": 50},
        "font": {"family": FONT, "size": 12},
        "plot_bgcolor": "white",
        "paper_bgcolor": "white",
        "xaxis": {
            "title": {"text": "bank"},
            "range": [-0.7, banks - 0.3],
            "dtick": 1,
            "tick0": 0,
            "showgrid": True,
            "gridcolor": "#eceff1",
            "zeroline": False,
        },
        "yaxis": {
            "autorange": "reversed",
            "showgrid": False,
            "zeroline": False,
            "tickvals": rows if named else None,
            "ticktext": [plain(r.name) for r in regions] if named else None,
            "showticklabels": named,
            "title": {"text": "" if named else "region (address order)"},
        },
        "hovermode": "closest",
        "hoverlabel": {"font": {"family": FONT, "size": 12}, "align": "left"},
    }
    return FigureSpec([trace], layout, {"starts": starts})


def bank_figure(obj: Any) -> Any:
    """Where each region of an SMEM layout starts among the 32 banks.
    Returns a ``plotly.graph_objects.Figure``."""
    return bank_spec(_smem_plan(obj)).to_figure()
