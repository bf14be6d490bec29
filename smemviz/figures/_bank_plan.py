"""Bank pictures of a plan that carries accesses: one access's grid (what the explorer's bank tab
and the HTML export show) and every access stacked under the conflict strip (a static export).
"""

from __future__ import annotations

from typing import Any

from .. import hardware
from ..analysis.banks._access import analyse_plan, analyze_declared
from ..analysis.banks._model import BankConflicts
from ..analysis.banks._patterns import AccessReport
from ..analysis.banks._report import conflict_strip
from ._bank_conflicts import bank_conflict_figure, bank_conflict_spec, conflict_strip_figure
from ._smem import _smem_plan
from ._spec import FigureSpec
from ._style import FONT, plain

__all__ = ["access_bank_figure", "plan_bank_figures", "plan_bank_figure", "bank_grid_spec", "grid_height",
           "EMPTY_GRID_TITLE"]

EMPTY_GRID_TITLE = "no access to draw"
MAX_ROWS_LABELLED = 64  # wavefronts; beyond this the rows are numbered on hover only


def grid_height(rows: int) -> int:
    """Pixels for a grid of ``rows`` wavefronts."""
    return int(min(900, 170 + 22 * max(rows, 1)))


def bank_grid_spec(report: AccessReport | BankConflicts | None, title: str | None = None, *,
                   rows: int | None = None) -> FigureSpec:
    """The 32-banks-by-wavefronts grid as a :class:`FigureSpec` of two fixed traces (the lanes, the
    replay marks), so a live figure can be moved from one access to another by sending differences.

    ``None`` draws an empty grid titled ``title`` (an access that cannot be analysed says why there).
    ``rows`` sizes the figure for that many wavefronts (default: its own): a view that toggles
    one access's swizzle keeps one height, and plotly.js then redraws the cells without
    laying the whole figure out again (half the redraw time, measured in JupyterLab).
    """
    banks = hardware.SMEM_BANKS
    if report is None:
        lane: list[list[int | None]] = [[None] * banks]
        lanes: list[list[list[int]]] = [[[] for _ in range(banks)]]
        replay = [False]
        text_title = title or EMPTY_GRID_TITLE
    else:
        data = bank_conflict_spec(report)
        lane, lanes, replay = data["lane"], data["lanes"], data["replay"]
        text_title = title or data["title"]
    n = len(lane)
    ylabels = [f"wf {w}" + (" (replay)" if replay[w] else "") for w in range(n)]
    hover = [[f"bank {b}, wavefront {w}: lane{'s' if len(lanes[w][b]) > 1 else ''} "
              f"{', '.join(map(str, lanes[w][b]))}" if lanes[w][b] else f"bank {b}, wavefront {w}: idle"
              for b in range(banks)] for w in range(n)]
    marks = [w for w in range(n) if replay[w]]
    # Lanes by colour, named on hover. No text in the cells, no colour bar and no gaps between
    # cells: each costs plotly.js a redraw of its own (SVG text per cell, the bar's axis, a
    # rectangle per cell instead of one image), and together they took most of a toggle's time.
    heat = {
        "type": "heatmap", "name": "lanes", "meta": "lanes",
        "z": lane, "x": list(range(banks)), "y": ylabels,
        "hovertext": hover, "hoverinfo": "text", "colorscale": "Turbo", "zmin": 0, "zmax": 31,
        "showscale": False,
    }
    replays = {
        "type": "scatter", "mode": "markers", "name": "replay", "meta": "replays",
        "x": [-1.2] * len(marks), "y": [ylabels[w] for w in marks],
        "marker": {"symbol": "triangle-right", "size": 10, "color": "#d62728"},
        "hovertext": ["a wavefront the conflict adds"] * len(marks), "hoverinfo": "text", "showlegend": False,
    }
    layout = {
        "title": {"text": plain(text_title), "font": {"size": 13}, "x": 0.01, "xanchor": "left"},
        "font": {"family": FONT, "size": 12},
        "xaxis": {"title": {"text": "bank (cell colour: the lane served; hover names every lane)"}, "dtick": 1, "range": [-1.8, banks - 0.5], "fixedrange": True},
        "yaxis": {"autorange": "reversed", "title": {"text": ""}, "showticklabels": n <= MAX_ROWS_LABELLED,
                  "fixedrange": True},
        "height": grid_height(rows if rows is not None else n),
        "margin": {"l": 110, "r": 20, "t": 50, "b": 40},
        "showlegend": False, "plot_bgcolor": "white", "paper_bgcolor": "white",
    }
    return FigureSpec([heat, replays], layout, {"wavefronts": n, "replays": len(marks)})


def access_bank_figure(obj: Any, access: int | str = 0, *, swizzle: str | None = None) -> Any:
    """The 32-banks-by-wavefronts grid of one access a plan carries (its worst instruction).

    ``access`` is the index into ``plan.accesses`` or a region's name (its first access);
    ``swizzle`` ("none", "32B", "64B", "128B") draws it as if the tile had that swizzle.
    """
    plan = _smem_plan(obj)
    acc = _pick(plan, access)
    return bank_conflict_figure(analyze_declared(plan, acc, swizzle=swizzle))


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
    """(heading, figure) for the conflict strip and each analysed access, in declaration order."""
    plan = _smem_plan(obj)
    items = [i for i in analyse_plan(plan) if i.report is not None]
    if not items:
        return []
    reports = [i.report for i in items if i.report is not None]
    out = [("Conflict strip: each region's worst access", conflict_strip_figure(conflict_strip(plan, reports),
                                                                                plan.data_total))]
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
    fig = make_subplots(rows=len(parts), cols=1, subplot_titles=[plain(h) for h, _ in parts],
                        row_heights=[h / sum(heights) for h in heights], vertical_spacing=min(0.08, 0.5 / len(parts)))
    for row, (_, part) in enumerate(parts, start=1):
        for trace in part.data:
            if row > 2 and trace.type == "heatmap":
                trace.showscale = False
            fig.add_trace(trace, row=row, col=1)
        src = part.layout
        fig.update_xaxes(title_text=src.xaxis.title.text, range=src.xaxis.range, dtick=src.xaxis.dtick, row=row, col=1)
        fig.update_yaxes(autorange=src.yaxis.autorange, row=row, col=1)
    fig.update_layout(height=sum(heights) + 60 * len(parts), barmode="overlay", showlegend=False,
                      font={"family": FONT}, margin={"l": 110, "r": 20, "t": 60, "b": 40},
                      title={"text": "Bank conflicts of the plan's accesses", "x": 0.01, "xanchor": "left"})
    for ann in fig.layout.annotations:
        ann.font = {"size": 12}
    return fig
