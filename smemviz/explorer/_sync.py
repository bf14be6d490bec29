"""Keep a live ``FigureWidget`` in step with a :class:`~smemviz.figures.FigureSpec`:
each update is one ``Plotly.update`` message to the browser carrying only the
leaf properties that changed, as dotted paths (sent before the Python-side
figure is updated, see ``MapFigureWidget.update_browser_first``).

Leaf paths matter in the browser: plotly.js decides how much to redraw from
the attributes it is given. A whole ``title`` or ``annotations`` object
forces a full re-layout of the figure, while ``title.text`` or
``annotations[0].text`` only redraws that text, and ``marker.opacity`` (a
phase highlight) only restyles the bars.

Going through plotly's property objects (``trace.update(...)``) validates
every array element and walks plotly's object tree per nested key: about
half a second per update at 1,000 regions. The update message stores plain
values, so the specs must be valid already: the same specs build the static
figures, where plotly validates them (and the tests build those).
"""

from __future__ import annotations

from typing import Any

from .._compat import plotly as plotly_compat
from ..figures._spec import FigureSpec

__all__ = ["LiveFigure", "changed_paths", "without_legend", "narrowed", "NARROW_PX"]

_MISSING = object()


def changed_paths(old: dict[str, Any], new: dict[str, Any], prefix: str = "") -> dict[str, Any]:
    """``{"a.b[0].c": new_value}`` for every leaf of ``new`` that differs from ``old``.

    Dicts are walked; a list of dicts is walked item by item when its length
    did not change; any other value (arrays, scalars) is one leaf. A key that
    ``new`` no longer has is reset with ``None``.
    """
    out: dict[str, Any] = {}
    for key, value in new.items():
        before = old.get(key, _MISSING)
        if before is value or before == value:
            continue
        path = f"{prefix}.{key}" if prefix else key
        if isinstance(value, dict) and isinstance(before, dict):
            out.update(changed_paths(before, value, path))
        elif _same_shape_records(before, value):
            for i, (b, v) in enumerate(zip(before, value)):
                if b != v:
                    out.update(changed_paths(b, v, f"{path}[{i}]"))
        else:
            out[path] = value
    for key in old.keys() - new.keys():
        out[f"{prefix}.{key}" if prefix else key] = None
    return out


def _same_shape_records(before: Any, value: Any) -> bool:
    return (
        isinstance(value, list)
        and isinstance(before, list)
        and len(value) == len(before) > 0
        and all(isinstance(v, dict) for v in value)
        and all(isinstance(b, dict) for b in before)
    )


NO_LEGEND_MARGIN_B = 50  # px under the plot: tick labels and the axis title


def without_legend(spec: FigureSpec) -> FigureSpec:
    """``spec`` with plotly's legend off and its room given back.

    The explorer shows a fixed HTML key under each map instead: plotly
    redraws its legend (and measures its texts) on every update, a
    noticeable part of each redraw inside JupyterLab.
    """
    layout = {**spec.layout, "showlegend": False}
    layout["margin"] = {**layout.get("margin", {}), "b": NO_LEGEND_MARGIN_B}
    return FigureSpec(spec.traces, layout, spec.meta)


NARROW_PX = 700  # maps narrower than this show short titles (two explorers side by side)


def narrowed(spec: FigureSpec) -> FigureSpec:
    """``spec`` with the short texts of ``spec.meta["narrow"]`` (dotted layout paths)
    in place of the long ones, so nothing is cut or overlaps on a narrow map."""
    layout = dict(spec.layout)
    for path, text in spec.meta["narrow"].items():
        keys = path.replace("]", "").replace("[", ".").split(".")
        parent: Any = layout
        for key in keys[:-1]:
            index = int(key) if key.isdigit() else key
            child = parent[index]
            child = list(child) if isinstance(child, list) else dict(child)
            parent[index] = child
            parent = child
        parent[keys[-1]] = text
    return FigureSpec(spec.traces, layout, spec.meta)


class LiveFigure:
    """A ``FigureWidget`` plus the spec it shows, to send only differences.

    ``legend=False`` draws every spec without plotly's legend."""

    def __init__(self, spec: FigureSpec, *, legend: bool = True) -> None:
        from ._map_widget import map_widget_class

        self._legend = legend
        self._spec: FigureSpec | None = spec
        self._width: int | None = None  # measured in the browser; specs leave the width to plotly
        spec = self._prepared(spec)
        self.widget = map_widget_class()(spec.to_figure())
        self._traces = [dict(t) for t in spec.traces]
        self._layout = dict(spec.layout)

    def _prepared(self, spec: FigureSpec) -> FigureSpec:
        spec = spec if self._legend else without_legend(spec)
        if self._width is not None and self._width < NARROW_PX and spec.meta.get("narrow"):
            spec = narrowed(spec)
        return spec

    def set_width(self, width: int) -> bool:
        """Draw at ``width`` pixels from now on; whether anything was sent.

        Crossing :data:`NARROW_PX` swaps the titles for their short forms."""
        if width == self._width:
            return False
        was_narrow = self._width is not None and self._width < NARROW_PX
        self._width = width
        if self._spec is not None and was_narrow != (width < NARROW_PX):
            self.show(self._spec)
            return True
        self._layout["width"] = width
        self.widget.plotly_update(restyle_data={}, relayout_data={"width": width})
        return True

    def show(self, spec: FigureSpec) -> bool:
        """Update the widget to ``spec`` (same map kind); whether anything was sent.

        A changed path is sent for the traces where it changed; the others get
        plotly's ``Undefined``, which leaves them alone.
        """
        Undefined = plotly_compat.undefined()
        self._spec = spec
        spec = self._prepared(spec)
        n = len(self._traces)
        if len(spec.traces) != n:
            raise ValueError(f"figure has {n} traces, the new spec {len(spec.traces)}: not the same map")
        per_trace = [changed_paths(old, new) for old, new in zip(self._traces, spec.traces)]
        paths = {p: None for diff in per_trace for p in diff}
        restyle = {p: [diff.get(p, Undefined) for diff in per_trace] for p in paths}
        layout = spec.layout if self._width is None else {**spec.layout, "width": self._width}
        relayout = changed_paths(self._layout, layout)
        self._traces = [dict(t) for t in spec.traces]
        self._layout = dict(layout)
        if not restyle and not relayout:
            return False
        update = getattr(self.widget, "update_browser_first", None)
        if update is not None:
            update(restyle, relayout, list(range(n)))
        else:  # a plain FigureWidget
            self.widget.plotly_update(restyle_data=restyle, relayout_data=relayout, trace_indexes=list(range(n)))
        return True
