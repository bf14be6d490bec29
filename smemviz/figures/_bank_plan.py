"""Bank pictures of a plan that carries accesses: one access's grid (what the explorer's bank tab
and the HTML export show) and every access stacked under the conflict strip (a static export).
"""

from __future__ import annotations

from typing import Any

from ..analysis._analysed import Analysed
from ..analysis.banks._access import analyse_accesses, analyse_declared
from ..analysis.banks._tables import conflict_strip
from ._bank_conflicts import bank_conflict_figure, conflict_strip_figure
from ._smem import _smem_plan
from ._style import FONT, plain

__all__ = ["access_bank_figure", "plan_bank_figures", "plan_bank_figure"]


def access_bank_figure(obj: Any, access: int | str = 0, *, swizzle: str | None = None) -> Any:
    """The 32-banks-by-wavefronts grid of one access a plan carries (its worst instruction).

    ``access`` is the index into ``plan.accesses`` or a region's name (its first access);
    ``swizzle`` ("none", "32B", "64B", "128B") draws it as if the tile had that swizzle.
    """
    plan = _smem_plan(obj)
    acc = _pick(plan, access)
    return bank_conflict_figure(analyse_declared(plan, acc, swizzle=swizzle))


def _pick(plan: Any, access: int | str) -> Any:
    if not plan.accesses:
        raise ValueError("the plan carries no accesses: declare them with SmemAllocation(..., access=...)")
    if isinstance(access, str):
        found = plan.accesses_of(access)
        if not found:
            names = sorted({a.region for a in plan.accesses})
            raise KeyError(f"region {access!r} has no access; regions with accesses: {', '.join(map(repr, names))}")
        return found[0]
    if isinstance(access, bool) or not isinstance(access, int) or not 0 <= access < len(plan.accesses):
        raise IndexError(f"access {access!r}: the plan carries {len(plan.accesses)} (0..{len(plan.accesses) - 1})")
    return plan.accesses[access]


def plan_bank_figures(obj: Any) -> list[tuple[str, Any]]:
    """(heading, figure) for the conflict strip and each analysed access, in declaration order
    (``obj``: anything that holds an SMEM layout, or its :class:`~smemviz.analysis.Analysed`)."""
    if isinstance(obj, Analysed):
        plan, analysed = obj.plan, obj.banks
    else:
        plan = _smem_plan(obj)
        analysed = analyse_accesses(plan)
    items = [i for i in analysed if i.report is not None]
    if not items:
        return []
    reports = [i.report for i in items if i.report is not None]
    out = [
        (
            "Conflict strip: each region's worst access",
            conflict_strip_figure(conflict_strip(plan, reports), plan.data_total),
        )
    ]
    for item in items:
        assert item.report is not None
        out.append((f"{item.access.region}: {item.access.label}", bank_conflict_figure(item.report)))
    return out


def plan_bank_figure(obj: Any) -> Any:
    """Every analysed access's grid stacked under the conflict strip, in one figure (for SVG/PNG/PDF)."""
    from plotly.subplots import make_subplots

    parts = plan_bank_figures(obj)
    if not parts:
        raise ValueError("the plan carries no access the bank analysis can take: nothing to draw")
    heights = [120] + [max(160, 22 * len(fig.data[0].y) + 60) for _, fig in parts[1:]]
    fig = make_subplots(
        rows=len(parts),
        cols=1,
        subplot_titles=[plain(h) for h, _ in parts],
        row_heights=[h / sum(heights) for h in heights],
        vertical_spacing=min(0.08, 0.5 / len(parts)),
    )
    for row, (_, part) in enumerate(parts, start=1):
        for trace in part.data:
            if row > 2 and trace.type == "heatmap":
                trace.showscale = False
            fig.add_trace(trace, row=row, col=1)
        src = part.layout
        fig.update_xaxes(title_text=src.xaxis.title.text, range=src.xaxis.range, dtick=src.xaxis.dtick, row=row, col=1)
        fig.update_yaxes(autorange=src.yaxis.autorange, row=row, col=1)
    fig.update_layout(
        height=sum(heights) + 60 * len(parts),
        barmode="overlay",
        showlegend=False,
        font={"family": FONT},
        margin={"l": 110, "r": 20, "t": 60, "b": 40},
        title={"text": "Bank conflicts of the plan's accesses", "x": 0.01, "xanchor": "left"},
    )
    for ann in fig.layout.annotations:
        ann.font = {"size": 12}
    return fig
