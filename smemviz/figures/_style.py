"""Colours, text escaping and axis ticks shared by every figure.

Colours come from the region name, so a region keeps its colour when a
control changes the layout around it (colouring by index would reshuffle
every colour on each update). Names form families: the stages of one operand
(``a_stage0..3``, ``smem_a0``, ``smem_a1``, ``gemm.a_stage0..3``) share a hue,
shaded by stage, so a map of 24 regions reads as a few operands rather than 24
unrelated colours. Each buffer of a resource is a family of its own
(``gemm.a_stages``, ``gemm.b_stages``, ``gemm.c_staging``): its A, B and C
are different things and get different hues. No two regions of one map share
a colour: once the hues and shades run out (hundreds of regions), further
regions get colours of their own, spread around the colour wheel.
"""

from __future__ import annotations

import colorsys
import re
import zlib
from collections.abc import Iterable
from functools import lru_cache

from .._names import shown
from .._units import fmt_units, kib_label

__all__ = [
    "PALETTE",
    "KIND_COLORS",
    "color_for",
    "family_of",
    "region_colors",
    "shade",
    "plain",
    "kib_ticks",
    "fmt_units",
    "FONT",
]

FONT = "Inter, Segoe UI, Helvetica, Arial, sans-serif"

# A qualitative palette with enough contrast for white or black labels.
PALETTE: tuple[str, ...] = (
    "#4e79a7",
    "#f28e2b",
    "#59a14f",
    "#e15759",
    "#76b7b2",
    "#edc948",
    "#b07aa1",
    "#ff9da7",
    "#9c755f",
    "#86bcb6",
    "#8cd17d",
    "#f1ce63",
    "#a0cbe8",
    "#ffbe7d",
    "#d4a6c8",
    "#499894",
    "#d37295",
    "#b6992d",
    "#fabfd2",
)

# Fixed colours for what is not user data, so it never blends with it.
SUBTITLE_CHARS = 120  # a subtitle line at 12 px on a notebook-wide (900 px) map; plotly does not wrap
SUBTITLE_LINE_PX = 16


def wrapped(text: str, width: int = SUBTITLE_CHARS, sep: str = " · ") -> tuple[str, int]:
    """``text`` broken into lines (``<br>``) of at most ``width`` characters
    between its ``sep``-separated parts, and the number of lines: plotly
    draws a subtitle on one line, off the figure's right edge if it is long."""
    lines: list[str] = []
    for part in text.split(sep):
        if lines and len(lines[-1]) + len(sep) + len(part) <= width:
            lines[-1] += sep + part
        else:
            lines.append(part)
    return "<br>".join(lines), max(1, len(lines))


