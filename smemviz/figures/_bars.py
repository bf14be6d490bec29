"""Region blocks as a few bulk bar traces (one bar per region, offsets in
``base=``), shared by the SMEM and TMEM maps.

One trace per kind of block, always present and in the same order, even when
empty: the explorer updates traces in place by position.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from ._alias_marks import alias_trace
from ._geometry import Lane, gaps, lanes
from ._hover import region_hover, region_label
from ._style import KIND_COLORS, family_of, fmt_units, plain, region_colors

if TYPE_CHECKING:
    from ..analysis._lint import Finding
    from ..layout._plan import LayoutPlan, Region
    from ._alias_marks import AliasMark

__all__ = ["region_traces", "TRACE_NAMES", "widened", "spread", "marker_xs", "moved_markers"]

# trace order; the explorer and the tests rely on it
TRACE_NAMES = (
    "padding",
    "data",
    "aliased",
    "barrier",
    "tmem_ptr",
    "small",
    "groups",
    "group labels",
    "stages",
    "findings",
    "leaders",
    "ordering",
)
FINDING_COLORS = {"error": "#c62828", "warning": "#ef6c00", "info": "#546e7a"}

DIM_STANDALONE = 0.35
DIM_OTHER_PHASE = 0.15
MARKER_Y = -0.13  # band units: barrier markers sit just under the band,
SLOT_Y = -0.32  # the TMEM-pointer slot's marker under them (they are often neighbours): a row of its own
MARKER_PX = 15  # big enough to find and hover: a few bytes are otherwise invisible
LABEL_Y = 1.1  # group labels just above the band
AXIS_END = 1.01  # the maps' address axes run to this share of their span
# Every data bar is drawn at least this share of the axis wide, so a 32 B
# region next to 64 KiB ones stays visible and hoverable; the hover and the
# subtitle say it is not to scale. Markers (barriers, the TMEM-pointer slot)
# sit at least MARKER_GAP of the axis apart: one each, never one on another.
MIN_BAR_FRACTION = 0.0035  # 3 px on a 900 px map, 1.5 px at 400 px
MARKER_GAP = 0.045  # 18 px on a 400 px map
MARKER_FAN = 0.25  # the widest a cluster of markers spreads, as a share of the axis
# A marker drawn further than this share of the axis from its bytes (spread apart
# from its neighbours, or kept off the plot's edge, where it would be cut in half)
# gets a leader line from it to its bytes at the band's lower edge; its hover and
# the map's subtitle say that markers were moved.
MARKER_MOVED = 0.004  # under 4 px on a notebook-wide map
LEADER_COLOR = "#78909c"
MOVED = "<br><i>marker drawn apart from its neighbours: the line leads to its bytes</i>"
NOT_TO_SCALE = "<br><i>drawn wider than its size (not to scale)</i>"

# A label is drawn only on a bar that can hold it on a notebook-wide plot;
# a bar too narrow for its name gets its stage number when that fits. Plotly
# measures and fits every inside label on every redraw (most of the redraw
# time at a few hundred regions), and hides those that do not fit anyway.
LABEL_PLOT_PX = 900
MIN_CHAR_PX = 5.0  # a character at the 9 px minimum label size


def _opacity(region: Region, highlight: tuple[int, int] | None) -> float:
    if highlight is None:
        return 1.0
    if region.group is None:
        return DIM_STANDALONE
    return 1.0 if (region.group, region.phase) == tuple(highlight) else DIM_OTHER_PHASE


def min_drawn(span: float) -> float:
    """The narrowest a data bar is drawn, in axis units: a few pixels on a narrow map."""
    return max(span, 1) * MIN_BAR_FRACTION


def widened(plan: LayoutPlan, span: float | None = None) -> int:
    """How many data regions are drawn wider than their size (not to scale)."""
    least = min_drawn(float(plan.total if span is None else span))
    return sum(1 for r in plan.regions if r.kind == "data" and 0 < r.size < least)


def spread(xs: list[float], gap: float, limit: float, lo: float | None = None, hi: float | None = None) -> list[float]:
    """Marker positions at least ``gap`` apart, in the same order, each cluster
    centred on where its members really are, so neighbouring markers never
    hide one another. A cluster that would spread over more than ``limit``
    gets a smaller gap (``limit / (members - 1)``). With ``lo``/``hi``, a
    cluster that would reach past either is moved inside (where it fits)."""
    order = sorted(range(len(xs)), key=lambda i: xs[i])
    clusters: list[tuple[list[int], float, float]] = []  # (members, first position, step)

    def placed(members: list[int]) -> tuple[list[int], float, float]:
        step = gap if len(members) < 2 else min(gap, limit / (len(members) - 1))
        middle = sum(xs[i] for i in members) / len(members)
        first = middle - step * (len(members) - 1) / 2
        if hi is not None:
            first = min(first, hi - step * (len(members) - 1))
        if lo is not None:
            first = max(first, lo)
        return members, first, step

    for i in order:
        clusters.append(placed([i]))
        while len(clusters) > 1:
            (m0, x0, s0), (m1, x1, _) = clusters[-2], clusters[-1]
            if x0 + s0 * (len(m0) - 1) + gap <= x1:
                break
            clusters[-2:] = [placed(m0 + m1)]
    out = list(xs)
    for members, first, step in clusters:
        for k, i in enumerate(members):
            out[i] = first + k * step
    return out


def label_templates(regions: list[Region], span: float) -> list[str]:
    """Per bar: its name where it fits, else its name within its resource
    (``gemm.c_staging`` -> ``c_staging``) where that fits, else its stage
    number where that fits (``a_stage3`` -> ``3``), else nothing (the hover
    and the table name it)."""
    per_px = max(span, 1) / LABEL_PLOT_PX
    out = []
    for r in regions:
        room = r.size / per_px - 4
        if room >= len(r.name) * MIN_CHAR_PX:
            out.append("%{text}")
            continue
        own = r.name.rsplit(".", 1)[-1]
        if own and own != r.name and "%" not in own and room >= len(own) * MIN_CHAR_PX:
            out.append(plain(own))
            continue
        number = family_of(r.name)[1]
        short = "" if number is None else str(number)
        out.append(short if short and room >= len(short) * MIN_CHAR_PX else "")
    return out


def _uniform(shown: list[str], every: list[str]) -> str | list[str]:
    """One value when every label that is shown has it, else the per-bar list."""
    return shown[0] if len(set(shown)) == 1 else every


def _label_color(fill: str, opacity: float) -> str:
    """Dark text on light or dimmed bars, white on dark ones."""
    if opacity < 1.0:
        return "#37474f"
    r, g, b = (int(fill[i : i + 2], 16) for i in (1, 3, 5))
    return "#263238" if 0.299 * r + 0.587 * g + 0.114 * b > 160 else "white"


def _bar(  # noqa: PLR0913 - one bar trace: its regions, their lanes and how they are drawn
    name: str,
    legend: str,
    regions: list[Region],
    plan: LayoutPlan,
    scale: float,
    span: float,
    where: dict[str, Lane],
    highlight: Any,
    color: str | dict[str, str],
    pattern: str = "",
) -> dict[str, Any]:
    least = min_drawn(span) if name in ("data", "aliased") else 0.0
    # bars drawn wider than their size last, so their neighbours do not cover them
    regions = sorted(regions, key=lambda r: 0 < r.size < least)
    templates = label_templates(regions, span)
    fills = [color] * len(regions) if isinstance(color, str) else [color[r.name] for r in regions]
    opacities = [_opacity(r, highlight) for r in regions]
    ys = [where[r.name].center * scale if r.name in where else 0.5 * scale for r in regions]
    hs = [where[r.name].height * scale if r.name in where else float(scale) for r in regions]
    return {
        "type": "bar",
        "orientation": "h",
        "name": legend,
        "meta": name,
        "base": [r.offset for r in regions],
        "x": [max(r.size, least) if r.size else 0 for r in regions],
        "customdata": [r.size for r in regions],  # the true sizes, where ``x`` is widened
        "y": ys,
        "width": hs,
        "text": [region_label(r) for r in regions],
        # arrays only where bars differ: plotly styles a scalar once, an array per bar
        "texttemplate": templates if any(t not in ("%{text}", "") for t in templates) else "%{text}",
        "hovertext": [region_hover(r, plan) + (NOT_TO_SCALE if 0 < r.size < least else "") for r in regions],
        "hovertemplate": "%{hovertext}<extra></extra>",
        "textposition": ["inside" if t else "none" for t in templates],
        "textfont": {
            "color": _uniform(
                [_label_color(c, o) for c, o, t in zip(fills, opacities, templates) if t] or ["white"],
                [_label_color(c, o) for c, o in zip(fills, opacities)],
            )
        },
        "insidetextanchor": "middle",
        "textangle": 0,
        "constraintext": "inside",
        "cliponaxis": True,
        "marker": {
            "color": fills,
            "opacity": opacities,
            "line": {"width": 0.5, "color": "white"},
            # the pattern's background given as one colour: left out, plotly takes the
            # marker's colour array for it and warns "Invalid color specifier" per bar
            "pattern": {
                "shape": pattern,
                "fgcolor": "white",
                "size": 6,
                "solidity": 0.25,
                **({"bgcolor": color} if pattern and isinstance(color, str) else {}),
            },
        },
        "showlegend": True,
    }


def region_traces(
    plan: LayoutPlan,
    scale: float = 1.0,
    highlight: tuple[int, int] | None = None,
    span: float | None = None,
    findings: Iterable[Finding] = (),
    colors: dict[str, str] | None = None,
    aliases: Iterable[AliasMark] = (),
) -> list[dict[str, Any]]:
    """The block traces of one map, in :data:`TRACE_NAMES` order.

    ``aliases`` (see :func:`~smemviz.figures._alias_marks.alias_marks`) are drawn over
    their shared bytes, each with its edge in the hover.

    ``scale`` maps the band ``[0, 1]`` onto the y axis (1 for SMEM, 128 lanes for TMEM);
    ``span`` is the x-axis extent (default: the plan's total), which decides
    which bars are wide enough for a label.
    """
    span = float(plan.total if span is None else span)
    where = lanes(plan)
    standalone: list[Region] = []
    aliased: list[Region] = []
    barriers: list[Region] = []
    slots: list[Region] = []
    for r in plan.regions:
        if r.kind == "barrier":
            barriers.append(r)
        elif r.kind == "tmem_ptr":
            slots.append(r)
        elif r.group is None:
            standalone.append(r)
        else:
            aliased.append(r)
    if colors is None:  # given: a part of a larger layout, coloured as it is there
        colors = region_colors(r.name for r in standalone + aliased)
    unit = plan.unit
    holes = gaps(plan)
    padding = {
        "type": "bar",
        "orientation": "h",
        "name": "padding",
        "meta": "padding",
        "base": [a for a, _ in holes],
        "x": [b - a for a, b in holes],
        "y": [0.5 * scale] * len(holes),
        "width": [scale] * len(holes),
        "hovertext": [f"<b>padding</b><br>{fmt_units(b - a, unit)} at {a:,} (0x{a:x}) to {b:,}" for a, b in holes],
        "hovertemplate": "%{hovertext}<extra></extra>",
        "marker": {
            "color": KIND_COLORS["padding"],
            "pattern": {"shape": "/", "fgcolor": "#90a4ae", "size": 6, "solidity": 0.3},
            "line": {"width": 0},
        },
        "showlegend": True,
    }
    small = barriers + slots
    at = [r.offset + r.size / 2 for r in small]  # where each really is
    drawn = marker_xs(small, span)
    rows = [(MARKER_Y if r.kind == "barrier" else SLOT_Y) * scale for r in small]
    moved = [abs(x - a) > MARKER_MOVED * span for x, a in zip(drawn, at)]
    markers = {
        "type": "scatter",
        "mode": "markers",
        "name": "barrier / TMEM ptr",
        "meta": "small",
        "x": drawn,
        "customdata": at,  # the live map's zoom puts them back over their bytes
        "y": rows,
        "hovertext": [region_hover(r, plan) + (MOVED if m else "") for r, m in zip(small, moved)],
        "hovertemplate": "%{hovertext}<extra></extra>",
        "marker": {
            "symbol": ["triangle-up" if r.kind == "barrier" else "diamond" for r in small],
            "color": [KIND_COLORS[r.kind] for r in small],
            "size": MARKER_PX,
            "line": {"width": 1, "color": "white"},
        },
        "showlegend": False,
        "cliponaxis": True,  # a False here makes plotly hide bars it zoomed past, and not show them again
    }
    groups = plan.groups
    outlines = {
        "type": "bar",
        "orientation": "h",
        "name": "alias group",
        "meta": "groups",
        "base": [g.offset for g in groups],
        "x": [g.size for g in groups],
        "y": [0.5 * scale] * len(groups),
        "width": [1.02 * scale] * len(groups),
        "marker": {"color": "rgba(0,0,0,0)", "line": {"width": 1.5, "color": KIND_COLORS["group"]}},
        "hoverinfo": "skip",
        "showlegend": False,
    }
    labels = {
        "type": "scatter",
        "mode": "text",
        "name": "alias group labels",
        "meta": "group labels",
        "x": [g.offset + g.size / 2 for g in groups],
        "y": [LABEL_Y * scale] * len(groups),
        "text": [f"alias group {g.index + 1} · {len(g.phase_sizes)} phases" for g in groups],
        "hovertext": _group_hovers(plan),
        "hovertemplate": "%{hovertext}<extra></extra>",
        "textfont": {"size": 11, "color": KIND_COLORS["group"]},
        "showlegend": False,
        "cliponaxis": True,  # a False here makes plotly hide bars it zoomed past, and not show them again
    }
    return [
        padding,
        _bar("data", "data", standalone, plan, scale, span, where, highlight, colors),
        _bar("aliased", "aliased (one lane per phase)", aliased, plan, scale, span, where, highlight, colors),
        _bar(
            "barrier", "pipeline mbarriers", barriers, plan, scale, span, where, highlight, KIND_COLORS["barrier"], "x"
        ),
        _bar("tmem_ptr", "TMEM-pointer slot", slots, plan, scale, span, where, highlight, KIND_COLORS["tmem_ptr"], "+"),
        markers,
        outlines,
        labels,
        _stage_marks(standalone + aliased, plan, scale, where),
        _finding_marks(plan, findings, scale),
        _leaders(drawn, at, rows, moved),
        alias_trace(list(aliases), unit, scale),
    ]


def _leaders(drawn: list[float], at: list[float], rows: list[float], moved: list[bool]) -> dict[str, Any]:
    """A thin line from each marker drawn away from its bytes to those bytes, at
    the band's lower edge: a spread marker still points at where it is.
    ``customdata`` holds the x of each point over the marker's own bytes, where
    a zoomed map draws the markers."""
    xs: list[float | None] = []
    ys: list[float | None] = []
    true_xs: list[float | None] = []
    for x, a, y, m in zip(drawn, at, rows, moved):
        if m:
            xs += [x, a, None]
            ys += [y, 0.0, None]
            true_xs += [a, a, None]
    return {
        "type": "scatter",
        "mode": "lines",
        "name": "marker leaders",
        "meta": "leaders",
        "x": xs,
        "y": ys,
        "customdata": true_xs,
        "line": {"color": LEADER_COLOR, "width": 1},
        "hoverinfo": "skip",
        "showlegend": False,
        "cliponaxis": True,
    }


def moved_markers(plan: LayoutPlan, span: float | None = None) -> int:
    """How many barrier and TMEM-pointer markers are drawn away from their bytes
    (each with a leader line to them)."""
    span = float(plan.total if span is None else span)
    small = [r for r in plan.regions if r.kind == "barrier"] + [r for r in plan.regions if r.kind == "tmem_ptr"]
    at = [r.offset + r.size / 2 for r in small]
    return sum(abs(x - a) > MARKER_MOVED * span for x, a in zip(marker_xs(small, span), at))


def _finding_marks(plan: LayoutPlan, findings: Iterable[Finding], scale: float) -> dict[str, Any]:
    """A mark on the top edge of every region a lint finding names, worst finding
    first; hovering it gives the rule, the problem and the fix."""
    by_region: dict[str, list[Finding]] = {}
    for f in findings:
        for name in f.regions:
            by_region.setdefault(name, []).append(f)
    where = {r.name: r for r in plan.regions}
    marked = [(where[name], fs) for name, fs in by_region.items() if name in where]
    return {
        "type": "scatter",
        "mode": "markers",
        "name": "lint findings",
        "meta": "findings",
        "x": [r.offset + r.size / 2 for r, _ in marked],
        "y": [0.97 * scale for _ in marked],
        "hovertext": [
            "<br>".join(
                f"<b>{plain(f.severity)} {plain(f.rule)}</b>: {plain(f.message)}<br>fix: {plain(f.fix)}" for f in fs
            )
            for _, fs in marked
        ],
        "hovertemplate": "%{hovertext}<extra></extra>",
        "marker": {
            "symbol": "x-thin-open",
            "size": 13,
            "line": {"width": 3},
            "color": [FINDING_COLORS.get(fs[0].severity, FINDING_COLORS["info"]) for _, fs in marked],
        },
        "showlegend": False,
        "cliponaxis": True,
    }


STAGE_TICK_AT = 0.32  # stage ticks this share of a lane's height above and below its middle,
STAGE_TICK_PX = 10  # short enough to leave the middle, where the bar's label is, clear


def _stage_marks(regions: list[Region], plan: LayoutPlan, scale: float, where: dict[str, Lane]) -> dict[str, Any]:
    """Two short ticks where each stage after the first begins, one near the top of
    the buffer's lane and one near its foot, inside every buffer that declares its
    stages (the middle is left to the label); hovering one says which stage starts there."""
    xs: list[float] = []
    ys: list[float] = []
    hovers: list[str] = []
    for r in regions:
        n = r.stages or 0
        if n < 2 or r.size % n:
            continue
        per_stage = r.size // n
        lane = where.get(r.name)
        middle, height = (lane.center, lane.height) if lane is not None else (0.5, 1.0)
        for k in range(1, n):
            at = r.offset + k * per_stage
            hover = (
                f"<b>{plain(r.name)}</b><br>stage {k + 1} of {n} starts at {at:,} (0x{at:x})"
                f"<br>{fmt_units(per_stage, plan.unit)} per stage"
            )
            for side in (1, -1):
                xs.append(at)
                ys.append((middle + side * STAGE_TICK_AT * height) * scale)
                hovers.append(hover)
    return {
        "type": "scatter",
        "mode": "markers",
        "name": "stage boundaries",
        "meta": "stages",
        "x": xs,
        "y": ys,
        "hovertext": hovers,
        "hovertemplate": "%{hovertext}<extra></extra>",
        "marker": {
            "symbol": "line-ns",
            "size": STAGE_TICK_PX,
            "line": {"width": 1.5, "color": "rgba(255,255,255,0.9)"},
        },
        "showlegend": False,
        "cliponaxis": True,
    }


def marker_xs(small: list[Region], span: float) -> list[float]:
    """Barrier and slot markers, each row (barriers, the TMEM-pointer slot) spread
    apart along the axis on its own: hover finds each one only if none sits over
    another, and the rows are far enough apart that a barrier and the slot
    never do, so the slot (usually one) stays over its bytes."""
    edge = MARKER_GAP * span / 2  # off the plot's edges: a marker there would be cut in half
    out = [0.0] * len(small)
    for kind in ("barrier", "tmem_ptr"):
        row = [i for i, r in enumerate(small) if r.kind == kind]
        xs = spread(
            [small[i].offset + small[i].size / 2 for i in row],
            MARKER_GAP * span,
            MARKER_FAN * span,
            lo=edge,
            hi=AXIS_END * span - edge,
        )
        for i, x in zip(row, xs):
            out[i] = x
    return out


def _group_hovers(plan: LayoutPlan) -> list[str]:
    """One summary per alias group: span, each phase's size and first members."""
    members: dict[tuple[int, int], list[str]] = {}
    for r in plan.regions:
        if r.group is not None:
            members.setdefault((r.group, r.phase or 0), []).append(r.name)
    unit = plan.unit
    out = []
    for g in plan.groups:
        lines = [
            f"<b>alias group {g.index + 1}</b>",
            f"offset {g.offset:,} (0x{g.offset:x}), {fmt_units(g.size, unit)}",
        ]
        for p, size in enumerate(g.phase_sizes):
            names = members.get((g.index, p), [])
            shown = ", ".join(plain(n) for n in names[:6])
            more = f" (+{len(names) - 6} more)" if len(names) > 6 else ""
            lines.append(f"phase {p + 1}: {fmt_units(size, unit)}: {shown}{more}")
        if g.saved:
            lines.append(f"saves {fmt_units(g.saved, unit)} against no aliasing")
        out.append("<br>".join(lines))
    return out
