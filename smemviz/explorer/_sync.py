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
        """Update the widget to ``spec`` (same map kind); whether anything was sent.

        A changed key is sent for every trace that has it (the current value
        where it did not change); traces without it get plotly's ``Undefined``,
        which leaves them alone.
        """
        from plotly.basedatatypes import Undefined

        n = len(self._traces)
        if len(spec.traces) != n:
            raise ValueError(f"figure has {n} traces, the new spec {len(spec.traces)}: not the same map")
        changed: dict[str, None] = {}
        for old, new in zip(self._traces, spec.traces):
            for key, value in new.items():
                if key not in changed and old.get(key) != value:
                    changed[key] = None
        restyle = {key: [new.get(key, Undefined) for new in spec.traces] for key in changed}
        self._traces = [dict(t) for t in spec.traces]
        relayout = {k: v for k, v in spec.layout.items() if self._layout.get(k) != v}
        self._layout.update(relayout)
        if not restyle and not relayout:
            return False
        self.widget.plotly_update(restyle_data=restyle, relayout_data=relayout, trace_indexes=list(range(n)))
        return True
