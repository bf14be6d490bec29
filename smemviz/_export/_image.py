"""A static image (SVG, PNG, PDF) of an export's layouts: drawn and rendered here with the
process's warm browser, or, on the command line, by the render service that outlives each
command (:mod:`._render_service`)."""

from __future__ import annotations

from typing import Any

from ..sources._inputs import LayoutPair
from . import _render_service, _static
from ._analysed import AnalysedPair, analyse_pair

__all__ = ["static_figure", "static_image"]


def static_figure(analysed: AnalysedPair, figure: Any = None, *, banks: bool = False) -> Any:
    """The figure a static image of ``analysed`` draws: ``figure`` when given, else the bank
    pictures (``banks``) or the maps; headed by the layouts' title, since an image has no page
    heading to carry it. The render service draws with it too."""
    if figure is None:
        from ._figure import build_figure

        if banks:
            from ..figures._bank_plan import plan_bank_figure

            figure = plan_bank_figure(analysed.smem)
        else:
            figure = build_figure(analysed)
    if analysed.pair.title:
        from ._figure import titled

        figure = titled(figure, analysed.pair.title)
    return figure


def static_image(  # noqa: PLR0913 - the export's image options
    pair: LayoutPair | AnalysedPair,
    fmt: str,
    *,
    figure: Any = None,
    width: int | None = None,
    height: int | None = None,
    scale: float = 1.0,
    timeout: float,
    banks: bool = False,
) -> bytes:
    """``fmt`` ("svg", "png", "pdf") bytes of ``pair``'s maps (or of ``figure``)."""
    if _render_service.in_use():
        browser = _static.find_browser()
        measured = isinstance(pair, AnalysedPair) and pair.smem is not None and bool(pair.smem.measured)
        if figure is None and not measured:
            # the service, with plotly warm, draws the figure from the plans as it would be drawn here
            plans = pair.pair if isinstance(pair, AnalysedPair) else pair
            request = {
                "pair": {
                    "smem": plans.smem.to_dict() if plans.smem is not None else None,
                    "tmem": plans.tmem.to_dict() if plans.tmem is not None else None,
                    "title": plans.title,
                    "arch": plans.arch,
                },
                "banks": banks,
            }
            data = _render_service.render_request(request, fmt, width, height, scale, timeout, browser)
            if data is not None:
                return data
        from plotly.io.json import to_json_plotly

        fig = static_figure(analyse_pair(pair), figure, banks=banks).to_plotly_json()
        w, h = _static.image_size(fig, width, height, scale)
        return _render_service.render(to_json_plotly(fig), fmt, w, h, scale, timeout, browser)
    fig = static_figure(analyse_pair(pair), figure, banks=banks)
    return _static.render_image(fig, fmt, width=width, height=height, scale=scale, timeout=timeout)
