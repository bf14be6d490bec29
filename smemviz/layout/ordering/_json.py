"""The ordering model as plain JSON data and back, so a plan's JSON can carry it.

Each object is written as a dict with a ``type`` key (its class name) and its fields;
tuples become lists. Reading rebuilds the same frozen objects, so
``from_dict(to_dict(m)) == m``.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from . import _model

__all__ = ["to_dict", "from_dict"]

_CLASSES: dict[str, type] = {
    cls.__name__: cls
    for cls in (
        _model.Access,
        _model.BarrierSync,
        _model.CallSite,
        _model.CommitGroup,
        _model.Fence,
        _model.Group,
        _model.Init,
        _model.Loop,
        _model.NamedBarrier,
        _model.OrderingModel,
        _model.Pipeline,
        _model.PipelineOp,
        _model.RegionSpan,
        _model.RoleProgram,
        _model.Rotation,
        _model.SequenceOp,
        _model.StateSpec,
        _model.Tcgen05Commit,
        _model.Tcgen05Wait,
        _model.TmemAlloc,
        _model.TmemDealloc,
        _model.TmemRelinquish,
        _model.WaitGroup,
        _model.WarpRole,
        _model.When,
    )
}


def _encode(value: Any) -> Any:
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        out: dict[str, Any] = {"type": type(value).__name__}
        for f in dataclasses.fields(value):
            out[f.name] = _encode(getattr(value, f.name))
        return out
    if isinstance(value, (tuple, list)):
        return [_encode(v) for v in value]
    return value


def _decode(value: Any) -> Any:
    if isinstance(value, dict):
        name = value.get("type")
        cls = _CLASSES.get(name) if isinstance(name, str) else None
        if cls is None:
            raise ValueError(f"unknown ordering object type {name!r}")
        kwargs = {k: _decode(v) for k, v in value.items() if k != "type"}
        return cls(**kwargs)
    if isinstance(value, list):
        return tuple(_decode(v) for v in value)
    return value


def to_dict(model: _model.OrderingModel) -> dict[str, Any]:
    """The model as JSON-ready data."""
    encoded = _encode(model)
    assert isinstance(encoded, dict)
    return encoded


def from_dict(data: dict[str, Any]) -> _model.OrderingModel:
    """The model written by :func:`to_dict`."""
    model = _decode(data)
    if not isinstance(model, _model.OrderingModel):
        raise ValueError("not an ordering model")
    return model
