"""The bank-conflict picture: 32 banks across, one row per wavefront, each cell coloured by the
lane it serves, the wavefronts a conflict adds (replays) marked; and the conflict strip of a
byte map. Plotly is imported only when a figure is drawn; the ``*_spec`` data are plain.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from .. import hardware
from ..analysis.banks._model import BankConflicts
from ..analysis.banks._patterns import AccessReport
from ..analysis.banks._tables import StripSegment
from ._style import FONT, plain

__all__ = ["bank_conflict_spec", "bank_conflict_figure", "conflict_strip_figure"]


def _result(access: BankConflicts | AccessReport) -> BankConflicts:
    return access.worst if isinstance(access, AccessReport) else access


def bank_conflict_spec(access: BankConflicts | AccessReport) -> dict[str, Any]:
    """The picture as data: ``lane[w][b]`` (first lane served, None when idle), ``lanes[w][b]`` (all),
    ``replay[w]`` (True for a wavefront a conflict adds), ``phase_of[w]``, and the title."""
    res = _result(access)
    grid = res.grid()
    lane = [[cell[0] if cell else None for cell in row] for row in grid]
    replay, phase_of = [], []
    for p, count in enumerate(res.phase_wavefronts):
        replay += [False] + [True] * (count - 1)
        phase_of += [p] * count
    state = "conflict-free" if res.conflict_free else f"{res.n_way}-way, {res.replays} replayed wavefront(s)"
    title = f"{res.instruction}: {res.wavefronts} wavefronts (ideal {res.ideal}), {res.conflicts} conflicts; {state}"
    if isinstance(access, AccessReport):
        title = f"{access.region}: " + title + f" (worst of {access.instructions} instructions)"
    return {
        "lane": lane,
        "lanes": [[list(c) for c in row] for row in grid],
        "replay": replay,
        "phase_of": phase_of,
        "title": title,
        "banks": hardware.SMEM_BANKS,
    }


def bank_conflict_figure(access: BankConflicts | AccessReport) -> Any:
    """Plotly figure of one warp access: banks across, wavefronts down, lanes coloured, replays marked."""
    import plotly.graph_objects as go

    spec = bank_conflict_spec(access)
    banks = spec["banks"]
    n = len(spec["lane"])
    ylabels = [f"wf {w}" + (" (replay)" if spec["replay"][w] else "") for w in range(n)]
    hover = [
        [
            f"bank {b}, wavefront {w}: lanes {', '.join(map(str, spec['lanes'][w][b]))}"
            if spec["lanes"][w][b]
            else f"bank {b}, wavefront {w}: idle"
            for b in range(banks)
        ]
        for w in range(n)
    ]
    text = [["" if v is None else str(v) for v in row] for row in spec["lane"]]
    fig = go.Figure(
        go.Heatmap(
            z=[[None if v is None else v for v in row] for row in spec["lane"]],
            x=list(range(banks)),
            y=ylabels,
            text=text,
            texttemplate="%{text}",
            hovertext=hover,
            hoverinfo="text",
            colorscale="Turbo",
            zmin=0,
            zmax=31,
            xgap=1,
            ygap=1,
            colorbar={"title": "lane"},
            name="lanes",
        )
    )
    replays = [w for w in range(n) if spec["replay"][w]]
    if replays:
        fig.add_trace(
            go.Scatter(
                x=[-1.2] * len(replays),
                y=[ylabels[w] for w in replays],
                mode="markers",
                marker={"symbol": "triangle-right", "size": 10, "color": "#d62728"},
                name="replay",
                hovertext=["a wavefront the conflict adds"] * len(replays),
                hoverinfo="text",
            )
        )
    fig.update_layout(
        title={"text": plain(spec["title"]), "font": {"size": 13}},
        font={"family": FONT},
        xaxis={"title": "bank", "dtick": 1, "range": [-1.8, banks - 0.5]},
        yaxis={"autorange": "reversed", "title": ""},
        height=160 + 22 * n,
        margin={"l": 110, "r": 20, "t": 50, "b": 40},
        showlegend=bool(replays),
    )
    return fig


def conflict_strip_figure(segments: Iterable[StripSegment], total: int | None = None) -> Any:
    """A one-row byte map: each analysed region's span coloured by its worst access's
    wavefronts over the ideal (green 1x, red 8x and more)."""
    import plotly.graph_objects as go

    segs = list(segments)
    end = total if total is not None else max((s.end for s in segs), default=0)
    fig = go.Figure()
    for s in segs:
        ratio = min(s.excess_ratio, 8.0)
        red = int(40 + (ratio - 1) / 7 * 200)
        color = f"rgb({red},{200 - int((ratio - 1) / 7 * 160)},80)"
        fig.add_trace(
            go.Bar(
                x=[s.end - s.offset],
                base=[s.offset],
                y=["banks"],
                orientation="h",
                marker={"color": color},
                name=s.region,
                hovertext=[
                    plain(
                        f"{s.region} [{s.offset}, {s.end}): {s.instruction}, "
                        f"{s.wavefronts}/{s.ideal} wavefronts, {s.n_way}-way"
                    )
                ],
                hoverinfo="text",
                showlegend=False,
            )
        )
    fig.update_layout(
        barmode="overlay",
        height=120,
        xaxis={"range": [0, max(end, 1)], "title": "byte"},
        margin={"l": 60, "r": 20, "t": 20, "b": 40},
        font={"family": FONT},
    )
    return fig
