"""plotly: what the explorer's live maps need beyond plotly's public API.

The map view (``explorer/map_view.js``) speaks ``FigureWidget``'s browser
message protocol (``_py2js_*`` state, plotly's ``"_undefined_"`` marker for
"leave this trace alone") and the explorer applies its updates to the Python
figure through ``FigureWidget``'s own update code, so the figure's callbacks
fire as usual. Those are plotly internals, used only on the plotly versions
the tests cover (``TESTED``); elsewhere the explorer draws with plotly's own
``FigureWidget`` and updates it with the public ``plotly_update``.
"""

from __future__ import annotations

from typing import Any

from . import in_range

__all__ = [
    "TESTED",
    "version_tested",
    "internals_available",
    "plotly_js",
    "undefined",
    "to_wire",
    "apply_update",
    "UNDEFINED_WIRE",
]

TESTED = ((7, 0), (8, 0))  # [from, to) major.minor: the range pyproject.toml allows and the tests run
UNDEFINED_WIRE = "_undefined_"  # how FigureWidget writes plotly's ``Undefined`` on the wire
_PRIVATE = ("_perform_plotly_update", "_dispatch_trace_change_callbacks", "_dispatch_layout_change_callbacks")


def version_tested() -> bool:
    """Whether the installed plotly is a version smemviz's tests cover."""
    import plotly

    return in_range(TESTED, plotly.__version__)


def internals_available() -> bool:
    """Whether the explorer may use its own map view and update path."""
    if not version_tested():
        return False
    import plotly.graph_objects as go

    try:
        from plotly.basedatatypes import Undefined  # noqa: F401
    except ImportError:
        return False
    return all(hasattr(go.FigureWidget, name) for name in _PRIVATE)


def plotly_js() -> str:
    """plotly.js as shipped with the installed plotly (public API, no network)."""
    from plotly.offline import get_plotlyjs

    return get_plotlyjs()


def undefined() -> Any:
    """plotly's "leave this trace alone" value for ``plotly_update``'s per-trace lists."""
    from plotly.basedatatypes import Undefined

    return Undefined


def to_wire(restyle: dict[str, Any]) -> dict[str, Any]:
    """``restyle`` with plotly's ``Undefined`` written the way FigureWidget sends it."""
    marker = undefined()
    return {
        path: [UNDEFINED_WIRE if v is marker else v for v in values] if isinstance(values, list) else values
        for path, values in restyle.items()
    }


def apply_update(widget: Any, restyle: dict[str, Any], relayout: dict[str, Any], trace_indexes: list[int]) -> None:
    """Apply an update to the Python-side figure only (the browser already has it)
    and fire the figure's change callbacks, as ``plotly_update`` would."""
    restyled, relaid, indexes = widget._perform_plotly_update(
        restyle_data=restyle, relayout_data=relayout, trace_indexes=trace_indexes
    )
    # a whole array given anew (shapes or annotations, more or fewer of them): plotly stores it but
    # keeps the property objects it made of the old one, of the old length; they are made again
    # from what it stored when next read
    cached = getattr(widget.layout, "_compound_array_props", None)
    if isinstance(cached, dict):
        for key, value in relayout.items():
            if isinstance(value, list) and key in cached:
                del cached[key]
    if restyled:
        widget._dispatch_trace_change_callbacks(restyled, indexes)
    if relaid:
        widget._dispatch_layout_change_callbacks(relaid)
