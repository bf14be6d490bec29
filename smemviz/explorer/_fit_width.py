"""Fit the explorer's maps to the width they are given on the page.

This invisible helper, one per explorer, measures the explorer's width in
the browser once it is on the page and whenever it changes, and syncs it to
Python, where the explorer sets it as each map's width through the widgets'
normal update path: the maps fill the explorer and follow it when it is
resized, and the Python-side figures hold the width they are drawn at. It
also makes each map's drawing box a CSS containment boundary.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import Any

__all__ = ["make_fitter", "EXPLORER_CLASS"]

EXPLORER_CLASS = "smemviz-explorer"  # fit_width.js looks the explorer up by this class

_ESM = Path(__file__).with_name("fit_width.js")


@lru_cache(maxsize=1)
def _fitter_class() -> Any | None:
    try:
        import anywidget
        import traitlets
    except ImportError:
        return None

    class MapFitter(anywidget.AnyWidget):
        _esm = _ESM
        width = traitlets.Int(0).tag(sync=True)  # the explorer's width in CSS pixels; 0 until measured

    return MapFitter


def make_fitter() -> Any | None:
    """The helper widget, or ``None`` where anywidget is missing (the maps
    then keep plotly's default width)."""
    cls = _fitter_class()
    return cls() if cls is not None else None
