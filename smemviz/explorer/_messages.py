"""The messages between the explorer's Python side and its JS map view (``map_view.js``).

The view speaks plotly's ``FigureWidget`` protocol (the ``_py2js_*`` traits it
draws, the ``_js2py_*`` traits it sets) plus one custom message of smemviz's own.
Each is written down here as a type, so a change on one side shows on the other:
``tests/explorer/test_messages.py`` checks that every field the view reads or sets
is a key of its type here.
"""

from __future__ import annotations

from typing import Any, Literal, TypedDict

__all__ = [
    "UPDATE_MESSAGE",
    "MapUpdate",
    "Py2JsUpdate",
    "Py2JsRestyle",
    "Py2JsRelayout",
    "Py2JsAddTraces",
    "Py2JsDeleteTraces",
    "Py2JsMoveTraces",
    "Py2JsAnimate",
    "Py2JsRemoveLayoutProps",
    "Py2JsRemoveTraceProps",
    "Js2PyRestyle",
    "Js2PyRelayout",
    "Js2PyUpdate",
    "Js2PyPointsCallback",
    "Js2PyTraceDeltas",
    "Js2PyLayoutDelta",
    "PY2JS",
    "JS2PY",
]

UPDATE_MESSAGE = "smemviz_update"  # the custom message map_view.js applies like _py2js_update


class _Edit(TypedDict, total=False):
    """Edit counters plotly's protocol attaches; the view acknowledges them after the frame."""

    trace_edit_id: int
    layout_edit_id: int
    source_view_id: str  # the view a change came from is not redrawn with it


class MapUpdate(TypedDict):
    """smemviz's one-message map update (``msg:custom``): trace restyles and a relayout."""

    smemviz_update: Literal[True]
    style_data: dict[str, Any]
    layout_data: dict[str, Any]
    style_traces: list[int] | None


class Py2JsUpdate(_Edit):
    style_data: dict[str, Any]
    layout_data: dict[str, Any]
    style_traces: list[int] | None


class Py2JsRestyle(_Edit):
    restyle_data: dict[str, Any]
    restyle_traces: list[int] | None


class Py2JsRelayout(_Edit):
    relayout_data: dict[str, Any]


class Py2JsAddTraces(_Edit):
    trace_data: list[dict[str, Any]]


class Py2JsDeleteTraces(_Edit):
    delete_inds: list[int]


class Py2JsMoveTraces(_Edit):
    current_trace_inds: list[int]
    new_trace_inds: list[int]


class Py2JsAnimate(_Edit):
    style_data: list[dict[str, Any]]
    layout_data: dict[str, Any]
    style_traces: list[int] | None
    animation_opts: dict[str, Any]


class Py2JsRemoveLayoutProps(_Edit):
    remove_props: list[list[str | int]]


class Py2JsRemoveTraceProps(_Edit):
    remove_trace: int
    remove_props: list[list[str | int]]


class Js2PyRestyle(TypedDict):
    style_data: dict[str, Any]
    style_traces: list[int] | None
    source_view_id: str


class Js2PyRelayout(TypedDict):
    relayout_data: dict[str, Any]
    source_view_id: str


class Js2PyUpdate(TypedDict):
    style_data: dict[str, Any]
    style_traces: None
    layout_data: dict[str, Any]
    source_view_id: str


class _Points(TypedDict):
    trace_indexes: list[int]
    point_indexes: list[int]
    xs: list[Any]
    ys: list[Any]


class Js2PyPointsCallback(TypedDict):
    """A click, hover, unhover, selection or deselection on the map."""

    event_type: str
    points: _Points
    device_state: dict[str, Any]
    selector: dict[str, Any] | None


class Js2PyTraceDeltas(TypedDict):
    trace_deltas: list[dict[str, Any]]
    trace_edit_id: int


class Js2PyLayoutDelta(TypedDict):
    layout_delta: dict[str, Any]
    layout_edit_id: int


# trait name -> its message type, each way
PY2JS: dict[str, type] = {
    "_py2js_update": Py2JsUpdate,
    "_py2js_restyle": Py2JsRestyle,
    "_py2js_relayout": Py2JsRelayout,
    "_py2js_addTraces": Py2JsAddTraces,
    "_py2js_deleteTraces": Py2JsDeleteTraces,
    "_py2js_moveTraces": Py2JsMoveTraces,
    "_py2js_animate": Py2JsAnimate,
    "_py2js_removeLayoutProps": Py2JsRemoveLayoutProps,
    "_py2js_removeTraceProps": Py2JsRemoveTraceProps,
}
JS2PY: dict[str, type] = {
    "_js2py_restyle": Js2PyRestyle,
    "_js2py_relayout": Js2PyRelayout,
    "_js2py_update": Js2PyUpdate,
    "_js2py_pointsCallback": Js2PyPointsCallback,
    "_js2py_traceDeltas": Js2PyTraceDeltas,
    "_js2py_layoutDelta": Js2PyLayoutDelta,
}
