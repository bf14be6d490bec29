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
from typing import Any

__all__ = ["make_fitter", "EXPLORER_CLASS"]

EXPLORER_CLASS = "smemviz-explorer"

_ESM = """
const EXPLORER = "%s";

// Each map's drawing box has a fixed size: as a containment boundary, the
// text measurements plotly makes while redrawing lay out that box only, not
// the whole notebook page.
const CONTAIN_ID = "smemviz-contain-maps";
function containMaps() {
  if (document.getElementById(CONTAIN_ID)) return;
  const style = document.createElement("style");
  style.id = CONTAIN_ID;
  style.textContent = "." + EXPLORER + " .js-plotly-plot .svg-container { contain: strict; }";
  document.head.appendChild(style);
}

export default {
  render({ model, el }) {
    el.style.display = "none";
    containMaps();
    let stopped = false;
    let observer = null;
    const report = (root) => {
      const width = Math.floor(root.getBoundingClientRect().width);
      if (width < 100 || Math.abs(width - model.get("width")) < 3) return;  // hidden, or no real change
      model.set("width", width);
      model.save_changes();
    };
    const start = () => {
      if (stopped) return;
      const root = el.closest("." + EXPLORER);
      if (!root) { requestAnimationFrame(start); return; }  // not on the page yet
      observer = new ResizeObserver(() => report(root));
      observer.observe(root);
    };
    start();
    return () => { stopped = true; if (observer) observer.disconnect(); };
  },
};
""" % EXPLORER_CLASS


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
