"""The notebook explorer: both memory maps, totals, the usage table and
exports in one ipywidgets widget, rebuilt in place when a control changes.
Needs ipywidgets and plotly (plotly's FigureWidget is an anywidget)."""

from __future__ import annotations

from ._widget import Explorer, explore

__all__ = ["explore", "Explorer"]
