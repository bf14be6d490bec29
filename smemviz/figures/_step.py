"""The byte (or column) map of one step of a layout solved from lifetimes.

At a step, some bytes hold nothing because no region is ever placed there
(alignment padding), others because the regions placed there are not live
at this step. The two are different facts, so they are drawn and named
apart: padding hatched as on every map, bytes not live now plain and pale,
their hover naming whose bytes they are.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from ..analysis._report import some_names
from ._bars import widened
from ._geometry import gaps
from ._smem import smem_spec
from ._spec import FigureSpec
from ._style import KIND_COLORS, fmt_units, plain, region_colors, wrapped
from ._tmem import LANES, tmem_spec

if TYPE_CHECKING:
    from ..layout._plan import LayoutPlan

__all__ = ["step_map_spec", "step_figure", "split_holes", "NOT_LIVE_COLOR"]

NOT_LIVE_COLOR = "#eef2f5"  # paler than padding, unhatched: bytes that are someone's, just not now


def split_holes(plan: LayoutPlan, step: int) -> list[tuple[int, int, bool]]:
    """``(start, end, padding)`` for every stretch the map of ``step`` leaves
    empty, in address order: ``padding`` when no region of the whole layout
    covers it, else False (bytes of regions not live at ``step``)."""
    at = plan.at_step(step)
    never = gaps(plan, end=at.total)
    out: list[tuple[int, int, bool]] = []
    for a, b in gaps(at):
        cursor = a
        for p, q in never:
            if q <= cursor or p >= b:
                continue
            if p > cursor:
                out.append((cursor, p, False))
            out.append((max(p, cursor), min(q, b), True))
            cursor = min(q, b)
        if cursor < b:
            out.append((cursor, b, False))
    return [(a, b, pad) for a, b, pad in out if b > a]


def _holes_trace(trace: dict[str, Any], plan: LayoutPlan, step: int, unit: str, scale: float) -> dict[str, Any]:
    holes = split_holes(plan, step)
    idle = [r for r in plan.data_regions if r.size and not r.live_in(step)]
    hovers = []
    for a, b, pad in holes:
        where = f"{fmt_units(b - a, unit)} at {a:,} (0x{a:x}) to {b:,}"
        if pad:
            hovers.append(f"<b>padding</b><br>{where}<br>no region is placed here at any step")
            continue
        owners = [r.name for r in idle if r.offset < b and a < r.end]
        hovers.append(
            f"<b>not live at {plain(plan.steps[step])}</b><br>{where}"
            f"<br>holds {plain(some_names(owners))} at other steps"
        )
    padding_marker = trace["marker"]
    return {
        **trace,
        "name": "padding / not live",
        "base": [a for a, _, _ in holes],
        "x": [b - a for a, b, _ in holes],
        "y": [0.5 * scale] * len(holes),
        "width": [scale] * len(holes),
        "hovertext": hovers,
        "marker": {
            **padding_marker,
            "color": [KIND_COLORS["padding"] if pad else NOT_LIVE_COLOR for _, _, pad in holes],
            # the hatching's background one colour: left out, plotly takes the colour
            # array above for it and logs "Invalid color specifier" for every bar
            "pattern": {
                **padding_marker["pattern"],
                "shape": ["/" if pad else "" for _, _, pad in holes],
                "bgcolor": KIND_COLORS["padding"],
            },
        },
    }


def step_map_spec(plan: LayoutPlan, step: int | str, arch: Any = None) -> FigureSpec:
    """The map of what is live at ``step`` (a name or an index), coloured as
    the lifetime map colours the whole layout, padding and not-live bytes
    told apart, titled with the step."""
    k = plan.step_index(step)
    at = plan.at_step(k)
    colors = region_colors(r.name for r in plan.regions if r.kind == "data")
    smem = plan.memory == "smem"
    spec = smem_spec(at, arch, colors=colors) if smem else tmem_spec(at, colors=colors)
    traces = list(spec.traces)
    scale = 1.0 if smem else float(LANES)
    traces[0] = _holes_trace(traces[0], plan, k, plan.unit, scale)
    holes = split_holes(plan, k)
    not_live = sum(b - a for a, b, pad in holes if not pad)
    padding = sum(b - a for a, b, pad in holes if pad)
    live = at.data_regions
    unit = plan.unit
    parts = [
        f"{len(live):,} of {len(plan.data_regions):,} regions live",
        f"live data {fmt_units(sum(r.size for r in live), unit)}",
    ]
    if not_live:
        parts.append(f"not live here {fmt_units(not_live, unit)}")
    if padding:
        parts.append(f"padding {fmt_units(padding, unit)}")
    tiny = widened(at, spec.meta["span"])
    if tiny:
        parts.append(f"{tiny:,} tiny {'region' if tiny == 1 else 'regions'} drawn wider (not to scale)")
    subtitle, lines = wrapped(" · ".join(parts))
    was = spec.layout["title"]["subtitle"]["text"].count("<br>") + 1
    grow = 16 * (lines - was)
    # the map's own title without its KiB asides: the step's name makes it long enough
    what = re.sub(r" \([\d.]+ KiB\)", "", spec.layout["title"]["text"])
    title = {
        **spec.layout["title"],
        "text": f"At step {plain(repr(plan.steps[k]))} ({k + 1} of {len(plan.steps)}), {len(live):,} live · " + what,
        "subtitle": {**spec.layout["title"]["subtitle"], "text": subtitle},
    }
    layout = {
        **spec.layout,
        "title": title,
        "height": spec.layout["height"] + grow,
        "margin": {**spec.layout["margin"], "t": spec.layout["margin"]["t"] + grow},
    }
    meta = dict(spec.meta)
    narrow = dict(meta.get("narrow", {}))
    if "title.text" in narrow:
        narrow["title.text"] = f"{plain(plan.steps[k])} · " + narrow["title.text"]
    narrow["title.subtitle.text"] = f"{len(live):,} of {len(plan.data_regions):,} live"
    meta["narrow"] = narrow
    return FigureSpec(traces, layout, {**meta, "live": at.regions, "step": k})


def step_figure(obj: Any, step: int | str, arch: Any = None) -> Any:
    """The byte (or column) map of what is live at ``step`` of a layout solved
    from lifetimes (a ``plotly.graph_objects.Figure``)."""
    from ..sources._inputs import as_plan

    return step_map_spec(as_plan(obj, arch=arch), step, arch).to_figure()
