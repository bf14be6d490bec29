"""Plotly figures of a layout plan: the SMEM byte map, the TMEM column map and
the bank view. Needs plotly, not ipywidgets.

Each map is drawn with a few bulk bar traces (one bar per region, placed with
``base=``) rather than one shape per region, so thousands of regions draw in
milliseconds. The ``*_spec`` functions give the same figures as plain data;
the explorer uses them to update its widgets in place.
"""

from __future__ import annotations

from ._bank import bank_figure, bank_spec
from ._bank_conflicts import bank_conflict_figure, bank_conflict_spec, conflict_strip_figure
from ._bars import TRACE_NAMES
from ._combined import layout_figure
from ._compare import compare_figure
from ._lifetime import comparison_figure, lifetime_figure, lifetime_spec
from ._smem import smem_figure, smem_spec
from ._spec import FigureSpec
from ._step import step_figure, step_map_spec
from ._style import color_for
from ._tmem import tmem_figure, tmem_spec

__all__ = [
    "smem_figure",
    "tmem_figure",
    "bank_figure",
    "bank_conflict_figure",
    "bank_conflict_spec",
    "conflict_strip_figure",
    "layout_figure",
    "lifetime_figure",
    "lifetime_spec",
    "step_figure",
    "step_map_spec",
    "comparison_figure",
    "compare_figure",
    "smem_spec",
    "tmem_spec",
    "bank_spec",
    "FigureSpec",
    "TRACE_NAMES",
    "color_for",
]
