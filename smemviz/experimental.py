"""Experimental names: useful today, their signatures may still change.

They live only here (the package's face still answers for them for one release,
with a deprecation warning); importing from this module says in the code that
the name is not yet held to the stable face's compatibility. ``capture``, once
experimental, is on the stable face now and stays importable from here.
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
