"""The notebook explorer: both memory maps, totals, the usage table and
exports in one ipywidgets widget, rebuilt in place when a control changes.

:class:`ExplorerState` (what is shown) needs neither ipywidgets nor plotly;
:class:`Explorer` and :func:`explore` (the widget) need both (plotly's
FigureWidget is an anywidget) and are imported on first use."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ._state import ExplorerState

if TYPE_CHECKING:
    from ._widget import Explorer, explore

__all__ = ["explore", "Explorer", "ExplorerState"]


def __getattr__(name: str) -> Any:
    if name in ("Explorer", "explore"):
        from . import _widget

        return getattr(_widget, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
