"""Experimental names: useful today, their signatures may still change.

Everything here is also importable from :mod:`smemviz` itself, as it always
was; importing from this module says in the code that the name is not yet
held to the stable face's compatibility.
"""

from __future__ import annotations

import importlib
from typing import Any

from .analysis._max_fit import MaxFit, max_fit
from .layout._compare import compare_layouts, groups_to_lifetimes
from .sources.capture import Capture, CaptureError, capture

__all__ = [
    "groups_to_lifetimes",
    "compare_layouts",
    "max_fit",
    "MaxFit",
    "capture",
    "Capture",
    "CaptureError",
]  # and, drawn with plotly, lifetime_figure and compare_figure

_LAZY = {"lifetime_figure": "smemviz.figures", "compare_figure": "smemviz.figures"}


def __getattr__(name: str) -> Any:
    if name not in _LAZY:
        raise AttributeError(f"module 'smemviz.experimental' has no attribute {name!r}")
    return getattr(importlib.import_module(_LAZY[name]), name)
