"""A figure as plain data: a fixed list of trace dicts plus a layout dict.

Every map builds one of these from a :class:`~smemviz.LayoutPlan`. A static
figure is ``go.Figure(spec.traces, spec.layout)``; the explorer keeps its
``FigureWidget`` and copies a new spec into it trace by trace, which works
because a map always has the same traces in the same order.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .._optional import require

__all__ = ["FigureSpec"]


@dataclass
class FigureSpec:
    traces: list[dict[str, Any]]
    layout: dict[str, Any]
    meta: dict[str, Any] = field(default_factory=dict)  # facts for callers, not drawn

    def to_figure(self) -> Any:
        go = require_plotly()
        return go.Figure(data=self.traces, layout=self.layout)


def require_plotly() -> Any:
    """``plotly.graph_objects``, or an ImportError that says which extra installs it."""
    return require("plotly.graph_objects", "smemviz figures need plotly")
