"""The lifetime map: program steps across, addresses up, one rectangle per
region for each run of steps it is live in, so buffers that share bytes at
different times are seen stacked in the same address band.

Below it, the bytes live at each step; the steps whose live buffers alone
need the most are shaded, since no layout can go below them. Where buffers
that meet pairwise at different steps need more, the subtitle names them. The
peak line says how far the layout is from that bound, or that it is proven
optimal. One bar trace draws every rectangle, one the gaps between live
regions (hatched), one the profile: no shape per region.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..analysis._report import some_names
from ..sources._inputs import as_plan
from ._spec import FigureSpec
from ._style import FONT, KIND_COLORS, fmt_units, plain, region_colors

if TYPE_CHECKING:
    from ..layout._plan import LayoutPlan, Region

__all__ = ["lifetime_spec", "lifetime_figure", "comparison_spec", "totals_figure", "LIFETIME_TRACES"]

# trace order; tests rely on it
LIFETIME_TRACES = ("regions", "gaps", "live bytes")

MAP_DOMAIN = (0.34, 1.0)
PROFILE_DOMAIN = (0.0, 0.22)
BOUND_SHADE = "rgba(255,193,7,0.22)"
STEP_WIDTH = 0.92  # a bar's width in one step; a run of steps first..last is last - first + STEP_WIDTH
# regions shorter than this share of the address axis get no label: at the
# map's height it would be under 9 px and hidden anyway, and each label is
# text the browser measures on every redraw
LABEL_MIN_FRACTION = 0.04
# Regions drawn at least this share of the address axis tall (about 10 px on the
# map's 260 px of addresses: a band the pointer finds), said in their hover and
# in the subtitle. Tiny regions live at a common step are stacked, each drawn
# from where the one below it ends (never one over another), so a bias vector
# and the barriers after it are two bars; a stack taller than STACK_FRACTION
# of the axis draws its members thinner, down to MIN_HEIGHT_FLOOR (3 px).
MIN_HEIGHT_FRACTION = 0.04
MIN_HEIGHT_FLOOR = 0.012
STACK_FRACTION = 0.25
NOT_TO_SCALE = "<br><i>drawn taller than its size (not to scale)</i>"


def _runs(steps: tuple[int, ...]) -> list[tuple[int, int]]:
    """Contiguous runs ``[first, last]`` of sorted step indices."""
    out: list[tuple[int, int]] = []
    for k in steps:
        if out and k == out[-1][1] + 1:
            out[-1] = (out[-1][0], k)
        else:
            out.append((k, k))
    return out


def _step_span(plan: LayoutPlan, first: int, last: int) -> str:
    return plain(plan.steps[first]) if first == last else f"{plain(plan.steps[first])} to {plain(plan.steps[last])}"


def _live_steps(r: Region, n: int) -> tuple[int, ...]:
    return tuple(range(n)) if r.live is None else r.live


def sharing(plan: LayoutPlan) -> dict[str, list[str]]:
    """For each region name, the regions that use some of its bytes at other steps
    (in plan order). Swept in address order: only regions that overlap are compared."""
    n = len(plan.steps)
    regions = [r for r in plan.regions if r.size]
    order = {r.name: k for k, r in enumerate(regions)}
    spans = sorted((r.offset, r.end, sum(1 << k for k in _live_steps(r, n)), r.name) for r in regions)
    out: dict[str, list[str]] = {r.name: [] for r in regions}
    for i, (_, end, live, name) in enumerate(spans):
        for start, _, other_live, other in spans[i + 1 :]:
            if start >= end:
                break
            if not live & other_live:
                out[name].append(other)
                out[other].append(name)
    for names in out.values():
        names.sort(key=order.__getitem__)
    return out


def _gaps(plan: LayoutPlan) -> list[tuple[int, int, int, int]]:
    """(first step, last step, start, end) of every unused stretch below the top
    of what is live, one per run of consecutive steps where it stays the same
    (one hatched bar per run: each bar's hatching is a pattern of its own to
    the browser, so fewer bars draw faster)."""
    open_runs: dict[tuple[int, int], int] = {}  # (start, end) -> first step, for stretches open at the last step
    out: list[tuple[int, int, int, int]] = []
    for k in range(len(plan.steps)):
        here = []
        cursor = 0
        for r in sorted((r for r in plan.data_regions if r.live_in(k) and r.size), key=lambda r: r.offset):
            if r.offset > cursor:
                here.append((cursor, r.offset))
            cursor = max(cursor, r.end)
        still = {}
        for stretch in here:
            still[stretch] = open_runs.pop(stretch, k)
        out.extend((first, k - 1, a, b) for (a, b), first in open_runs.items())
        open_runs = still
    out.extend((first, len(plan.steps) - 1, a, b) for (a, b), first in open_runs.items())
    return sorted(out)


def tiny_bands(plan: LayoutPlan, span: float) -> dict[str, tuple[float, float]]:
    """Where each region under :data:`MIN_HEIGHT_FRACTION` of ``span`` is drawn on the
    address axis: ``(base, height)`` by name. In address order, each starts at its own
    offset or where the last tiny region live at a common step is drawn to end, if
    that is higher: stacked, never one over another. A stack of more than
    :data:`STACK_FRACTION` of ``span`` draws each member thinner (not under
    :data:`MIN_HEIGHT_FLOOR`)."""
    n = len(plan.steps)
    least = MIN_HEIGHT_FRACTION * span
    tiny = sorted((r for r in plan.regions if 0 < r.size < least), key=lambda r: (r.offset, r.index))

    def stacked(height: float) -> tuple[dict[str, tuple[float, float]], int]:
        out: dict[str, tuple[float, float]] = {}
        tops: list[tuple[float, int, int]] = []  # (drawn end, live-step mask, members in its stack)
        deepest = 0
        for r in tiny:
            mask = sum(1 << k for k in _live_steps(r, n))
            below = [(top, depth) for top, m, depth in tops if m & mask and top > r.offset]
            base = max([r.offset, *(top for top, _ in below)])
            depth = 1 + max((d for _, d in below), default=0)
            deepest = max(deepest, depth)
            out[r.name] = (base, max(float(r.size), height))
            tops.append((base + out[r.name][1], mask, depth))
        return out, deepest

    bands, deepest = stacked(least)
    if deepest * least > STACK_FRACTION * span:
        bands, _ = stacked(max(MIN_HEIGHT_FLOOR * span, STACK_FRACTION * span / deepest))
    return bands


def _level(y: float, text: str, color: str, side: str, dash: str | None = None) -> tuple[dict, dict]:
    """A level across the whole plot (the peak, the limit) and its label at the ``side`` end."""
    style: dict[str, Any] = {"color": color, "width": 2}
    if dash is not None:
        style["dash"] = dash
    line = {"type": "line", "xref": "paper", "yref": "y", "x0": 0, "x1": 1, "y0": y, "y1": y, "line": style}
    label = {
        "xref": "paper",
        "yref": "y",
        "x": 1.0 if side == "right" else 0.0,
        "y": y,
        "xanchor": side,
        "yanchor": "bottom",
        "showarrow": False,
        "text": text,
        "font": {"size": 12, "color": color},
    }
    return line, label


def lifetime_spec(plan: LayoutPlan, arch: Any = None) -> FigureSpec:
    """The lifetime map of a plan solved from lifetimes, as plain data."""
    if not plan.steps:
        raise ValueError(
            "the lifetime map needs a layout solved from lifetimes (steps= and live=, or compute_layout(solver=...))"
        )
    unit = plan.unit
    n = len(plan.steps)
    shares = sharing(plan)
    cap = plan.capacity(arch)
    peak = plan.data_total
    span = max(peak, 1, cap.limit)

    # colours by name, neighbours in address order kept apart
    data = sorted((r for r in plan.regions if r.kind == "data"), key=lambda r: r.offset)
    color_of = region_colors([r.name for r in data])
    # one bar per run of steps a region is live in
    xs, widths, bases, heights, colors, hovers, texts = [], [], [], [], [], [], []
    # a 512 B bias among 64 KiB buffers stays a visible, hoverable bar, apart from the barriers after it
    tiny = tiny_bands(plan, span)
    widened_count = 0
    for r in sorted(plan.regions, key=lambda r: r.name in tiny):  # tiny ones last: drawn over their neighbours
        if not r.size:
            continue
        live_names = ", ".join(plain(plan.steps[k]) for k in _live_steps(r, n))
        others = shares.get(r.name, [])
        shared = "<br>shares bytes with " + ", ".join(map(plain, others)) if others else ""
        hover = (
            f"<b>{plain(r.name)}</b><br>offset {r.offset:,}, size {fmt_units(r.size, unit)}"
            f"<br>end {r.end:,}, alignment {r.alignment:,}<br>live: {live_names}{shared}"
        )
        color = KIND_COLORS[r.kind] if r.kind != "data" else color_of[r.name]
        base, height = tiny.get(r.name, (r.offset, r.size))
        if r.name in tiny:
            hover += NOT_TO_SCALE
            widened_count += 1
        for first, last in _runs(_live_steps(r, n)):
            xs.append((first + last) / 2)
            widths.append(last - first + STEP_WIDTH)
            bases.append(base)
            heights.append(height)
            colors.append(color)
            hovers.append(hover)
            texts.append(plain(r.name) if r.size >= LABEL_MIN_FRACTION * span else "")
    gap_list = _gaps(plan)
    profile = plan.live_profile
    bounds = plan.step_bounds
    top_bound = max(bounds, default=0)
    bound_steps = [k for k, b in enumerate(bounds) if b == top_bound]

    traces: list[dict[str, Any]] = [
        {
            "type": "bar",
            "name": "regions",
            "x": xs,
            "width": widths,
            "base": bases,
            "y": heights,
            "marker": {"color": colors, "line": {"color": "white", "width": 1}},
            "text": texts,
            "textposition": "inside",
            "insidetextanchor": "middle",
            "textangle": 0,
            "hovertext": hovers,
            "hoverinfo": "text",
            "xaxis": "x",
            "yaxis": "y",
            "showlegend": False,
        },
        {
            "type": "bar",
            "name": "gaps",
            "x": [(g[0] + g[1]) / 2 for g in gap_list],
            "width": [g[1] - g[0] + STEP_WIDTH for g in gap_list],
            "base": [g[2] for g in gap_list],
            "y": [g[3] - g[2] for g in gap_list],
            "marker": {
                "color": "white",
                "line": {"color": KIND_COLORS["padding"], "width": 1},
                "pattern": {"shape": "/", "fgcolor": KIND_COLORS["padding"], "size": 6},
            },
            "hovertext": [
                f"unused at {_step_span(plan, first, last)}: {fmt_units(b - a, unit)} ({a:,} to {b:,})"
                for first, last, a, b in gap_list
            ],
            "hoverinfo": "text",
            "xaxis": "x",
            "yaxis": "y",
            "showlegend": False,
        },
        {
            "type": "bar",
            "name": "live bytes",
            "x": list(range(n)),
            "y": list(profile),
            "marker": {"color": ["#ffa000" if k in bound_steps else "#90a4ae" for k in range(n)]},
            "hovertext": [
                f"{plain(plan.steps[k])}: {fmt_units(profile[k], unit)} live; alone needs {fmt_units(bounds[k], unit)}"
                for k in range(n)
            ],
            "hoverinfo": "text",
            "xaxis": "x2",
            "yaxis": "y2",
            "showlegend": False,
        },
    ]

    proof = "optimal (proven)" if plan.optimal else f"gap ≤ {fmt_units(plan.gap or 0, unit)}"
    pairwise, stacked = plan.pairwise_bound
    why = (
        f" · {some_names(stacked)} meet pairwise at different steps, so they stack: "
        f"{fmt_units(pairwise, unit)} at least"
        if stacked
        else ""
    )
    peak_text = f"peak {fmt_units(peak, unit)} · lower bound {fmt_units(plan.lower_bound or 0, unit)} · {proof}"
    shapes: list[dict[str, Any]] = [
        {
            "type": "rect",
            "xref": "x",
            "yref": "paper",
            "x0": k - 0.5,
            "x1": k + 0.5,
            "y0": 0,
            "y1": 1,
            "fillcolor": BOUND_SHADE,
            "line": {"width": 0},
            "layer": "below",
        }
        for k in bound_steps
    ]
    line, label = _level(peak, plain(peak_text), "#263238", "right")
    # under the bars: tiny regions drawn at the top of what is live stay in sight
    # over it, and the label sits above any that are drawn past the peak
    line["layer"] = "below"
    top = max([peak, *(b + h for b, h in tiny.values())])
    label["y"] = top
    shapes.append(line)
    annotations: list[dict[str, Any]] = [label]
    if cap.limit > 0:
        line, label = _level(
            cap.limit, f"{cap.arch} limit {fmt_units(cap.limit, unit)}", KIND_COLORS["capacity"], "left", dash="dash"
        )
        shapes.append(line)
        annotations.append(label)
    ticks = {"tickmode": "array", "tickvals": list(range(n)), "ticktext": [plain(s) for s in plan.steps]}
    what = "SMEM" if plan.memory == "smem" else "TMEM"
    layout: dict[str, Any] = {
        "title": {
            "text": f"{what} lifetimes: {n} steps, {len(plan.data_regions)} regions",
            "subtitle": {
                "text": plain(f"solver {plan.solver} · {proof}{why}")
                + (
                    f" · {widened_count:,} tiny {'region' if widened_count == 1 else 'regions'} drawn taller "
                    "(not to scale)"
                    if widened_count
                    else ""
                ),
                "font": {"size": 12, "color": "#546e7a"},
            },
            "x": 0.01,
            "xanchor": "left",
        },
        "barmode": "overlay",
        "bargap": 0,
        "height": 520,
        "margin": {"l": 70, "r": 20, "t": 80, "b": 50},
        "font": {"family": FONT, "size": 12},
        "plot_bgcolor": "white",
        "paper_bgcolor": "white",
        "hovermode": "closest",
        "uniformtext": {"minsize": 9, "mode": "hide"},
        "xaxis": {**ticks, "range": [-0.5, n - 0.5], "anchor": "y", "showgrid": False, "zeroline": False},
        "yaxis": {
            "domain": list(MAP_DOMAIN),
            "range": [0, max(span, top) * 1.06],
            "title": {"text": f"address ({unit})"},
            "gridcolor": "#eceff1",
            "zeroline": False,
        },
        "xaxis2": {**ticks, "range": [-0.5, n - 0.5], "anchor": "y2", "matches": "x", "showgrid": False},
        "yaxis2": {
            "domain": list(PROFILE_DOMAIN),
            "title": {"text": f"live ({unit})"},
            "gridcolor": "#eceff1",
            "rangemode": "tozero",
        },
        "shapes": shapes,
        "annotations": annotations,
    }
    meta = {
        "bound_steps": tuple(bound_steps),
        "pairwise_bound": (pairwise, stacked),
        "sharing": shares,
        "capacity": cap,
    }
    return FigureSpec(traces, layout, meta)


def lifetime_figure(obj: Any, arch: Any = None) -> Any:
    """The lifetime map of an allocator or plan solved from lifetimes
    (a ``plotly.graph_objects.Figure``). Export it with
    ``smemviz.export(plan, "map.svg", figure=lifetime_figure(plan))``; the
    byte map of one step is ``step_figure(plan, step)`` (padding and bytes not live told apart)."""
    return lifetime_spec(as_plan(obj, arch=arch), arch).to_figure()


def comparison_spec(plans: dict[str, LayoutPlan], selected: str | None = None) -> FigureSpec:
    """Totals of several layouts of the same declarations side by side, as
    plain data: one horizontal bar trace (proven optimal ones green), the
    best lower bound among them as a dotted line; ``selected`` outlined."""
    names = list(plans)
    totals = [plans[n].data_total for n in names]
    unit = plans[names[0]].unit if names else "B"
    bounds = [p.lower_bound for p in plans.values() if p.lower_bound is not None]
    trace = {
        "type": "bar",
        "orientation": "h",
        "name": "totals",
        "x": totals,
        "y": names,
        "text": [fmt_units(t, unit) for t in totals],
        "textposition": "auto",
        "marker": {
            "color": ["#90a4ae" if p.optimal is not True else "#2e7d32" for p in plans.values()],
            "line": {"color": ["#263238" if n == selected else "rgba(0,0,0,0)" for n in names], "width": 2},
        },
        "hovertext": [
            f"{plain(n)}: {fmt_units(t, unit)}" + (" (proven optimal)" if plans[n].optimal else "")
            for n, t in zip(names, totals)
        ],
        "hoverinfo": "text",
        "showlegend": False,
    }
    shapes: list[dict[str, Any]] = []
    annotations: list[dict[str, Any]] = []
    if bounds:
        bound = max(bounds)
        shapes.append(
            {
                "type": "line",
                "xref": "x",
                "yref": "paper",
                "x0": bound,
                "x1": bound,
                "y0": 0,
                "y1": 1,
                "line": {"color": "#263238", "dash": "dot"},
            }
        )
        annotations.append(
            {
                "xref": "x",
                "yref": "paper",
                "x": bound,
                "y": 1,
                "xanchor": "left",
                "yanchor": "bottom",
                "showarrow": False,
                "text": f"lower bound {fmt_units(bound, unit)}",
            }
        )
    layout = {
        "title": {"text": "Data total by layout"},
        "height": 120 + 40 * len(names),
        "font": {"family": FONT},
        "plot_bgcolor": "white",
        "margin": {"l": 110, "r": 20, "t": 60, "b": 40},
        "xaxis": {"rangemode": "tozero", "title": {"text": unit}},
        "yaxis": {"categoryorder": "array", "categoryarray": names, "autorange": "reversed"},
        "shapes": shapes,
        "annotations": annotations,
    }
    return FigureSpec([trace], layout, {"names": tuple(names)})


def totals_figure(plans: dict[str, LayoutPlan]) -> Any:
    """Totals of several layouts of the same declarations side by side (e.g.
    :func:`smemviz.compare_layouts`), with the best lower bound among them."""
    return comparison_spec(plans).to_figure()
