"""Plotly figures of a layout plan: the SMEM byte map, the TMEM column map, the
bank view and the pipeline diagram of a kernel's ordering. Needs plotly, not ipywidgets.

Each map is drawn with a few bulk bar traces (one bar per region, placed with
``base=``) rather than one shape per region, so thousands of regions draw in
milliseconds. The ``*_spec`` functions give the same figures as plain data;
the explorer uses them to update its widgets in place.
"""

from __future__ import annotations

import importlib
import warnings
from typing import Any

from ._bank_conflicts import bank_conflict_figure, bank_conflict_spec, conflict_strip_figure
from ._bank_plan import access_bank_figure, plan_bank_figure
from ._bars import TRACE_NAMES
from ._combined import layout_figure
from ._compare import compare_figure
from ._lifetime import lifetime_figure, lifetime_spec, totals_figure
from ._ordering import ordering_figure
from ._smem import smem_figure, smem_spec
from ._spec import FigureSpec
from ._step import step_figure, step_map_spec
from ._style import color_for
from ._tmem import tmem_figure, tmem_spec

__all__ = [
    "smem_figure",
    "tmem_figure",
    "bank_conflict_figure",
    "access_bank_figure",
    "plan_bank_figure",
    "bank_conflict_spec",
    "conflict_strip_figure",
    "layout_figure",
    "lifetime_figure",
    "lifetime_spec",
    "step_figure",
    "step_map_spec",
    "totals_figure",
    "compare_figure",
    "ordering_figure",
    "smem_spec",
    "tmem_spec",
    "FigureSpec",
    "TRACE_NAMES",
    "color_for",
]

# replaced names: old name -> (module, its name there, what replaces it); each works for one release and warns
_DEPRECATED: dict[str, tuple[str, str, str]] = {
    "bank_figure": ("._bank", "bank_figure", "bank_conflict_figure (and the explorer's Banks tab)"),
    "bank_spec": ("._bank", "bank_spec", "bank_conflict_spec"),
    "comparison_figure": ("._lifetime", "totals_figure", "totals_figure (the same figure)"),
}


def __getattr__(name: str) -> Any:
    if name not in _DEPRECATED:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    module, attr, instead = _DEPRECATED[name]
    warnings.warn(
        f"smemviz.figures.{name} is deprecated and will be removed in the next release; use {instead}",
        DeprecationWarning,
        stacklevel=2,
    )
    return getattr(importlib.import_module(module, __name__), attr)
