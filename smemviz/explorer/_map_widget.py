"""The explorer's live maps: plotly ``FigureWidget`` objects with a leaner view.

On the Python side nothing changes: a :class:`MapFigureWidget` is a
``go.FigureWidget`` (same data, layout, update methods and callbacks). In the
browser it is drawn by ``map_view.js``, which applies the widget's update
messages straight to the plotly graph. plotly's own view also diffs the whole
drawn figure after every redraw and sends plotly's defaults back to Python;
for a map of a few hundred bars that is a sizeable share of each redraw,
paid before the frame shows, and none of it is needed here.

The view's module is small; plotly.js travels beside it as a widget trait and
is evaluated once per page, shared by every map: plotly.js's basic bundle
(scatter and bar traces, all the maps draw; ``vendor/``) where it is the
version the installed plotly ships, else the full bundle plotly ships. The
full bundle's evaluation held a page for about 2 s on a 2-core test machine
(9 s with the CPU throttled 4x): an anywidget model created meanwhile (the
next explorer's, say) missed anywidget's 2 s start limit. The basic bundle
takes about a fifth of that and a quarter of each map's opening message. Kept
inside the module, 4.8 MB of it were evaluated once per map widget (an
explorer has three or more) before each widget could start, and anywidget
gives a widget two seconds to start: on a busy machine a map missed that,
anywidget then dropped every later message to it, the figure's data
included (plotly sends it just after the widget opens), and the map stayed
an empty grid with "[anywidget] Failed to initialize model." in the console.
Like plotly's widget it needs no network. It relies on plotly internals
(see :mod:`smemviz._compat.plotly`); on plotly versions the tests do not
cover, :func:`map_widget_class` is plotly's own ``FigureWidget``.
"""

from __future__ import annotations

import re
from functools import lru_cache
from pathlib import Path
from typing import Any

from .._compat import plotly as plotly_compat
from ._messages import MapUpdate

__all__ = ["MapFigureWidget", "map_widget_class"]  # noqa: F822 (MapFigureWidget is made on first access)

_VIEW = Path(__file__).with_name("map_view.js")
_BASIC = Path(__file__).parent / "vendor" / "plotly-basic.min.js"
_BASIC_VERSION = re.compile(r"plotly\.js \(basic - minified\) v(\S+)")


def view_module() -> str:
    """The view's code (plotly.js comes as the :data:`PLOTLY_TRAIT` trait)."""
    return _VIEW.read_text(encoding="utf-8")


PLOTLY_TRAIT = "_smemviz_plotly_js"  # plotly.js source, evaluated once per page by the view
PLOTLY_VERSION_TRAIT = "_smemviz_plotly_version"  # which plotly.js a page has evaluated already


def basic_bundle_version() -> str | None:
    """The plotly.js version of the vendored basic bundle (None when it is missing)."""
    try:
        head = _BASIC.read_text(encoding="utf-8")[:200]
    except OSError:
        return None
    m = _BASIC_VERSION.search(head)
    return m.group(1) if m else None


@lru_cache(maxsize=1)
def map_plotly_js() -> tuple[str, str]:
    """(plotly.js source, its name for the page's cache): the basic bundle where it is the
    plotly.js version the installed plotly ships, else plotly's own full bundle."""
    import plotly
    from plotly.offline import get_plotlyjs_version

    shipped = get_plotlyjs_version()
    if basic_bundle_version() == shipped:
        return _BASIC.read_text(encoding="utf-8"), f"{shipped}-basic"
    return plotly_compat.plotly_js(), f"{shipped}-full-{plotly.__version__}"


@lru_cache(maxsize=1)
def map_widget_class() -> type:
    """The widget class, made on first use (plotly is imported only then):
    plotly's own ``FigureWidget`` where smemviz's view is not known to work."""
    import plotly.graph_objects as go
    from traitlets import Unicode

    if not plotly_compat.internals_available():
        return go.FigureWidget

    class MapFigureWidget(go.FigureWidget):
        """A plotly ``FigureWidget`` drawn by smemviz's map view."""

        _esm = view_module()
        # defaults, so they travel in the state the widget opens with
        _smemviz_plotly_js = Unicode(map_plotly_js()[0]).tag(sync=True)
        _smemviz_plotly_version = Unicode(map_plotly_js()[1]).tag(sync=True)

        def update_browser_first(self, restyle_data: dict, relayout_data: dict, trace_indexes: list[int]) -> None:
            """``plotly_update``, with the change sent to the browser first, as
            one custom message, and the Python-side figure updated after.

            plotly's own path sends four state messages per update (two edit
            counters, the update, its reset), each a task for the server and
            the page before the redraw starts; the map view needs only the
            update. The values must be valid already (the explorer's specs
            are: the static figures validate the same specs)."""
            message: MapUpdate = {
                "smemviz_update": True,
                "style_data": plotly_compat.to_wire(restyle_data),
                "layout_data": relayout_data,
                "style_traces": trace_indexes,
            }
            self.send(message)
            plotly_compat.apply_update(self, restyle_data, relayout_data, trace_indexes)

    MapFigureWidget.__module__ = __name__
    return MapFigureWidget


def __getattr__(name: str) -> Any:
    if name == "MapFigureWidget":
        return map_widget_class()
    raise AttributeError(name)
