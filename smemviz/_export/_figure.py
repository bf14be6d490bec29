"""The figure an export draws: the notebook's own builders, never a copy."""

from __future__ import annotations

from typing import Any

from .._optional import require
from ..sources._inputs import LayoutPair
from ._analysed import AnalysedPair, analyse_pair

__all__ = ["build_figure", "titled"]


def build_figure(pair: LayoutPair | AnalysedPair) -> Any:
    """Both maps stacked when there are both, else the single map as the
    explorer shows it, drawn from the layouts' analyses."""
    require("plotly", "HTML and image exports draw with plotly")
    from .. import figures

    analysed = analyse_pair(pair)
    smem, tmem = analysed.smem, analysed.tmem
    if smem is not None and tmem is not None:
        return figures.layout_figure(smem, tmem)
    if smem is not None:
        return figures.smem_spec(smem).to_figure()
    assert tmem is not None
    return figures.tmem_spec(tmem).to_figure()


TITLE_ROOM_PX = 28  # the extra top margin a figure without a title of its own gets


def titled(figure: Any, title: str) -> Any:
    """A copy of ``figure`` headed by ``title``: a static image has no page
    around it to carry the heading. A map's own title (its totals and
    capacity) moves into the subtitle."""
    import plotly.graph_objects as go

    from ..figures._style import plain

    fig = go.Figure(figure)
    text = plain(title)
    own = fig.layout.title.text if fig.layout.title and fig.layout.title.text else None
    if own:
        fig.update_layout(title={"text": text, "subtitle": {"text": own}})
    else:
        top = (fig.layout.margin.t if fig.layout.margin and fig.layout.margin.t is not None else 60) + TITLE_ROOM_PX
        fig.update_layout(title={"text": text, "x": 0.01, "xanchor": "left"}, margin={"t": top})
    return fig
