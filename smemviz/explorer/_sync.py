"""Keep a live ``FigureWidget`` in step with a :class:`~smemviz.figures.FigureSpec`:
each update is one ``plotly_update`` call (one message to the browser)
carrying only the top-level properties that changed.

Going through plotly's property objects (``trace.update(...)``) validates
every array element and walks plotly's object tree per nested key: about
half a second per update at 1,000 regions. ``plotly_update`` stores plain
values, so the specs must be valid already: the same specs build the static
figures, where plotly validates them (and the tests build those).
"""

from __future__ import annotations

from typing import Any

from ..figures._spec import FigureSpec

__all__ = ["LiveFigure"]


class LiveFigure:
    """A ``FigureWidget`` plus the spec it shows, to send only differences."""

    def __init__(self, spec: FigureSpec) -> None:
        import plotly.graph_objects as go

        self.widget = go.FigureWidget(spec.to_figure())
        self._traces = [dict(t) for t in spec.traces]
        self._layout = dict(spec.layout)

    def show(self, spec: FigureSpec) -> bool:
        """Update the widget to ``spec`` (same map kind); whether anything was sent."""
        from plotly.basedatatypes import Undefined

        n = len(self._traces)
        if len(spec.traces) != n:
            raise ValueError(f"figure has {n} traces, the new spec {len(spec.traces)}: not the same map")
        restyle: dict[str, list[Any]] = {}
        for i, (old, new) in enumerate(zip(self._traces, spec.traces)):
            for key, value in new.items():
                if old.get(key, Undefined) != value:
                    restyle.setdefault(key, [Undefined] * n)[i] = value
                    old[key] = value
        relayout = {k: v for k, v in spec.layout.items() if self._layout.get(k, Undefined) != v}
        self._layout.update(relayout)
        if not restyle and not relayout:
            return False
        self.widget.plotly_update(restyle_data=restyle, relayout_data=relayout, trace_indexes=list(range(n)))
        return True
