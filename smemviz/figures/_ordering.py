"""The pipeline diagram of a kernel: who hands which bytes to whom, and through what.

Warp roles are lanes (top to bottom, as the kernel's model lists them). Each
pipeline is a column: an arrow from its producer role to each consumer role for
its full barriers, and one back for its empty barriers, named with the stage
count and init counts in their hover. Each named barrier (``bar.sync``) is a
vertical line through the roles that sync on it. Every alias hangs off the edge
that hands its bytes over (the pipeline barrier or named barrier its chain runs
through; a hand-over inside one role, by ``wait_group`` or ``tcgen05.wait``, in
the "within a role" column; an unordered one, in the error colour, in a column of
its own, between the two roles). A pipeline or named barrier an ordering error
names is drawn in the error colour too.

A declared plan has no roles yet: its diagram lists each hand-over with the edge
it needs. Everything is read from the plan's analysis (the ordering check ran
once there); nothing is checked here.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ._alias_marks import ALIAS_COLORS, DEALLOC, ERROR, edge_lines
from ._spec import FigureSpec
from ._style import FONT, plain

if TYPE_CHECKING:
    from ..analysis._analysed import Analysed
    from ..analysis._finding import Finding
    from ..layout.ordering import OrderingModel, Pipeline

__all__ = ["ordering_spec", "ordering_figure", "ORDERING_TRACES", "ordering_findings", "alias_anchors"]

# trace order (fixed, so a live figure updates in place)
ORDERING_TRACES = ("lanes", "barriers", "named barriers", "alias links", "unordered links", "aliases")
LANE_COLOR = "#b0bec5"
FULL_COLOR = "#1565c0"
EMPTY_COLOR = "#6d4c41"
NAMED_COLOR = "#6a1b9a"
COLUMN = 3.0  # x units per pipeline column
EMPTY_DX = 0.8  # the empty arrow sits this far right of the full one
PAIR_DX = 0.3  # a pipeline's arrows to its next consumer role sit this far right
HANG_DX = 0.3  # an alias hangs this far right of its edge
HANG_DY = 0.24  # and this far under the one before it on the same edge
WITHIN = "within a role"
UNORDERED = "unordered"

_PIPE_BARRIER = re.compile(r"(full|empty) barrier of '([^']+)'")
_NAMED = re.compile(r"bar\.(?:sync|arrive) '([^']+)'|'([^']+)' generation \d+ complete")


def ordering_findings(an: Analysed) -> tuple[Finding, ...]:
    """The ordering rules' findings among the plan's lint findings (as lint reports them:
    an incomplete model's errors are warnings there)."""
    from ..analysis._lint import ORDERING_RULES

    return tuple(f for f in an.findings if f.rule in ORDERING_RULES)


@dataclass
class _Anchor:
    """Where an alias hangs: the column's x, the y of its edge, and its kind."""

    kind: str  # "full", "empty", "named", "within", "unordered"
    name: str  # the pipeline, the named barrier, or the role
    x: float
    y: float
    hung: list[int] = field(default_factory=list)  # the aliases hanging here


def _roles_of(
    model: OrderingModel,
) -> tuple[dict[str, set[str]], dict[str, set[str]], dict[str, set[str]], dict[str, str]]:
    """Per pipeline its producer roles and consumer roles, per named barrier the roles that
    sync on it, and per call site the role whose program holds it."""
    from ..layout.ordering import BarrierSync, PipelineOp, contexts

    producers: dict[str, set[str]] = {}
    consumers: dict[str, set[str]] = {}
    named: dict[str, set[str]] = {}
    site_role: dict[str, str] = {}
    for event, ctx in contexts(model):
        site_role.setdefault(str(ctx.site), ctx.role.name)
        if isinstance(event, PipelineOp):
            side = producers if event.op.startswith("producer") else consumers
            side.setdefault(event.pipeline, set()).add(ctx.role.name)
        elif isinstance(event, BarrierSync):
            named.setdefault(event.barrier, set()).add(ctx.role.name)
    return producers, consumers, named, site_role


def _site(access: str) -> str:
    """The call site of an alias's access text ("umma_read at fmha.py:310")."""
    return access.rsplit(" at ", 1)[-1]


def _pipeline_hover(p: Pipeline, side: str, src: str, dst: str, bad: bool) -> str:
    err = "<br><b>an ordering error names this pipeline</b>" if bad else ""
    if side == "one side":
        what = (
            "no mbarriers: acquire waits the bulk groups in flight (wait_group), commit closes one"
            if p.kind == "tma_store"
            else "no role on its other side in the model's programs"
        )
        return (
            f"<b>{plain(p.name)}</b> ({p.stages} stages, {plain(p.kind)})<br>used by {plain(src)}: {what}"
            f"<br>created at {plain(str(p.site))}{err}"
        )
    count = p.full_init() if side == "full" else p.empty_init()
    what = "the producer fills a stage, the consumer waits it" if side == "full" else "the consumer frees a stage"
    tx = f"<br>expect_tx {p.tx_count:,} B per stage" if side == "full" and p.tx_count else ""
    return (
        f"<b>{plain(p.name)}: {side} barriers</b> ({p.stages} stages, {plain(p.kind)})"
        f"<br>{plain(src)} -> {plain(dst)}: {what}<br>init count {count}{tx}<br>created at {plain(str(p.site))}{err}"
    )


def alias_anchors(an: Analysed) -> list[tuple[str, str]]:
    """Per alias of the check (in its order), the edge it hangs off: ("full" / "empty",
    pipeline), ("named", barrier), ("within", role) or ("unordered", "")."""
    if an.ordering is None or an.plan.ordering is None:
        return []
    *_, site_role = _roles_of(an.plan.ordering)
    out = []
    for a in an.ordering.aliases:
        if not a.ordered:
            out.append((UNORDERED, ""))
            continue
        pipe, named = _PIPE_BARRIER.search(a.edge), _NAMED.search(a.edge)
        first = min((m for m in (pipe, named) if m is not None), key=lambda m: m.start(), default=None)
        if first is None:
            role = site_role.get(_site(a.later_access)) or site_role.get(_site(a.earlier_access), "")
            out.append(("within", role))
        elif first is pipe:
            out.append((pipe.group(1), pipe.group(2)))
        else:
            out.append(("named", first.group(1) or first.group(2)))
    return out


def ordering_spec(obj: Any, arch: Any = None) -> FigureSpec:
    """The pipeline diagram of ``obj`` (a plan carrying an ordering model or declaring its
    accesses, or its :class:`~smemviz.analysis.Analysed`) as plain data."""
    from ..analysis._analysed import as_analysed

    an = as_analysed(obj, arch)
    if an.ordering is not None and an.plan.ordering is not None:
        return _Diagram(an).spec()
    return _needs_spec(an)


def _layout(title: str, subtitle: str, height: int) -> dict[str, Any]:
    return {
        "title": {
            "text": title,
            "subtitle": {"text": subtitle, "font": {"size": 12, "color": "#546e7a"}},
            "x": 0.01,
            "xanchor": "left",
        },
        "height": height,
        "margin": {"l": 150, "r": 30, "t": 90, "b": 30},
        "font": {"family": FONT, "size": 12},
        "plot_bgcolor": "white",
        "paper_bgcolor": "white",
        "showlegend": False,
        "hovermode": "closest",
        "hoverlabel": {"font": {"family": FONT, "size": 12}, "align": "left"},
    }


NAME_CHARS = 40  # a captured kernel's name is its mangled symbol: the title keeps its start


def _short(name: str) -> str:
    return name if len(name) <= NAME_CHARS else name[: NAME_CHARS - 3] + "..."


def _findings_line(found: tuple[Finding, ...]) -> str:
    if not found:
        return "ordering: no findings"
    counts = {s: sum(f.severity == s for f in found) for s in ("error", "warning", "info")}
    return "ordering: " + ", ".join(f"{n} {s}{'' if n == 1 else 's'}" for s, n in counts.items() if n)


def _named_in(f: Finding, name: str) -> bool:
    return name in f.regions or f"{name!r}" in f.message


def _arrow(at: float, y0: float, y1: float, color: str) -> dict[str, Any]:
    """An arrow from lane ``y0`` to lane ``y1`` at column ``at``."""
    return {
        "x": at,
        "y": y1,
        "ax": at,
        "ay": y0,
        "xref": "x",
        "yref": "y",
        "axref": "x",
        "ayref": "y",
        "showarrow": True,
        "arrowhead": 2,
        "arrowsize": 1.2,
        "arrowwidth": 2,
        "arrowcolor": color,
        "standoff": 4,
        "startstandoff": 4,
        "text": "",
    }


def _points(meta: str, name: str, mode: str, **more: Any) -> dict[str, Any]:
    """One of the diagram's scatter traces, its points filled in as it is built."""
    return {"type": "scatter", "mode": mode, "meta": meta, "name": name, "x": [], "y": [], **more}


class _Diagram:
    """The diagram of one checked model, built column by column: pipelines, named
    barriers, then the aliases hung off the edges that hand them over."""

    def __init__(self, an: Analysed) -> None:
        model, report = an.plan.ordering, an.ordering
        assert model is not None and report is not None
        self.model, self.report = model, report
        self.producers, self.consumers, self.named, self.site_role = _roles_of(model)
        self.roles = [p.role for p in model.programs]
        self.lane = {r.name: -float(i) for i, r in enumerate(self.roles)}
        self.found = ordering_findings(an)
        self.errors = [f for f in self.found if f.severity == "error"]
        self.kinds = alias_anchors(an)
        self.annotations: list[dict[str, Any]] = []
        self.anchors: dict[tuple[str, str], _Anchor] = {}
        self.x = 1.0
        text = {"size": 10}
        self.barriers = _points("barriers", "pipeline barriers", "markers+text", text=[], hovertext=[])
        # full's label left of its arrow, empty's right of its own: the two never overlap
        self.barriers.update(textposition=[], textfont={**text, "color": []}, marker={"size": 9, "color": []})
        self.bars = _points("named barriers", "named barriers", "lines+markers", hovertext=[])
        self.bars.update(line={"color": NAMED_COLOR, "width": 3}, marker={"size": 11, "symbol": "square", "color": []})
        self.links = _points("alias links", "alias links", "lines", line={"color": "#90a4ae", "width": 1})
        self.bad_links = _points("unordered links", "unordered", "lines")
        self.bad_links["line"] = {"color": ERROR, "width": 2, "dash": "dash"}
        self.aliases = _points("aliases", "aliases", "markers+text", text=[], hovertext=[])
        self.aliases.update(
            textposition="middle right",
            textfont={"size": 11, "color": []},
            marker={"size": 10, "symbol": "diamond", "color": []},
        )

    def bad(self, name: str) -> bool:
        return any(_named_in(f, name) for f in self.errors)

    def header(self, at: float, text: str, color: str) -> None:
        self.annotations.append(
            {
                "x": at,
                "y": 0.55,
                "xref": "x",
                "yref": "y",
                "yanchor": "bottom",
                "showarrow": False,
                "text": text,
                "font": {"size": 11, "color": color},
            }
        )

    def pipelines(self) -> None:
        order = lambda r: -self.lane.get(r, 0.0)  # noqa: E731 - lanes top to bottom
        for p in self.model.pipelines:
            bad = self.bad(p.name)
            stages = f"{p.stages} stage{'' if p.stages == 1 else 's'}"
            self.header(self.x + EMPTY_DX / 2, f"<b>{plain(p.name)}</b><br>{stages}", ERROR if bad else "#263238")
            producers = sorted(self.producers.get(p.name, ()), key=order)
            consumers = sorted(self.consumers.get(p.name, ()), key=order)
            if not producers or not consumers:  # one side only (a TMA store pipeline has no barriers)
                for role in producers or consumers:
                    y = self.lane.get(role, 0.0)
                    self._barrier(p, "one side", self.x, y, y - 0.45, role, "", bad)
                self.x += COLUMN
                continue
            pairs = [(s, c) for s in producers for c in consumers]
            for k, (s, c) in enumerate(pairs):  # several consumers: each pair of arrows a little right
                ys, yc = self.lane.get(s, 0.0), self.lane.get(c, 0.0)
                if ys == yc:  # one role on both sides: a short arrow under its lane
                    yc = ys - 0.45
                dx = k * PAIR_DX
                self._barrier(p, "full", self.x + dx, ys, yc, s, c, bad, labelled=k == 0)
                self._barrier(p, "empty", self.x + EMPTY_DX + dx, yc, ys, c, s, bad, labelled=k == len(pairs) - 1)
            self.x += COLUMN + PAIR_DX * (len(pairs) - 1)

    def _barrier(  # noqa: PLR0913 - one arrow: its pipeline, side, place, roles and state
        self,
        p: Pipeline,
        side: str,
        at: float,
        y0: float,
        y1: float,
        src: str,
        dst: str,
        bad: bool,
        labelled: bool = True,
    ) -> None:
        color = ERROR if bad else EMPTY_COLOR if side == "empty" else FULL_COLOR
        self.annotations.append(_arrow(at, y0, y1, color))
        mid = (y0 + y1) / 2
        b = self.barriers
        b["x"].append(at)
        b["y"].append(mid)
        b["text"].append(("bulk groups" if p.kind == "tma_store" else side) if labelled else "")
        b["textposition"].append("middle left" if side == "full" else "middle right")
        b["hovertext"].append(_pipeline_hover(p, side, src or "?", dst or "?", bad))
        b["marker"]["color"].append(color)
        b["textfont"]["color"].append(color)
        self.anchors.setdefault((side, p.name), _Anchor(side, p.name, at, mid))

    def named_barriers(self) -> None:
        declared = {b.name: b for b in self.model.barriers}
        for name, who in sorted(self.named.items()):
            ys = sorted((self.lane[r] for r in who if r in self.lane), reverse=True)
            if not ys:
                continue
            bad = self.bad(name)
            b = declared.get(name)
            threads = f", {b.threads} threads" if b is not None else ""
            self.header(self.x, f"<b>{plain(name)}</b><br>bar.sync", ERROR if bad else NAMED_COLOR)
            hover = (
                f"<b>named barrier {plain(name)}</b>{threads}<br>synced by "
                + ", ".join(plain(r) for r in sorted(who, key=lambda r: -self.lane[r]))
                + ("<br><b>an ordering error names this barrier</b>" if bad else "")
            )
            t = self.bars
            t["x"] += [self.x] * len(ys) + [None]
            t["y"] += [*ys, None]
            t["hovertext"] += [hover] * len(ys) + [""]
            t["marker"]["color"] += [ERROR if bad else NAMED_COLOR] * len(ys) + [NAMED_COLOR]
            self.anchors[("named", name)] = _Anchor("named", name, self.x, (ys[0] + ys[-1]) / 2)
            self.x += COLUMN

    def hang_aliases(self) -> float:
        """Every alias on its edge; the x where the diagram ends."""
        within_x, unordered_x = self.x, self.x + COLUMN
        kinds = [k for k, _ in self.kinds]
        if "within" in kinds:
            self.header(within_x, f"<i>{WITHIN}</i>", "#455a64")
        if UNORDERED in kinds:
            self.header(unordered_x, f"<b>{UNORDERED}</b>", ERROR)
        for a, (kind, name) in zip(self.report.aliases, self.kinds):
            hover = (
                f"<b>alias {plain(a.earlier)} -> {plain(a.later)}</b><br>{plain(a.earlier)}: {plain(a.earlier_access)}"
                f"<br>{plain(a.later)}: {plain(a.later_access)}"
            )
            if kind == UNORDERED:
                anchor = self._unordered(a.earlier_access, a.later_access, unordered_x)
                hover += "<br><b>unordered</b>: no edge orders the earlier access before the later write"
                color = ALIAS_COLORS["unordered"]
            else:
                found = self.anchors.get((kind, name)) if kind != "within" else None
                # within a role, or an edge the diagram has no column for: on the role's lane
                anchor = found or self.anchors.setdefault(
                    ("within", name), _Anchor("within", name, within_x, self.lane.get(name, 0.0))
                )
                hover += f"<br>edge: {edge_lines(a.edge)}"
                color = ALIAS_COLORS["ordered"]
            hx, hy = anchor.x + HANG_DX, anchor.y - 0.12 - len(anchor.hung) * HANG_DY
            anchor.hung.append(len(self.aliases["x"]))
            self.links["x"] += [anchor.x, hx, None]
            self.links["y"] += [anchor.y, hy, None]
            t = self.aliases
            t["x"].append(hx)
            t["y"].append(hy)
            t["text"].append(f"{plain(a.earlier)} -> {plain(a.later if a.later != DEALLOC else 'dealloc')}")
            t["hovertext"].append(hover)
            t["marker"]["color"].append(color)
            t["textfont"]["color"].append(color)
        return unordered_x + COLUMN if UNORDERED in kinds else within_x + COLUMN

    def _unordered(self, earlier: str, later: str, at: float) -> _Anchor:
        """The anchor of an unordered alias: a dashed line between the two roles' lanes."""
        r0, r1 = self.site_role.get(_site(earlier), ""), self.site_role.get(_site(later), "")
        y0, y1 = self.lane.get(r0, 0.0), self.lane.get(r1, 0.0)
        key = (UNORDERED, f"{r0}>{r1}")
        if key not in self.anchors:
            self.anchors[key] = _Anchor(UNORDERED, key[1], at, (y0 + y1) / 2)
            self.bad_links["x"] += [at, at, None]
            self.bad_links["y"] += [y0, y1 if y1 != y0 else y0 - 0.45, None]
        return self.anchors[key]

    def spec(self) -> FigureSpec:
        self.pipelines()
        self.named_barriers()
        end = self.hang_aliases()
        roles, lane = self.roles, self.lane
        lanes = _points("lanes", "warp roles", "lines", line={"color": LANE_COLOR, "width": 6}, hoverinfo="skip")
        lanes["x"] = [v for _ in roles for v in (0.0, end, None)]
        lanes["y"] = [v for r in roles for v in (lane[r.name], lane[r.name], None)]
        for t in (self.barriers, self.bars, self.aliases):
            t["hovertemplate"] = "%{hovertext}<extra></extra>"
        for t in (self.links, self.bad_links):
            t["hoverinfo"] = "skip"
        traces = [lanes, self.barriers, self.bars, self.links, self.bad_links, self.aliases]
        lowest = min([-float(len(roles) - 1), *self.aliases["y"], *self.barriers["y"]]) - 0.5
        model = self.model
        layout = _layout(
            f"Ordering of {plain(_short(model.name))}: {len(roles)} warp roles, {len(model.pipelines)} pipelines, "
            f"{len(self.report.aliases)} aliases",
            _findings_line(self.found),
            max(260, int(120 + 90 * (0.8 - lowest))),
        )
        layout["xaxis"] = {"range": [-0.3, end + 1.5], "visible": False, "fixedrange": True}
        layout["yaxis"] = {
            "range": [lowest, 1.2],
            "tickvals": [lane[r.name] for r in roles],
            "ticktext": [
                f"<b>{plain(r.name)}</b>" + (f"<br>{r.warp_text()}" if r.warp_text() != r.name else "") for r in roles
            ],
            "showgrid": False,
            "zeroline": False,
            "fixedrange": True,
        }
        layout["annotations"] = self.annotations
        return FigureSpec(traces, layout, {"anchors": self.kinds, "errors": len(self.errors)})


def _needs_spec(an: Analysed) -> FigureSpec:
    """A declared plan's hand-overs, one row each, with the edge each needs (or, without a
    plan's needs, an empty diagram that says there is no ordering to show)."""
    needs = an.needs
    rows: list[tuple[str, str, str, str]] = []  # (earlier, later, state, text)
    if needs is not None:
        rows += [(n.earlier, n.later, "needed", n.line()) for n in needs.needs]
        rows += [
            (a, b, "undeclared", f"{a} -> {b} over it: declare the access kinds of both to see the edge it needs")
            for a, b in needs.unknown
        ]
    ys = [-1.2 * i for i in range(len(rows))]
    colors = [ALIAS_COLORS[s] for _, _, s, _ in rows]
    # the edge written under each hand-over too: a static image has no hover
    labels = [f"<b>{plain(a)} -> {plain(b)}</b><br>{_wrapped(text.split(': ', 1)[-1])}" for a, b, _, text in rows]
    empty: dict[str, Any] = {"type": "scatter", "mode": "lines", "x": [], "y": [], "hoverinfo": "skip"}
    traces = [
        {**empty, "meta": "lanes", "name": "warp roles"},
        {**empty, "meta": "barriers", "name": "pipeline barriers"},
        {**empty, "meta": "named barriers", "name": "named barriers"},
        {**empty, "meta": "alias links", "name": "alias links"},
        {**empty, "meta": "unordered links", "name": "unordered"},
        {
            "type": "scatter",
            "mode": "markers+text",
            "meta": "aliases",
            "name": "aliases",
            "x": [0.0] * len(rows),
            "y": ys,
            "text": labels,
            "textposition": "middle right",
            "textfont": {"size": 11, "color": colors},
            "cliponaxis": False,
            "hovertext": [plain(text) for *_, text in rows],
            "hovertemplate": "%{hovertext}<extra></extra>",
            "marker": {"size": 10, "symbol": "diamond", "color": colors},
        },
    ]
    title = (
        f"Ordering a declared plan needs: {len(rows)} hand-over{'' if len(rows) == 1 else 's'} (no kernel yet: no warp roles)"
        if rows
        else "No ordering to show: the plan carries no ordering model and declares no hand-over"
    )
    layout = _layout(title, "each hand-over with the edge it needs", max(220, 130 + 60 * len(rows)))
    layout["margin"]["l"] = 30
    layout["xaxis"] = {"range": [-0.02, 1.0], "visible": False, "fixedrange": True}
    layout["yaxis"] = {"range": [min(ys, default=0.0) - 0.8, 0.8], "visible": False, "fixedrange": True}
    layout["annotations"] = []
    return FigureSpec(traces, layout, {"anchors": [], "errors": 0})


WRAP_CHARS = 90  # a needed edge's text, wrapped at words to about this many characters a line


def _wrapped(text: str) -> str:
    lines: list[str] = []
    for word in plain(text).split(" "):
        if lines and len(lines[-1]) + 1 + len(word) <= WRAP_CHARS:
            lines[-1] += " " + word
        else:
            lines.append(word)
    return "<br>".join(lines)


def ordering_figure(obj: Any, arch: Any = None) -> Any:
    """The pipeline diagram of a kernel: warp roles as lanes, each pipeline's full and empty
    barriers as arrows between its producer and consumer roles, named barriers, and every
    alias hanging off the edge that hands its bytes over (an unordered one, and a pipeline
    or barrier an ordering error names, in the error colour).

    ``obj`` is a plan carrying an ordering model (a captured kernel's) or declaring its
    accesses, or its :class:`~smemviz.analysis.Analysed`; the ordering check is read from
    the analysis, not run again. Returns a ``plotly.graph_objects.Figure``."""
    return ordering_spec(obj, arch).to_figure()
