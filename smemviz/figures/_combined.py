"""Both maps stacked in one figure, for static diagrams (HTML, SVG, PNG, PDF)."""

from __future__ import annotations

from typing import Any

from ..analysis._analysed import Analysed, as_analysed
from ..sources._inputs import as_plan
from ._smem import smem_spec
from ._spec import FigureSpec, require_plotly
from ._tmem import tmem_spec

__all__ = ["layout_figure", "lift_titles"]

# Each map's own title is lifted clear of the row its capacity (or tcgen05.alloc)
# label takes just above the plot, so neither prints over the other.
TITLE_LIFT_PX = 22


def lift_titles(annotations: Any) -> list:
    """make_subplots' subplot titles, left-aligned and lifted over the label row."""
    return [a.update(x=0, xanchor="left", yshift=TITLE_LIFT_PX) for a in annotations]


def _moved(spec: FigureSpec, row: int) -> tuple[list[dict[str, Any]], dict[str, Any], dict[str, Any], list, list]:
    """The spec's traces, axes, shapes and annotations moved onto subplot ``row``."""
    suffix = "" if row == 1 else str(row)
    traces = [
        {
            **t,
            "xaxis": f"x{suffix}",
            "yaxis": f"y{suffix}",
            "legendgroup": t.get("meta"),
            "showlegend": bool(t.get("showlegend")) and row == 1,
        }
        for t in spec.traces
    ]

    def ref(shape: dict[str, Any]) -> dict[str, Any]:
        out = dict(shape)
        out["xref"] = f"x{suffix}"
        out["yref"] = shape["yref"].replace("y", f"y{suffix}", 1)
        return out

    lay = spec.layout
    return (
        traces,
        dict(lay["xaxis"]),
        dict(lay["yaxis"]),
        [ref(s) for s in lay.get("shapes", [])],
        [ref(a) for a in lay.get("annotations", [])],
    )


def layout_figure(smem_plan: Any = None, tmem_plan: Any = None, arch: Any = None) -> Any:
    """One figure with the SMEM map above the TMEM map (either may be omitted).

    Accepts plans, allocators or computed CUTLASS allocators. No LaTeX, so
    static export needs no network.
    """
    parts: list[tuple[FigureSpec, str]] = []
    smem = tmem = None
    if smem_plan is not None:
        smem = as_analysed(smem_plan if isinstance(smem_plan, Analysed) else as_plan(smem_plan, arch=arch), arch)
    if tmem_plan is not None:
        tmem = as_analysed(tmem_plan if isinstance(tmem_plan, Analysed) else as_plan(tmem_plan))
    if smem is not None:  # each map shows the aliases of its memory, from whichever plan carries the model
        spec = smem_spec(smem, arch, ordering_from=tmem)
        parts.append((spec, spec.meta["short_title"]))
    if tmem is not None:
        spec = tmem_spec(tmem, ordering_from=smem)
        parts.append((spec, spec.meta["short_title"]))
    if not parts:
        raise ValueError("layout_figure needs an SMEM plan, a TMEM plan or both; got neither")
    require_plotly()
    from plotly.subplots import make_subplots

    fig = make_subplots(rows=len(parts), cols=1, subplot_titles=[t for _, t in parts], vertical_spacing=0.22)
    shapes: list = []
    annotations: list = lift_titles(fig.layout.annotations)  # titles left and over the capacity notes
    for row, (spec, _) in enumerate(parts, start=1):
        traces, xaxis, yaxis, sh, an = _moved(spec, row)
        fig.add_traces(traces)
        suffix = "" if row == 1 else str(row)
        fig.layout[f"xaxis{suffix}"].update(xaxis)
        fig.layout[f"yaxis{suffix}"].update(yaxis)
        shapes += sh
        annotations += an
    base = parts[0][0].layout
    fig.update_layout(
        shapes=shapes,
        annotations=annotations,
        barmode="overlay",
        height=300 * len(parts) + 80,
        # room for a title of the figure's own (notebooks set one), centred in the top margin
        margin={"l": 60, "r": 20, "t": 78 + TITLE_LIFT_PX, "b": 90},
        font=base["font"],
        plot_bgcolor="white",
        paper_bgcolor="white",
        legend={**base["legend"], "yref": "paper", "yanchor": "top", "y": -0.12 if len(parts) > 1 else -0.25},
        hovermode="closest",
        hoverlabel=base["hoverlabel"],
        uniformtext=base["uniformtext"],
    )
    return fig
