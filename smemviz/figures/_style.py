"""Colours, text escaping and axis ticks shared by every figure.

Colours come from the region name, so a region keeps its colour when a
control changes the layout around it (colouring by index would reshuffle
every colour on each update). Numbered siblings (``acc0``, ``acc1``,
``smem_a0`` ...) are the common case of names that differ by one character:
their stem picks a palette entry and the number steps through the palette
from there, so siblings do not share a colour.
"""

from __future__ import annotations

import re
import zlib
from functools import lru_cache

from .._names import shown
from .._units import fmt_units, kib_label

__all__ = [
    "PALETTE",
    "KIND_COLORS",
    "color_for",
    "distinct_colors",
    "plain",
    "kib_ticks",
    "fmt_units",
    "FONT",
]

FONT = "Inter, Segoe UI, Helvetica, Arial, sans-serif"

# A qualitative palette with enough contrast for white or black labels.
PALETTE: tuple[str, ...] = (
    "#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#76b7b2", "#edc948",
    "#b07aa1", "#ff9da7", "#9c755f", "#86bcb6", "#8cd17d", "#f1ce63",
    "#a0cbe8", "#ffbe7d", "#d4a6c8", "#499894", "#d37295",
    "#b6992d", "#fabfd2",
)

# Fixed colours for what is not user data, so it never blends with it.
def map_layout(title: str, subtitle: str, margin_left: int) -> dict:
    """Layout settings both memory maps share (a fresh dict each call)."""
    return {
        "title": {"text": title, "subtitle": {"text": subtitle, "font": {"size": 12, "color": "#546e7a"}},
                  "x": 0.01, "xanchor": "left"},
        "barmode": "overlay",
        "height": 320,
        "margin": {"l": margin_left, "r": 20, "t": 80, "b": 75},
        "font": {"family": FONT, "size": 12},
        "plot_bgcolor": "white",
        "paper_bgcolor": "white",
        # at the bottom edge of the figure, under the axis title rather than over it
        "legend": {"orientation": "h", "yref": "container", "yanchor": "bottom", "y": 0.01, "x": 0,
                   "font": {"size": 11}},
        "hovermode": "closest",
        "hoverlabel": {"font": {"family": FONT, "size": 12}, "align": "left"},
        "uniformtext": {"minsize": 9, "mode": "hide"},
    }

KIND_COLORS = {
    "barrier": "#37474f",
    "tmem_ptr": "#6a1b9a",
    "padding": "#cfd8dc",
    "capacity": "#c62828",
    "fits": "#2e7d32",
    "group": "#263238",
    "alloc": "#1565c0",
    "occupancy": "#6d4c41",
}


_NUMBERED = re.compile(r"^(.*?)(\d+)$")
_SIBLING_STEP = 8  # palette entries between x0 and x1: the pairs that far apart contrast most


def _palette_index(name: str) -> int:
    match = _NUMBERED.match(name)
    stem, number = (match.group(1), int(match.group(2))) if match else (name, 0)
    return (zlib.crc32(stem.encode("utf-8", "surrogatepass")) + _SIBLING_STEP * number) % len(PALETTE)


@lru_cache(maxsize=65536)
def color_for(name: str) -> str:
    """A colour that depends only on ``name`` (stable across runs and updates);
    ``x0``, ``x1``, ... get different palette entries."""
    return PALETTE[_palette_index(name)]


def distinct_colors(names: list[str]) -> list[str]:
    """:func:`color_for` of each name, except that a name whose colour equals
    the previous one's takes the next palette entry, so neighbouring blocks
    (``names`` in address order) never merge into one."""
    out: list[str] = []
    for name in names:
        color = color_for(name)
        if out and color == out[-1]:
            color = PALETTE[(_palette_index(name) + 1) % len(PALETTE)]
        out.append(color)
    return out


_ESCAPES = str.maketrans({"&": "&amp;", "<": "&lt;", ">": "&gt;"})


@lru_cache(maxsize=65536)
def plain(text: str) -> str:
    """Text that plotly shows literally: its own markup (``<b>``, ``<a>``, ``<br>``)
    and entities are escaped, so a region name can never inject tags; unprintable
    characters are shown as escapes (see :func:`smemviz._names.shown`)."""
    return shown(text).translate(_ESCAPES)


_STEPS = tuple(2**k for k in range(4, 31))  # 16 B .. 1 GiB


def kib_ticks(span: int, target: int = 10) -> tuple[list[int], list[str]]:
    """Tick positions (a power-of-two step) and labels in KiB over ``[0, span]``."""
    span = max(span, 1)
    step = next((s for s in _STEPS if span / s <= target), _STEPS[-1])
    vals = list(range(0, span + 1, step))
    return vals, [kib_label(v) for v in vals]