def map_layout(title: str, subtitle: str, margin_left: int, color: str | None = None) -> dict:
    """Layout settings both memory maps share (a fresh dict each call);
    ``color`` for a title that must stand out (a layout over capacity). A
    long subtitle is wrapped, the top margin grown to hold its lines."""
    subtitle, lines = wrapped(subtitle)
    return {
        "title": {
            "text": title,
            "subtitle": {"text": subtitle, "font": {"size": 12, "color": "#546e7a"}},
            "x": 0.01,
            "xanchor": "left",
            "font": {"color": color or "#263238"},
        },
        "barmode": "overlay",
        "height": 320 + SUBTITLE_LINE_PX * (lines - 1),
        "margin": {"l": margin_left, "r": 20, "t": 80 + SUBTITLE_LINE_PX * (lines - 1), "b": 75},
        "font": {"family": FONT, "size": 12},
        "plot_bgcolor": "white",
        "paper_bgcolor": "white",
        # at the bottom edge of the figure, under the axis title rather than over it
        "legend": {
            "orientation": "h",
            "yref": "container",
            "yanchor": "bottom",
            "y": 0.01,
            "x": 0,
            "font": {"size": 11},
        },
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
_STAGE_WORD = re.compile(r"(?:[_\-.]?(?:stage|stg|s))?[_\-.]?$", re.IGNORECASE)

# Hues for families of regions: mid tones, so shades either way stay readable.
FAMILY_HUES: tuple[str, ...] = (
    "#4e79a7",
    "#f28e2b",
    "#e15759",
    "#76b7b2",
    "#59a14f",
    "#edc948",
    "#b07aa1",
    "#ff9da7",
    "#9c755f",
    "#499894",
)
SHADES = 8  # stage k of a family: darkest at 0, lighter with each stage, repeating after 8
_SHADE_FROM, _SHADE_STEP = -0.28, 0.09


@lru_cache(maxsize=65536)
def family_of(name: str) -> tuple[str, int | None]:
    """``(family, stage number)`` of a region name.

    ``a_stage3``, ``a3``, ``a_s3`` and ``a-3`` are stage 3 of family ``a``
    (``load.a3`` of family ``load.a``); any other name is a family of its own,
    without a number, so a resource's buffers (``load.a``, ``load.b``) are
    told apart.
    """
    match = _NUMBERED.match(name)
    if match is None:
        return name, None
    stem = _STAGE_WORD.sub("", match.group(1)) or match.group(1)
    return stem, int(match.group(2))


def _hue_index(family: str) -> int:
    return zlib.crc32(family.encode("utf-8", "surrogatepass")) % len(FAMILY_HUES)


def shade(color: str, amount: float) -> str:
    """``color`` mixed towards white (``amount`` > 0) or black (< 0)."""
    r, g, b = (int(color[i : i + 2], 16) for i in (1, 3, 5))
    target = 255 if amount > 0 else 0
    a = abs(amount)
    return "#" + "".join(f"{round(c + (target - c) * a):02x}" for c in (r, g, b))


@lru_cache(maxsize=65536)
def _shaded(hue: str, number: int | None) -> str:
    if number is None:
        return hue
    return shade(hue, _SHADE_FROM + _SHADE_STEP * (number % SHADES))


@lru_cache(maxsize=65536)
def color_for(name: str) -> str:
    """A colour that depends only on ``name`` (stable across runs and updates):
    its family's hue, shaded by its stage number, so ``a_stage0..3`` read as
    one operand in four stages."""
    family, number = family_of(name)
    return _shaded(FAMILY_HUES[_hue_index(family)], number)


def region_colors(names: Iterable[str]) -> dict[str, str]:
    """Colours for the regions of one map, by name: each family its own hue
    while there are hues left (a family keeps the hue its name picks unless a
    family earlier in name order took it), shaded by stage; members of a family
    without a number are shaded in name order. A colour already given in this
    map is never given again: the region gets the next unused colour of
    :func:`_wheel` instead."""
    by_family: dict[str, set[str]] = {}
    for n in names:
        by_family.setdefault(family_of(n)[0], set()).add(n)
    taken: set[int] = set()
    out: dict[str, str] = {}
    for family in sorted(by_family):
        index = _hue_index(family)
        if len(taken) < len(FAMILY_HUES):
            while index in taken:
                index = (index + 1) % len(FAMILY_HUES)
        taken.add(index)
        hue = FAMILY_HUES[index]
        members = sorted(by_family[family])
        plain_members = [n for n in members if family_of(n)[1] is None]
        for n in members:
            number = family_of(n)[1]
            if number is None and len(plain_members) > 1:
                number = plain_members.index(n)
            out[n] = _shaded(hue, number)
    used: set[str] = set()
    spare = 0  # the next colour of the wheel to try
    for n in sorted(out):
        if out[n] in used:
            while _wheel(spare) in used:
                spare += 1
            out[n] = _wheel(spare)
        used.add(out[n])
    return out


WHEEL_LIGHTNESS = (0.45, 0.62, 0.33, 0.54)  # mid tones first: white or dark labels stay readable


@lru_cache(maxsize=65536)
def _wheel(k: int) -> str:
    """The ``k``-th colour of an endless sequence of distinct colours: hues a
    golden angle apart, so neighbours in the sequence are far apart on the
    wheel, through a few lightness levels (distinct for tens of thousands)."""
    hue = (0.07 + k * 0.3819660112501051) % 1.0
    lightness = WHEEL_LIGHTNESS[(k // 7) % len(WHEEL_LIGHTNESS)]
    saturation = 0.55 + 0.1 * ((k // 29) % 3)
    r, g, b = colorsys.hls_to_rgb(hue, lightness, saturation)
    return "#" + "".join(f"{round(c * 255):02x}" for c in (r, g, b))


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
